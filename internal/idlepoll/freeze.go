package idlepoll

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// Freeze is a stretch of time in which the spinner of one CPU saw its CPU taken from the guest:
// between two of the spinner's consecutive clock readings (a loop of a few system calls) more
// time passed than the guest can account for (stolenIn), that is the hypervisor held the
// virtual CPU.
type Freeze struct {
	// CPU is the virtual CPU that was taken.
	CPU int
	// Start and End bound the spinner's gap (two consecutive clock readings) the freeze lay in.
	Start, End time.Time
	// Stolen is the part of End-Start neither run by the spinner nor spent waiting for the CPU
	// in the guest: the time the hypervisor held the virtual CPU (<= End-Start).
	Stolen time.Duration
	// Spinner is true when a spinner reported it, false when the CPU's watcher did. A spinner's
	// report rests on its CPU time and run-queue wait, which a SCHED_IDLE thread under a CPU hog
	// does not account reliably (freezes of 0.6-1.5 s at 0 % steal beside a busy loop, measured
	// 2026-12-06), so only a watcher's report explains lateness (Stolen); a watcher's rests on its
	// timer interrupt coming late while it did not wait for the CPU, which only a stopped
	// virtual CPU makes (docs/design.md, "Host stalls: judged on their own").
	Spinner bool
}

// FreezeMin is the smallest freeze a spinner reports: shorter gaps are the guest's own
// (interrupts, the spinner's own preemption) or too short to move a release past the bound.
const FreezeMin = 300 * time.Microsecond

// GuestIRQMax is the most CPU time the guest's own interrupt work can charge to the spinner
// in one gap between its clock readings: the kernel runs softirqs at an interrupt's exit for
// at most 2 ms (MAX_SOFTIRQ_TIME, kernel/softirq.c) and then hands them to ksoftirqd, an
// ordinary thread that preempts the spinner (so its time shows as the spinner's run-queue
// wait); hard interrupt handlers take microseconds.
const GuestIRQMax = 2 * time.Millisecond

// stolenIn is how much of a gap between a spinner's consecutive clock readings the hypervisor
// held the virtual CPU, given the spinner's run-queue wait and its own CPU time
// (CLOCK_THREAD_CPUTIME_ID) over the gap; 0 when that is FreezeMin or less.
//
// The wait is time other threads of the guest ran on the CPU while the spinner was runnable;
// it never counts. The spinner's own CPU time is, apart from its loop of a few system calls,
// interrupt work charged to it (no CONFIG_IRQ_TIME_ACCOUNTING) and hypervisor time the guest
// was not told was stolen: measured here, a gap of 8.66 ms in which the spinner was charged
// 8.27 ms of CPU while a SCHED_FIFO sleeper on the same CPU woke 8.47 ms late (and another of
// 8.62 ms charged 0.65 ms, the hypervisor having reported that one as steal). So the CPU time
// is trusted as the guest's own only up to GuestIRQMax: the rest can only be the hypervisor's.
func stolenIn(gap, cpu, wait time.Duration) time.Duration {
	s := gap - max(wait, 0) - min(max(cpu, 0), GuestIRQMax)
	if s <= FreezeMin {
		return 0
	}
	return min(s, gap)
}

// keepFreezes is how many freezes are kept per CPU (the newest): at the 2-8 per second measured
// on the development VM, several minutes.
const keepFreezes = 4096

var (
	freezeMu sync.Mutex
	freezes  = map[int][]Freeze{} // per CPU, oldest first
)

// AddFreeze records f as a spinner's report is recorded: the spinners' readers call it, and
// tests that need a freeze on a machine whose host makes none.
func AddFreeze(f Freeze) {
	freezeMu.Lock()
	defer freezeMu.Unlock()
	l := append(freezes[f.CPU], f)
	if len(l) > keepFreezes {
		l = slices.Delete(l, 0, len(l)-keepFreezes)
	}
	freezes[f.CPU] = l
}

// ResetFreezes forgets every freeze recorded (tests).
func ResetFreezes() {
	freezeMu.Lock()
	defer freezeMu.Unlock()
	clear(freezes)
}

// Stolen returns how much of [from, to] the hypervisor is known to have held virtual CPU cpu:
// for each freeze of cpu that a watcher reported (not Spinner), the overlap of [from, to] with the freeze's gap, at most the freeze's
// Stolen; summed over freezes that do not overlap one another, and the largest of those that
// do (a CPU's spinner and its watcher may both see one freeze). 0 when nothing watched cpu then
// (idle poll off, or another CPU).
func Stolen(cpu int, from, to time.Time) time.Duration {
	if !to.After(from) {
		return 0
	}
	freezeMu.Lock()
	defer freezeMu.Unlock()
	var sum, group time.Duration
	var groupEnd time.Time
	in := make([]Freeze, 0, 4)
	for _, f := range freezes[cpu] {
		if !f.Spinner && f.End.After(from) && f.Start.Before(to) {
			in = append(in, f)
		}
	}
	slices.SortFunc(in, func(a, b Freeze) int { return a.Start.Compare(b.Start) })
	for i, f := range in {
		s, e := maxTime(f.Start, from), minTime(f.End, to)
		part := min(e.Sub(s), f.Stolen)
		if i > 0 && f.Start.Before(groupEnd) {
			group = max(group, part)
			groupEnd = maxTime(groupEnd, f.End)
			continue
		}
		sum += group
		group, groupEnd = part, f.End
	}
	return sum + group
}

// Freezes returns the freezes of every CPU whose gap overlaps [from, to], by CPU then time.
func Freezes(from, to time.Time) []Freeze {
	freezeMu.Lock()
	defer freezeMu.Unlock()
	var out []Freeze
	for _, c := range slices.Sorted(maps.Keys(freezes)) {
		for _, f := range freezes[c] {
			if f.End.After(from) && f.Start.Before(to) {
				out = append(out, f)
			}
		}
	}
	return out
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
