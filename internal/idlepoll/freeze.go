package idlepoll

import (
	"slices"
	"sync"
	"time"
)

// Freeze is a stretch of time in which the spinner of one CPU saw its CPU taken from the guest:
// the spinner's clock advanced by more than its own run time and its run-queue wait together
// (from /proc/thread-self/schedstat; with CONFIG_PARAVIRT_TIME_ACCOUNTING the run time leaves
// out what the hypervisor stole), that is the hypervisor ran something else on the virtual CPU.
type Freeze struct {
	// CPU is the virtual CPU that was taken.
	CPU int
	// Start and End bound the spinner's gap (two consecutive clock readings) the freeze lay in.
	Start, End time.Time
	// Stolen is the part of End-Start neither run by the spinner nor spent waiting for the CPU
	// in the guest: the time the hypervisor held the virtual CPU (<= End-Start).
	Stolen time.Duration
}

// FreezeMin is the smallest freeze a spinner reports: shorter gaps are the guest's own
// (interrupts, the spinner's own preemption) or too short to move a release past the bound.
const FreezeMin = 300 * time.Microsecond

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
// the sum over the freezes of cpu of the overlap of [from, to] with the freeze's gap, each at
// most the freeze's Stolen. 0 when no spinner watched cpu then (idle poll off, another CPU, or
// the CPU was running some other thread of the guest: a freeze is seen only by a spinner that
// runs, so one the guest did not notice is never counted).
func Stolen(cpu int, from, to time.Time) time.Duration {
	if !to.After(from) {
		return 0
	}
	freezeMu.Lock()
	defer freezeMu.Unlock()
	var sum time.Duration
	for _, f := range freezes[cpu] {
		s, e := maxTime(f.Start, from), minTime(f.End, to)
		if e.After(s) {
			sum += min(e.Sub(s), f.Stolen)
		}
	}
	return sum
}

// Freezes returns the freezes of every CPU whose gap overlaps [from, to], by CPU then time.
func Freezes(from, to time.Time) []Freeze {
	freezeMu.Lock()
	defer freezeMu.Unlock()
	var out []Freeze
	cpus := make([]int, 0, len(freezes))
	for c := range freezes {
		cpus = append(cpus, c)
	}
	slices.Sort(cpus)
	for _, c := range cpus {
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
