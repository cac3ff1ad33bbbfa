package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/flows"
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
		{"cubic on quic", []string{"--link", "none", "--flow", "h3:cubic"}, "quic-go runs newreno only"},
		{"bad quic cc", []string{"--link", "none", "--flow", "h3:vegas"}, `QUIC congestion control "vegas"`},
		{"newreno on ngtcp2", []string{"--link", "none", "--h3-stack", "ngtcp2", "--flow", "h3:newreno"}, "accepted: cubic, reno, bbr, bbr2"},
		{"bad stack", []string{"--link", "none", "--h3-stack", "msquic", "--flow", "h3"}, `HTTP/3 stack "msquic"`},
		{"bad cc", []string{"--link", "none", "--flow", "h1:warp"}, `congestion control "warp"`},
		{"too many starts", []string{"--link", "none", "--flow", "h1", "--start", "0s,1s"}, "accepted at most one per flow"},
		{"bad start", []string{"--link", "none", "--flow", "h1", "--start", "soon"}, `bad --start offset "soon"`},
		{"short duration", []string{"--link", "none", "--flow", "h1", "--duration", "10ms"}, "bad --duration"},
		{"zero runs", []string{"--link", "none", "--flow", "h1", "--runs", "0"}, "bad --runs"},
		{"args", []string{"--link", "none", "--flow", "h1", "extra"}, "unknown command"},
		{"duration beyond memory", []string{"--link", "rate=10mbit,rtt=20ms", "--flow", "h1", "--duration", "1000000h"}, "accepted at most"},
		{"50 flows for days", []string{"--link", "none", "--mix", strings.Repeat("h1,", 49) + "h1", "--duration", "100h"}, "accepted at most"},
		{"artifacts under a file", []string{"--link", "none", "--flow", "h1", "--artifacts", "/dev/null/x"}, "bad --artifacts"},
		{"artifacts slowest", []string{"--link", "none", "--flow", "h1", "--artifacts", "ARTDIR", "--artifacts-for", "slowest"}, "flows have no PLT"},
	}
	art := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i, a := range c.args {
				if a == "ARTDIR" {
					c.args[i] = art
				}
			}
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
	if _, err := f.specs(); err == nil || !strings.Contains(err.Error(), "quic-go runs newreno only") {
		t.Fatalf("a bad mix: %v", err)
	}
	f.h3Stack, f.quicCC, f.mixes, f.flows = "ngtcp2", "bbr2", []string{"h1,h3:bbr", "h3,h3:cubic"}, nil
	mixes, err = f.specs()
	if err != nil || flows.Mix(mixes[0]) != "h1:cubic+h3:bbr" || flows.Mix(mixes[1]) != "h3:bbr2+h3:cubic" {
		t.Fatalf("ngtcp2 mixes %v, %v: want h1:cubic+h3:bbr and h3:bbr2+h3:cubic", mixes, err)
	}
}

// TestFlowsDryRun checks that --dry-run prints the seeded schedule and the estimate and sets
// nothing up (no root needed although the link is shaped, no --out written).
func TestFlowsDryRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f.jsonl")
	code, stdout, stderr := runCLI(t, "flows", "--link", "carlucci2015", "--mix", "h3,h1:cubic", "--mix", "h1:cubic,h1:cubic",
		"--duration", "10s", "--runs", "2", "--out", out, "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if n := strings.Count(stdout, "  run "); n != 4 || !strings.Contains(stdout, "estimated ") ||
		!strings.Contains(stdout, "h3:newreno+h1:cubic") || !strings.Contains(stdout, "h1:cubic+h1:cubic") {
		t.Fatalf("dry run printed %d runs:\n%s", n, stdout)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("--dry-run created --out: %v", err)
	}
}

// TestFlowsEmptyOutOfKilledRun checks that an empty --out (what a flows killed before its first
// record leaves) does not block the next run, which writes into it.
func TestFlowsEmptyOutOfKilledRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(out, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "flows", "--link", "none", "--flow", "h2:reno", "--duration", "1s", "--out", out)
	if code != 0 || !strings.Contains(stderr, "exists but is empty") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Fatalf("--out not written: %v", err)
	}
	code, _, stderr = runCLI(t, "flows", "--link", "none", "--flow", "h2:reno", "--duration", "1s", "--out", out)
	if code != 2 || !strings.Contains(stderr, "exists: remove it or add --force") {
		t.Fatalf("a non-empty --out: exit %d, stderr %q; want 2 and a refusal", code, stderr)
	}
}

// TestFlowsFlagsStaleParts checks that a *.part artifact left by a killed process is named at
// the next start with the same --artifacts folder.
func TestFlowsFlagsStaleParts(t *testing.T) {
	art := t.TempDir()
	part := filepath.Join(art, "flows-old", "run-0000", "link.pcapng.part")
	if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(part, []byte("cut"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "flows", "--link", "none", "--flow", "h3", "--duration", "1s", "--artifacts", art,
		"--artifacts-kinds", "qlog", "--name", "new", "--out", "/dev/null")
	if code != 0 || !strings.Contains(stderr, "1 incomplete artifact files") || !strings.Contains(stderr, part) {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	recs, err := os.ReadDir(filepath.Join(art, "new", "run-0000"))
	if err != nil || len(recs) == 0 {
		t.Fatalf("no qlog kept for the h3 flow: %v", err)
	}
}
