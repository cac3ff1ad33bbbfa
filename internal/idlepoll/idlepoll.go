// Package idlepoll keeps the machine's CPUs from halting while pltlab measures: one spinning process of the lowest scheduling priority (SCHED_IDLE) pinned to each CPU.
//
// A virtual machine's idle CPU halts, and the hypervisor then takes its time to run it again
// when a timer or another CPU wakes it: 1-8 ms when the host's cores are busy, measured on the
// development VM (a SCHED_FIFO thread sleeping 1 ms at a time overslept by more than 2 ms
// about twice a second, by up to 8 ms, and the emulator's releases and the link check's probes
// were as late). A CPU that runs an idle-priority spinner never halts, so a wake-up is the
// guest kernel's own (microseconds), and the spinner yields to every other thread at once: a
// SCHED_IDLE task weighs 3 against a nice-0 task's 1024 (kernel/sched/core.c,
// sched_prio_to_weight), and a real-time thread preempts it outright. This is the guest-side
// equivalent of idle=poll or a cpu_dma_latency of 0, which a process cannot set where the kernel
// has no cpuidle driver. The cost is power: the machine's CPUs are busy from the host's view
// for as long as the spinners run.
//
// The spinners also see the host take a virtual CPU away (a freeze, Freeze), while their CPU is
// idle; a real-time watcher per CPU (watcher_linux.go), which sleeps to a deadline every
// WatchPeriod, sees it while the CPU is busy. Stolen tells a caller how much of an interval the
// host held a CPU.
package idlepoll

import "sync/atomic"

// active is the number of CPUs kept awake now (Start, Stop).
var active atomic.Int32

// Active is the number of CPUs a Keeper keeps from halting now, in this process (0 when none):
// what a record states as env.idle_poll_cpus.
func Active() int { return int(active.Load()) }

// Mode is the --idle-poll choice: Auto (on under a hypervisor, Virtual), On or Off.
type Mode string

// The modes.
const (
	Auto Mode = "auto"
	On   Mode = "on"
	Off  Mode = "off"
)

// ParseMode parses "auto", "on" or "off"; the error names the value and what is accepted.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Auto, On, Off:
		return m, nil
	}
	return "", errBadMode(s)
}

type errBadMode string

func (e errBadMode) Error() string {
	return "bad --idle-poll " + string(e) + ": accepted auto, on, off"
}

// Wanted reports whether mode m asks for spinners on this machine.
func (m Mode) Wanted() bool { return m == On || m == Auto && Virtual() }
