package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/interop"
)

// TestInteropRefusals: bad input to `pltlab interop` is refused in one line with exit 2
// before any server starts or any file is written.
func TestInteropRefusals(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "i.jsonl")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown server", []string{"--server", "picoquic"}, `bad --server "picoquic": accepted quic-go, ngtcp2`},
		{"server twice", []string{"--server", "quic-go,quic-go"}, `bad --server "quic-go": given twice`},
		{"release outside the history", []string{"--server", "quic-go,quic-go@v0.99.0"}, `bad --server "quic-go@v0.99.0": bad quic-go version "v0.99.0": accepted a release v0.33.0 to v0.66.x`},
		{"release not a version", []string{"--server", "quic-go@latest"}, `bad --server "quic-go@latest": bad quic-go version "latest"`},
		{"unknown case", []string{"--cases", "multiplexing"}, `bad --cases: unknown case "multiplexing"; accepted: all, version-negotiation`},
		{"unknown client", []string{"--client", "picoquic", "--cases", "handshake"}, `bad --client "picoquic": accepted quic-go, ngtcp2`},
		{"chromium as a server", []string{"--server", "chromium"}, `bad --server "chromium": accepted quic-go, ngtcp2, or quic-go@vX.Y.Z`},
		{"client release outside the history", []string{"--client", "quic-go@v0.32.0"}, `bad --client "quic-go@v0.32.0": bad quic-go version "v0.32.0"`},
		{"exchange case twice", []string{"--cases", "retry,handshake,retry"}, `case "retry" given twice`},
		{"case twice", []string{"--cases", "amplification-limit,amplification-limit"}, `given twice`},
		{"zero quiet", []string{"--quiet", "0s"}, "bad --quiet 0s"},
		{"negative window", []string{"--window", "-1s"}, "both must be positive durations"},
		{"bad duration", []string{"--window", "4"}, `invalid argument "4" for "--window"`},
		{"positional", []string{"quic-go"}, `unknown command "quic-go"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, append(append([]string{"interop"}, tt.args...), "--out", out)...)
			wantUsage(t, code, errOut, tt.want)
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("refused, yet wrote %s", entries[0].Name())
			}
		})
	}
}

// TestIntegrationInterop runs `pltlab interop` against the quic-go stack (and ngtcp2's when
// installed) with the two quick cases and reads the records back: one per case and server,
// each naming both versions, judged pass from the evidence it carries; the table goes to
// stdout, and an existing --out is refused without --force.
func TestIntegrationInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers: skipped with -short")
	}
	servers := "quic-go"
	if testenv.Have("gtlsserver") {
		servers += ",ngtcp2"
	}
	out := filepath.Join(t.TempDir(), "interop.jsonl")
	args := []string{"interop", "--server", servers, "--cases", "version-negotiation,initial-under-1200", "--quiet", "500ms", "--out", out}
	code, stdout, errOut := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errOut)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []interop.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r interop.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	if want := 2 * len(strings.Split(servers, ",")); len(recs) != want {
		t.Fatalf("%d records, want %d", len(recs), want)
	}
	for _, r := range recs {
		if r.V != 1 || r.Kind != interop.RecordKind || r.Client != interop.ProbeClient || !strings.HasPrefix(r.Versions["server"], r.Server+" ") ||
			!strings.HasPrefix(r.Versions["client"], interop.ProbeClient) || r.Outcome != interop.Pass || len(r.Observed.Datagrams) < 2 {
			t.Errorf("record %s/%s: %+v", r.Server, r.Case, r)
		}
		if !strings.Contains(stdout, r.Versions["server"]) {
			t.Errorf("table lacks %q:\n%s", r.Versions["server"], stdout)
		}
	}
	if r := recs[0]; r.Server != "quic-go" || r.Case != "version-negotiation" || !strings.HasPrefix(r.Versions["server"], "quic-go v0.") {
		t.Errorf("first record %s %s %q, want quic-go's version-negotiation with a release version", r.Server, r.Case, r.Versions["server"])
	}
	code, _, errOut = runCLI(t, args...)
	wantUsage(t, code, errOut, "--out "+out+" exists: remove it or add --force")
}

// TestIntegrationInteropExchange runs `pltlab interop` with a probe case and two exchange cases,
// the quic-go client against ngtcp2's server through the cases' emulated links (root, tshark
// and ngtcp2 needed; about 10 s), and reads the records back: the probe's client is the probe,
// the exchange cases' the quic-go endpoint, each judged pass from its decrypted capture, and
// the table shows the datagrams each way.
func TestIntegrationInteropExchange(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers: skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("emulated links need root")
	}
	testenv.Require(t, "gtlsserver", "tshark")
	out := filepath.Join(t.TempDir(), "interop.jsonl")
	code, stdout, errOut := runCLI(t, "interop", "--server", "ngtcp2", "--client", "quic-go", "--cases", "version-negotiation,handshake,retry", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var recs []interop.Record
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r interop.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 3 || recs[0].Client != interop.ProbeClient || recs[1].Case != "handshake" || recs[2].Case != "retry" {
		t.Fatalf("records %+v", recs)
	}
	for _, r := range recs[1:] {
		if r.Client != "quic-go" || r.Server != "ngtcp2" || r.Outcome != interop.Pass || r.Observed.Wire == nil || r.Link != "rate=10mbit,rtt=30ms" ||
			r.ClientBuild == nil || !strings.HasPrefix(r.Versions["client"], "quic-go v0.") || !strings.HasPrefix(r.Versions["server"], "ngtcp2 ") {
			t.Errorf("record %s: %+v", r.Case, r)
		}
	}
	if w := recs[2].Observed.Wire; w == nil || !w.TokenEchoed || w.Packets["down retry"] == 0 {
		t.Errorf("retry's wire: %+v", w)
	}
	if !strings.Contains(stdout, " dgr ") && !strings.Contains(stdout, " dgr") {
		t.Errorf("table without datagram counts:\n%s", stdout)
	}
}
