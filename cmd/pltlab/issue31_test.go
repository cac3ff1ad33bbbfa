package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/netem"
)

// kernelProbe answers for a kernel with or without sch_netem, whatever this one has
// (measureSetup.probe).
func kernelProbe(hasNetem bool) func(linkspec.Spec) error {
	return func(spec linkspec.Spec) error {
		if spec.Shaper == linkspec.ShaperNetem && !hasNetem {
			return fmt.Errorf("link %s: %w", spec.Input, shaping.ErrNetemUnavailable)
		}
		return nil
	}
}

// TestViewAddrPort: a port out of range is a usage error (exit 2), not a runtime failure (exit 1
// on 8436f4a).
func TestViewAddrPort(t *testing.T) {
	for _, addr := range []string{":99999", "127.0.0.1:-1", "127.0.0.1:http"} {
		code, _, stderr := runCLI(t, "view", t.TempDir(), "--addr", addr)
		if code != 2 || !strings.Contains(stderr, "bad --addr") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("--addr %s: exit %d, stderr %q; want 2 and one line", addr, code, stderr)
		}
	}
}

// TestNetemRefusedUpFront: shaper=netem on a kernel without sch_netem is refused before
// anything is set up, as a usage error, by run (--dry-run too: it passed on 8436f4a) and by
// link check; on a kernel with it the line is not printed. Both kernels are given to the
// command (measureSetup.probe), so both halves run on any kernel; then the kernel's own probe
// (shaping.Available, as main passes it) gives the half that matches this kernel.
func TestNetemRefusedUpFront(t *testing.T) {
	noStart := func(*cobra.Command, idlepoll.Mode) error { return nil }
	without := measureSetup{start: noStart, probe: kernelProbe(false)}
	for _, args := range [][]string{
		{"run", "--page", "2x10KB", "--link", "carlucci2015,shaper=netem", "--dry-run"},
		{"run", "--page", "2x10KB", "--link", "carlucci2015,shaper=netem", "--out", "-"},
		{"link", "check", "--link", "carlucci2015,shaper=netem"},
	} {
		code, _, stderr := runCLISetup(t, without, args...)
		if code != 2 || !strings.Contains(stderr, "sch_netem") {
			t.Errorf("without sch_netem: %v: exit %d, stderr %q; want 2 naming sch_netem", args, code, stderr)
		}
	}
	with := measureSetup{start: noStart, probe: kernelProbe(true)}
	args := []string{"run", "--page", "2x10KB", "--link", "carlucci2015,shaper=netem", "--dry-run"}
	code, stdout, stderr := runCLISetup(t, with, args...)
	if code != 0 || strings.Contains(stderr, "sch_netem") || stdout == "" {
		t.Errorf("with sch_netem: %v: exit %d, stderr %q; want 0, a plan and no word of sch_netem", args, code, stderr)
	}
	kernel := measureSetup{start: noStart, probe: shaping.Available}
	has := netem.Available() == nil
	code, stdout, stderr = runCLISetup(t, kernel, args...)
	if refused := code == 2 && strings.Contains(stderr, "sch_netem"); refused == has || (has && (code != 0 || stdout == "")) {
		t.Errorf("this kernel (sch_netem %v): %v: exit %d, stderr %q; want it refused exactly when sch_netem is missing", has, args, code, stderr)
	}
}

// TestReproducePrefer: --prefer belongs to --merge: alone it is a usage error.
func TestReproducePrefer(t *testing.T) {
	code, _, stderr := runCLI(t, "reproduce", "carlucci2015", "--prefer", "newest")
	if code != 2 || !strings.Contains(stderr, "--prefer is for --merge") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestTraceNotARegularFile: --link down=trace:/dev/zero names the file and what is accepted
// ("bufio.Scanner: token too long" on 8436f4a).
func TestTraceNotARegularFile(t *testing.T) {
	code, _, stderr := runCLI(t, "link", "check", "--link", "down=trace:/dev/zero,up=10mbit")
	if code != 2 || !strings.Contains(stderr, "/dev/zero is not a regular file") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
