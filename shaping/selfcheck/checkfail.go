package selfcheck

import (
	"errors"
	"fmt"
	"github.com/pltlab/pltlab/internal/hostload"
	"strings"

	"github.com/pltlab/pltlab/result"
)

// ErrFailed is returned (wrapped, see Failure) when a link's self-check finds it
// outside tolerance: the link is refused and nothing is measured through it.
var ErrFailed = errors.New("link self-check failed")

// Failure returns nil for a passing check, otherwise an error wrapping ErrFailed that
// names every failed line: "NAME: measured M, configured C (TOLERANCE)", joined by "; ".
func Failure(c result.LinkCheck) error {
	if c.Pass {
		return nil
	}
	var bad []string
	for _, line := range c.Lines {
		if !line.Pass {
			bad = append(bad, fmt.Sprintf("%s: measured %s, configured %s (%s)", line.Name, line.Measured, line.Configured, line.Tolerance))
		}
	}
	return fmt.Errorf("%w: %s%s", ErrFailed, strings.Join(bad, "; "), machineNote(c))
}

// machineNote is the machine's CPU during check c, for a failure's message: " (machine: CPU 64 %
// busy, 0.4 % stolen by the hypervisor)"; "" when not measured.
func machineNote(c result.LinkCheck) string {
	if c.HostBusyPct == 0 && c.HostStealPct == 0 {
		return ""
	}
	return " (" + hostload.Describe(c.HostBusyPct, c.HostStealPct) + ")"
}
