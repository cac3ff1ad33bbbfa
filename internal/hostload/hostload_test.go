package hostload

import (
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCPUTimes: /proc/stat's "cpu" line gives the busy and stolen shares of the machine's CPU
// time between two readings (proc(5): user nice system idle iowait irq softirq steal, guest
// fields ignored); a missing or short line is not a reading.
func TestCPUTimes(t *testing.T) {
	a, ok := ParseCPUTimes("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\n")
	if !ok || a.Total != 1000 || a.Idle != 850 || a.Steal != 0 {
		t.Fatalf("first reading %+v ok %v", a, ok)
	}
	// 1000 ticks later: 300 user, 100 system, 500 idle, 100 stolen.
	b, ok := ParseCPUTimes("cpu  400 0 150 1300 50 0 0 100 7 0\n")
	if !ok {
		t.Fatal("second reading refused")
	}
	busy, steal := BusySteal(a, b)
	if math.Abs(busy-50) > 1e-9 || math.Abs(steal-10) > 1e-9 {
		t.Errorf("busy %.2f %%, steal %.2f %%, want 50 and 10", busy, steal)
	}
	if busy, steal := BusySteal(b, b); busy != 0 || steal != 0 {
		t.Errorf("no tick passed: %v %v", busy, steal)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 3", "cpu 1 2 3 x 5 6 7 8"} {
		if _, ok := ParseCPUTimes(bad); ok {
			t.Errorf("%q read as a reading", bad)
		}
	}
	if _, ok := Read(); !ok && runtime.GOOS == "linux" {
		t.Error("/proc/stat unreadable on Linux")
	}
}

// TestCountProcs: this test binary counts itself once by its own name, a made-up name never.
func TestCountProcs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSpace(string(self))
	if n := CountProcs(name); n < 1 {
		t.Errorf("CountProcs(%q) = %d, want >= 1 (this process)", name, n)
	}
	if n := CountProcs(filepath.Base("pltlab-no-such-program")); n != 0 {
		t.Errorf("a made-up name counted %d", n)
	}
}

// TestBusyStealSpinners: the time idle-priority spinners used counts as idle, so a machine
// they keep awake is not reported busy.
func TestBusyStealSpinners(t *testing.T) {
	a := CPUTimes{Total: 1000, Idle: 100, Spin: 50}
	b := CPUTimes{Total: 2000, Idle: 150, Spin: 850} // 1000 ticks: 50 idle, 800 spinning, 150 working
	if busy, _ := BusySteal(a, b); math.Abs(busy-15) > 1e-9 {
		t.Errorf("busy %.2f %%, want 15 (the spinners' 800 ticks are idle time)", busy)
	}
	if grep := strings.TrimSpace(Describe(15, 0.25)); grep != "machine: CPU 15 % busy, 0.2 % stolen by the hypervisor" && grep != "machine: CPU 15 % busy, 0.3 % stolen by the hypervisor" {
		t.Errorf("Describe = %q", grep)
	}
}
