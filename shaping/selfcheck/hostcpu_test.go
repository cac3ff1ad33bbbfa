package selfcheck

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestHostCPU: /proc/stat's "cpu" line gives the busy and stolen shares of the machine's CPU
// time between two readings (proc(5): user nice system idle iowait irq softirq steal, guest
// fields ignored); a missing or short line is not a reading; a failed check's message carries
// them.
func TestHostCPU(t *testing.T) {
	a, ok := readCPUTimes("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n")
	if !ok || a.total != 1000 || a.idle != 850 || a.steal != 0 {
		t.Fatalf("first reading %+v ok %v", a, ok)
	}
	// 1000 ticks later: 300 user, 100 system, 500 idle, 100 stolen.
	b, ok := readCPUTimes("cpu  400 0 150 1300 50 0 0 100 7 0\n")
	if !ok {
		t.Fatal("second reading refused")
	}
	busy, steal := busySteal(a, b)
	if math.Abs(busy-50) > 1e-9 || math.Abs(steal-10) > 1e-9 {
		t.Errorf("busy %.2f %%, steal %.2f %%, want 50 and 10", busy, steal)
	}
	if busy, steal := busySteal(b, b); busy != 0 || steal != 0 {
		t.Errorf("no tick passed: %v %v", busy, steal)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 3", "cpu 1 2 3 x 5 6 7 8"} {
		if _, ok := readCPUTimes(bad); ok {
			t.Errorf("%q read as a reading", bad)
		}
	}
	if _, ok := hostCPU(); !ok && runtime.GOOS == "linux" {
		t.Error("/proc/stat unreadable on Linux")
	}
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
