// Package cpushield keeps one CPU for pltlab's own process while it measures (pltlab
// --shield-cpu): pltlab's threads (the link emulator's forwarders, the link check's probes, the
// server, the harness) run on that CPU alone, and every other task on the machine, the browser
// pltlab starts included, is moved off it with sched_setaffinity(2). It is the shielding that
// real-time work does with cset shield or isolcpus, made for one command's span and undone
// after it (Stop), or by the next pltlab after a SIGKILL (Recover).
//
// Why: on the development VMs the host stops the virtual CPU that a memory-heavy process runs
// on for 5-55 ms at a time, timer interrupts included, with 0.0 % steal reported, while the
// other virtual CPU runs on (docs/design.md, "Host stalls: judged on their own"); a forwarder on
// the stopped CPU releases its packets that much late, and beside a process that churns 3 GiB
// most link checks are refused. With the CPU shielded, the memory-heavy work runs on the other
// CPUs and the forwarders' CPU is not stopped (docs/design.md, "A shielded CPU", with the
// measurement).
//
// The whole process goes to the shielded CPU, not the forwarders alone: a forwarder that wakes
// needs the Go runtime (a P, the scheduler's lock, the garbage collector's stops), and a thread
// holding those on a stopped CPU stopped the forwarder as surely (measured: with the forwarders
// alone shielded, 0 of 5 checks passed beside the churn; docs/design.md).
//
// The cost: everything else shares the remaining CPUs (on a 2-core machine the browser and
// every other process get one, and the server shares its CPU with the emulator), so a shielded
// load is a load of another setting (result.Env.ShieldCPU) and is never compared with an
// unshielded one silently.
package cpushield

import (
	"fmt"
	"sync/atomic"
	"time"
)

// SweepEvery is how often pltlab moves its new descendants (a browser it started) off the
// shielded CPU while it holds a shield (Shield.Sweep).
const SweepEvery = 100 * time.Millisecond

// current is the shielded CPU plus one while a Shield is held in this process, 0 otherwise.
var current atomic.Int32

// Current returns the CPU this process shields now, and whether it shields one: what a record
// states as env.shield_cpu, and the CPU PinThread pins to.
func Current() (cpu int, ok bool) {
	c := int(current.Load())
	return c - 1, c > 0
}

// CPU returns the shielded CPU for a record (env.shield_cpu), nil when this process holds no
// shield.
func CPU() *int {
	if c, ok := Current(); ok {
		return &c
	}
	return nil
}

// ParseFlag parses a --shield-cpu value: "off" (or "") for no shield, else a CPU number that
// this process may run on while at least one other CPU stays for everything else. The error
// names the value and what is accepted. allowed lists the CPUs this process may use (its
// affinity), in increasing order.
func ParseFlag(s string, allowed []int) (cpu int, on bool, err error) {
	if s == "" || s == "off" {
		return -1, false, nil
	}
	accepted := fmt.Sprintf("off or one of this machine's CPUs %v, with at least one other left for the rest", allowed)
	n, err := parseCPU(s)
	if err != nil {
		return -1, false, fmt.Errorf("--shield-cpu %q: accepted: %s", s, accepted)
	}
	if len(allowed) < 2 {
		return -1, false, fmt.Errorf("--shield-cpu %s: this process may run on %d CPU (%v); a shield needs one for the emulator and at least one for the rest", s, len(allowed), allowed)
	}
	for _, c := range allowed {
		if c == n {
			return n, true, nil
		}
	}
	return -1, false, fmt.Errorf("--shield-cpu %s: accepted: %s", s, accepted)
}

// parseCPU parses a decimal CPU number of at most four digits.
func parseCPU(s string) (int, error) {
	if len(s) == 0 || len(s) > 4 {
		return 0, fmt.Errorf("not a CPU number")
	}
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("not a CPU number")
		}
		n = n*10 + int(r-'0')
	}
	return n, nil
}
