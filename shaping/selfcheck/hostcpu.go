package selfcheck

import (
	"os"
	"strconv"
	"strings"
)

// cpuTimes are the machine's CPU times summed over its CPUs, in clock ticks, from the "cpu"
// line of /proc/stat (proc(5): user nice system idle iowait irq softirq steal; guest and
// guest_nice are already counted in user and nice): all of them, the idle ones (idle and
// iowait) and the stolen ones (steal: time the hypervisor ran something else while a virtual
// CPU of this machine was runnable).
type cpuTimes struct{ total, idle, steal uint64 }

// readCPUTimes parses stat, the contents of /proc/stat; ok is false when its "cpu" line is
// missing or short.
func readCPUTimes(stat string) (t cpuTimes, ok bool) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return t, false
	}
	var v [8]uint64
	for i := range v {
		n, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return t, false
		}
		v[i] = n
		t.total += n
	}
	t.idle, t.steal = v[3]+v[4], v[7]
	return t, true
}

// hostCPU returns the machine's CPU times now (ok false where /proc/stat is unreadable).
func hostCPU() (cpuTimes, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, false
	}
	return readCPUTimes(string(b))
}

// busySteal is the share of the machine's CPU time between two readings that was busy (not
// idle, this process included) and that was stolen, in percent of all of it (0, 0 when no
// tick passed).
func busySteal(a, b cpuTimes) (busyPct, stealPct float64) {
	total := float64(b.total - a.total)
	if b.total <= a.total {
		return 0, 0
	}
	return 100 * (total - float64(b.idle-a.idle)) / total, 100 * float64(b.steal-a.steal) / total
}
