package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/quicgo"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/studies"
)

// TestIntegrationStudyEvolutionSmoke runs `reproduce evolution --scale smoke` end to end against
// real builds: three quic-go releases' endpoints (built from the module proxy into the user's
// cache: about 90 s cold, seconds warm) and ngtcp2 where installed, every probe case once, on
// loopback, then the exchange case v2 with two releases (and ngtcp2) as client and as server
// against the endpoint of the release pltlab links, through the emulated link, and one goodput
// run with v0.66.0 as the server (root only; not root, the plan names them as not run). Every line is an interop case whose record names the
// server's exact version and, for a release, its build (era, toolchain, module sum, binary
// digest, the release it reports); no case ends in error; the findings are judged from those
// lines: the implementations differ on amplification-limit where ngtcp2 ran, not testable
// where not; goodput is inconclusive, one run being too few.
func TestIntegrationStudyEvolutionSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	dir := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	code, out, errOut := runCLI(t, "reproduce", "evolution", "--scale", "smoke", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Logf("evolution smoke: %.1f s", time.Since(start).Seconds())
	for _, f := range append(slices.Clone(studies.ReportFiles), "results.jsonl") {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
	recs := readAll(t, filepath.Join(dir, "results.jsonl"))
	servers, exchanges := map[string]int{}, map[string]interop.Outcome{}
	for _, r := range recs {
		if r.Kind != result.KindInterop {
			continue
		}
		var rec interop.Record
		if err := json.Unmarshal(r.Interop, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Outcome == interop.Error {
			t.Errorf("%s > %s %s: error: %s", rec.Client, rec.Server, rec.Case, rec.Reason)
		}
		if rec.Rerun != "" { // a suspected regression's re-run: outside the schedule counted here
			t.Logf("%s > %s %s re-run: %s (%s)", rec.Client, rec.Server, rec.Case, rec.Outcome, rec.Rerun)
			continue
		}
		if rec.Client != interop.ProbeClient {
			exchanges[rec.Client+">"+rec.Server+" "+rec.Case] = rec.Outcome
			if g := rec.Observed.Goodput; rec.Case == studies.GoodputCase && (g == nil || g.Mbps <= 5 || g.Mbps >= 10 || !g.Valid && !strings.Contains(g.InvalidReason, "emulator late")) {
				t.Errorf("%s > %s goodput: %+v", rec.Client, rec.Server, g)
			} else if g != nil {
				t.Logf("%s > %s goodput: %.3f Mbit/s in %.0f ms, valid %v %s", rec.Client, rec.Server, g.Mbps, g.TimeMS, g.Valid, g.InvalidReason)
			}
			continue
		}
		servers[rec.Server]++
		if rec.Outcome == interop.Error {
			t.Errorf("%s %s: error: %s", rec.Server, rec.Case, rec.Reason)
		}
		if v, ok := strings.CutPrefix(rec.Server, "quic-go@"); ok {
			b := rec.Build
			if b == nil || b.Release != v || b.Toolchain == "" || !strings.HasPrefix(b.Sum, "h1:") || len(b.BinarySHA256) != 64 ||
				!strings.HasPrefix(rec.Versions["server"], "quic-go "+v+" ") {
				t.Errorf("%s: build %+v, version %q", rec.Server, b, rec.Versions["server"])
			}
			if era, _ := quicgo.EraOf(v); b != nil && b.Era != era.Name {
				t.Errorf("%s: era %q, want %q", rec.Server, b.Era, era.Name)
			}
		}
	}
	want := map[string]int{"quic-go@v0.40.1": 4, "quic-go@v0.48.2": 4, "quic-go@v0.66.0": 4}
	ngtcp2 := testenv.Have("gtlsserver")
	if ngtcp2 {
		want["ngtcp2"] = 4
	}
	if len(servers) != len(want) {
		t.Errorf("servers %v, want %v", servers, want)
	}
	for s, n := range want {
		if servers[s] != n {
			t.Errorf("%s: %d cases, want %d", s, servers[s], n)
		}
	}
	// The exchange cells, as root: v2 passes with both releases in both roles (RFC 9369's v2
	// is in quic-go from before v0.40.1); ngtcp2 0.12.1 knows only v2's provisional codepoint.
	wantEx := map[string]interop.Outcome{}
	if os.Geteuid() == 0 && testenv.Have("tshark") {
		for _, v := range []string{"quic-go@v0.40.1", "quic-go@v0.66.0"} {
			wantEx[v+">quic-go v2"], wantEx["quic-go>"+v+" v2"] = interop.Pass, interop.Pass
		}
		wantEx["quic-go>quic-go@v0.66.0 goodput"] = interop.Pass
		if ngtcp2 && testenv.Have("gtlsclient") {
			wantEx["ngtcp2>quic-go v2"], wantEx["quic-go>ngtcp2 v2"] = interop.Unsupported, interop.Unsupported
		}
	}
	if !maps.Equal(exchanges, wantEx) {
		t.Errorf("exchange cells %v, want %v", exchanges, wantEx)
	}
	checkEvolutionFindings(t, dir, ngtcp2, len(wantEx) > 0)
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	want2 := []string{"Release x case", "Build provenance", "quic-go@v0.40.1"}
	if len(wantEx) > 0 {
		want2 = append(want2, "v2 as client", "v2 as server", "Goodput", "goodput (Mbit/s)")
	}
	for _, s := range want2 {
		if !strings.Contains(string(md), s) {
			t.Errorf("report.md lacks %q", s)
		}
	}
}

// checkEvolutionFindings checks the smoke's findings.json: the implementations differ on
// amplification-limit where ngtcp2 ran (not testable where not); goodput, one run, is
// inconclusive for too few runs where the exchange cells ran (link), not testable where not.
func checkEvolutionFindings(t *testing.T, dir string, ngtcp2, link bool) {
	t.Helper()
	var fj struct {
		Findings []struct{ ID, Verdict, Evidence string } `json:"findings"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "findings.json"))
	if err := json.Unmarshal(b, &fj); err != nil || len(fj.Findings) != 4 {
		t.Fatalf("findings.json: %v, %d findings", err, len(fj.Findings))
	}
	// Goodput: one run per release at smoke, too few for the finding; not testable without the
	// exchange cases' link.
	switch gp := fj.Findings[3]; {
	case link && (gp.Verdict != string(studies.Inconclusive) || !strings.Contains(gp.Evidence, "too few runs")):
		t.Errorf("goodput: %s: %s", gp.Verdict, gp.Evidence)
	case !link && gp.Verdict != string(studies.NotTestable):
		t.Errorf("goodput without the link: %s: %s", gp.Verdict, gp.Evidence)
	}
	differ := fj.Findings[2]
	switch {
	case ngtcp2 && (differ.Verdict != string(studies.Reproduced) || !strings.Contains(differ.Evidence, "amplification-limit: quic-go@v0.66.0 fail")):
		t.Errorf("differ: %s: %s", differ.Verdict, differ.Evidence)
	case !ngtcp2 && differ.Verdict != string(studies.NotTestable):
		t.Errorf("differ without ngtcp2: %s: %s", differ.Verdict, differ.Evidence)
	}
}

// TestIntegrationQuicGoErasInterop runs `pltlab interop --server quic-go@v0.66.0` (the endpoint
// built from the module proxy, or taken from the cache) with one case: its record names the
// release the binary reports and the build (era, toolchain, module sum, binary digest), and
// the build's progress goes to stderr when the binary is not cached. In make test-studies with
// the quic-go history test.
func TestIntegrationQuicGoErasInterop(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	out := filepath.Join(t.TempDir(), "i.jsonl")
	code, stdout, errOut := runCLI(t, "interop", "--server", "quic-go@v0.66.0", "--cases", "version-negotiation", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var rec interop.Record
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	bd := rec.Build
	if rec.Server != "quic-go@v0.66.0" || rec.Outcome != interop.Pass || bd == nil || bd.Release != "v0.66.0" || bd.Era != "v0.48-v0.66" ||
		!strings.HasPrefix(bd.Sum, "h1:") || len(bd.BinarySHA256) != 64 || !strings.HasPrefix(rec.Versions["server"], "quic-go v0.66.0 (pltlab interop endpoint, go") {
		t.Errorf("record: server %s outcome %s build %+v version %q", rec.Server, rec.Outcome, bd, rec.Versions["server"])
	}
	if !strings.Contains(stdout, "quic-go@v0.66.0: quic-go v0.66.0") {
		t.Errorf("table lacks the version:\n%s", stdout)
	}
}
