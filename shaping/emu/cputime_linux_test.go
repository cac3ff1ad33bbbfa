package emu

import "syscall"

// threadCPU is the calling thread's user+system CPU time in ns (RUSAGE_THREAD), so benchmarks
// on a loaded machine can report the cost of the work itself, not the time spent preempted.
func threadCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
