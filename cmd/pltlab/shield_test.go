package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/internal/idlepoll"
)

// TestShieldCPUFlagRefused: a --shield-cpu that is not off or one of this machine's CPUs (with
// another left) is one line naming the value and what is accepted, exit 2, before anything
// starts.
func TestShieldCPUFlagRefused(t *testing.T) {
	started := false
	start := func(*cobra.Command, idlepoll.Mode) error { started = true; return nil }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--shield-cpu", "4096", "link", "check", "--link", "none"}, `--shield-cpu 4096: accepted: off or one of this machine's CPUs [`},
		{[]string{"--shield-cpu", "x", "run", "--page", "2x10KB", "--link", "none"}, `--shield-cpu "x": accepted: off or one of this machine's CPUs [`},
		{[]string{"--shield-cpu", "-1", "flows", "--link", "none"}, `--shield-cpu "-1": accepted`},
	} {
		code, _, stderr := runCLIWith(t, start, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
	if started {
		t.Error("a refused --shield-cpu started the idle-poll spinners")
	}
}
