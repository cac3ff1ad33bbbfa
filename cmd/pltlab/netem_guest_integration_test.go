package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestIntegrationNetemGuestRun loads a page once per protocol (h1, h2, h3) with real Chromium
// through a shaper=netem link, in the qemu guest of make test-netem (PLTLAB_NETEM_GUEST set;
// skipped elsewhere). Under qemu's TCG Chromium runs several times slower than on the host:
// this proves the path works (valid loads, the protocol asked for, every byte), not timing, so
// the link's self-check is skipped (the link check is TestIntegrationNetemGuestCheck's), and
// Chromium gets 5 minutes to start and each load 3 (it took over a minute to start in the
// guest on a loaded 2-core host).
func TestIntegrationNetemGuestRun(t *testing.T) {
	needRootAndChromium(t)
	if os.Getenv("PLTLAB_NETEM_GUEST") == "" {
		t.Skip("runs in the qemu guest of make test-netem (PLTLAB_NETEM_GUEST unset)")
	}
	out := filepath.Join(t.TempDir(), "netem.jsonl")
	evidence := t.TempDir()
	code, stdout, errOut := runCLI(t, "run", "--page", "2x5KB", "--link", "carlucci2015,shaper=netem",
		"--protocols", "h1,h2,h3", "--runs", "1", "--warmup", "0", "--no-link-check", "--launch-timeout", "5m", "--timeout", "3m", "--out", out,
		"--artifacts", evidence, "--artifacts-kinds", "netlog,qlog", "--artifacts-for", "invalid")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errOut)
	}
	seen := map[string]bool{}
	for _, r := range readAll(t, out) {
		if !r.IsLoad() {
			if r.Kind == result.KindHarnessError {
				t.Logf("harness_error for %s: %s", r.Protocol, r.Error)
			}
			continue
		}
		if !r.Valid {
			t.Errorf("%s load invalid: %s", r.Protocol, r.InvalidReason)
			logQUICErrors(t, evidence)
		}
		if r.ObservedProtocol != r.Protocol {
			t.Errorf("%s load went over %q", r.Protocol, r.ObservedProtocol)
		}
		if r.Link.Shaper != "netem" {
			t.Errorf("%s load on shaper %q, want netem", r.Protocol, r.Link.Shaper)
		}
		t.Logf("%s: PLT %.1f ms (TCG guest: function, not timing)", r.Protocol, r.PLTMs)
		seen[r.Protocol] = true
	}
	for _, p := range []string{"h1", "h2", "h3"} {
		if !seen[p] {
			t.Errorf("no %s load in %s (stderr: %.2000s)", p, out, errOut)
			logQUICErrors(t, evidence)
		}
	}
}

// logQUICErrors logs the lines of the NetLogs and qlogs under dir that say why a QUIC
// connection closed (Chromium's QUIC_SESSION_CLOSED and close frames with their error codes and
// details, quic-go's connection_closed), so that a failed h3 load leaves its cause in the log.
func logQUICErrors(t *testing.T, dir string) {
	t.Helper()
	keys := []string{"quic_error", "QUIC_SESSION_CLOSED", "CONNECTION_CLOSE", "connection_closed", "\"error_code\"", "details"}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".json") || strings.HasSuffix(path, ".sqlog")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		n := 0
		for _, line := range strings.Split(string(b), "\n") {
			for _, k := range keys {
				if strings.Contains(line, k) && n < 12 {
					t.Logf("%s: %.400s", filepath.Base(path), line)
					n++
					break
				}
			}
		}
		return nil
	})
}
