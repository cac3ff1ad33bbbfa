package selfcheck

import (
	"errors"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestFailureNamesMachine: a failed check's message carries the machine's busy and stolen
// shares.
func TestFailureNamesMachine(t *testing.T) {
	c := result.LinkCheck{HostBusyPct: 97.4, HostStealPct: 12.25, Lines: []result.CheckLine{{Name: "idle RTT median", Measured: "38 ms", Configured: "36 ms", Tolerance: "+1 ms"}}}
	err := Failure(c)
	if !errors.Is(err, ErrFailed) || !strings.HasSuffix(err.Error(), "(machine: CPU 97 % busy, 12.2 % stolen by the hypervisor)") {
		t.Errorf("failure message %q", err)
	}
	c.HostBusyPct, c.HostStealPct = 0, 0
	if strings.Contains(Failure(c).Error(), "machine") {
		t.Errorf("unmeasured machine in %q", Failure(c))
	}
}
