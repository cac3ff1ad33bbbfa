package main

import (
	"strings"
	"testing"
	"time"
)

// TestFlowsUsageErrors checks that bad flows command lines exit 2 with one line naming the bad
// value, before anything is set up (no root needed).
func TestFlowsUsageErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no link", []string{"--flow", "h1"}, "missing --link"},
		{"bad link", []string{"--link", "rate=fast", "--flow", "h1"}, "rate"},
		{"no flow", []string{"--link", "none"}, "missing --flow"},
		{"bad protocol", []string{"--link", "none", "--flow", "h4"}, `unknown protocol "h4"`},
		{"cubic on quic", []string{"--link", "none", "--flow", "h3:cubic"}, "only congestion control is newreno"},
		{"bad cc", []string{"--link", "none", "--flow", "h1:warp"}, `congestion control "warp"`},
		{"too many starts", []string{"--link", "none", "--flow", "h1", "--start", "0s,1s"}, "accepted at most one per flow"},
		{"bad start", []string{"--link", "none", "--flow", "h1", "--start", "soon"}, `bad --start offset "soon"`},
		{"short duration", []string{"--link", "none", "--flow", "h1", "--duration", "10ms"}, "bad --duration"},
		{"zero runs", []string{"--link", "none", "--flow", "h1", "--runs", "0"}, "bad --runs"},
		{"args", []string{"--link", "none", "--flow", "h1", "extra"}, "unknown command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"flows"}, c.args...)...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != 2 || len(lines) != 1 || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, stderr, c.want)
			}
		})
	}
}

// TestFlowsLoopback runs one short h2 flow over the unshaped link (no root) and checks the table.
func TestFlowsLoopback(t *testing.T) {
	code, stdout, stderr := runCLI(t, "flows", "--link", "none", "--flow", "h2:reno", "--duration", "1s", "--out", "/dev/null")
	if code != 0 || !strings.Contains(stdout, "h2:reno") || !strings.Contains(stdout, "n/a (unshaped)") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestFlowsMixes checks the mixes built from --flow and --mix and their usage errors.
func TestFlowsMixes(t *testing.T) {
	f := flowsFlags{link: "none", flows: []string{"h1"}, mixes: []string{"h3,h2:reno"}, starts: "0s,2s",
		duration: 10 * time.Second, bin: 100 * time.Millisecond, runs: 1}
	mixes, err := f.specs()
	if err != nil || len(mixes) != 2 {
		t.Fatalf("specs: %v, %v", mixes, err)
	}
	if len(mixes[0]) != 1 || mixes[0][0].String() != "h1:cubic" || mixes[1][1].String() != "h2:reno" || mixes[1][1].Start != 2*time.Second {
		t.Fatalf("mixes %+v", mixes)
	}
	f.starts = ""
	f.mixes = []string{"h1:cubic"}
	if _, err := f.specs(); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("a repeated mix: %v", err)
	}
	f.mixes = []string{"h1,h3:bbr"}
	if _, err := f.specs(); err == nil || !strings.Contains(err.Error(), "bad --mix") {
		t.Fatalf("a bad mix: %v", err)
	}
}
