// Package hostload reads how busy the machine is: its CPU times from /proc/stat (busy and stolen shares between two readings) and the processes of one program alive.
package hostload

import (
	"fmt"
	"slices"

	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pltlab/pltlab/internal/idlepoll"
)

// CPUTimes are the machine's CPU times summed over its CPUs, in clock ticks, from the "cpu"
// line of /proc/stat (proc(5): user nice system idle iowait irq softirq steal; guest and
// guest_nice are already counted in user and nice): all of them, the idle ones (idle and
// iowait), the stolen ones (steal: time the hypervisor ran something else while a virtual
// CPU of this machine was runnable) and Spin, the time idle-priority spinners used
// (idlepoll.Ticks), which would be idle time without them and is counted as idle.
type CPUTimes struct{ Total, Idle, Steal, Spin uint64 }

// ParseCPUTimes parses stat, the contents of /proc/stat; ok is false when its "cpu" line is
// missing or short.
func ParseCPUTimes(stat string) (t CPUTimes, ok bool) {
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
		t.Total += n
	}
	t.Idle, t.Steal = v[3]+v[4], v[7]
	return t, true
}

// Read returns the machine's CPU times now (ok false where /proc/stat is unreadable).
func Read() (CPUTimes, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUTimes{}, false
	}
	t, ok := ParseCPUTimes(string(b))
	t.Spin = idlepoll.Ticks()
	return t, ok
}

// BusySteal is the share of the machine's CPU time between readings a and b that was busy (not
// idle, this process included, idle-priority spinners not) and that was stolen, in percent of
// all of it (0, 0 when no tick passed).
func BusySteal(a, b CPUTimes) (busyPct, stealPct float64) {
	if b.Total <= a.Total {
		return 0, 0
	}
	total := float64(b.Total - a.Total)
	idle := float64(b.Idle-a.Idle) + float64(b.Spin) - float64(min(a.Spin, b.Spin))
	return 100 * max(total-idle, 0) / total, 100 * float64(b.Steal-a.Steal) / total
}

// Describe names the machine's load: "machine: CPU 97 % busy, 0.4 % stolen by the hypervisor"
// (the one formatter of these two figures, for check failures and late loads alike).
func Describe(busyPct, stealPct float64) string {
	return fmt.Sprintf("machine: CPU %.0f %% busy, %.1f %% stolen by the hypervisor", busyPct, stealPct)
}

// Span measures the machine's busy and stolen shares over a stretch of work: Start it, End it.
type Span struct {
	start CPUTimes
	ok    bool
}

// Start begins a Span now.
func Start() Span {
	t, ok := Read()
	return Span{start: t, ok: ok}
}

// End returns the busy and stolen shares since Start, in percent (0, 0 where /proc/stat is
// unreadable or no tick passed).
func (s Span) End() (busyPct, stealPct float64) {
	if !s.ok {
		return 0, 0
	}
	t, ok := Read()
	if !ok {
		return 0, 0
	}
	return BusySteal(s.start, t)
}

// CountProcs counts the processes of the machine (this PID namespace's /proc) whose executable
// name (/proc/PID/comm) is one of names: for Chromium, "chromium" and its helpers' names.
func CountProcs(names ...string) int {
	return CountProcsBy("comm", func(b []byte) bool { return slices.Contains(names, strings.TrimSpace(string(b))) })
}

// CountProcsBy counts the processes of the machine (this PID namespace's /proc) whose file
// /proc/PID/file ("comm", "cmdline") can be read and matches.
func CountProcsBy(file string, match func([]byte) bool) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), file)); err == nil && match(b) {
			n++
		}
	}
	return n
}
