// Package rtwait lets the emulator's real-time threads block without the Go scheduler: raw ppoll(2) and nanosleep(2) calls, and the P each such thread must be left.
//
// A goroutine locked to a real-time (SCHED_FIFO) thread that blocks in an ordinary system call
// enters Go's syscall state. Since Go 1.26 the runtime's monitor (sysmon) takes the _Gscan bit
// of every goroutine in a system call for a moment on each of its ticks (retake in
// runtime/proc.go). When the thread's wake-up preempts the monitor on the monitor's CPU while
// the monitor holds that bit, the thread spins in exitsyscall (casgstatus) at real-time
// priority and the monitor, an ordinary thread, cannot run on that CPU to release it until the
// kernel moves it: 36-62 ms stalls of the emulator, measured here (docs/design.md, "The
// emulator's stalls"). A raw system call never enters the syscall state: the goroutine stays
// running in Go's view, keeps its P while it blocks, and no other thread touches its status.
//
// Because a raw waiter holds a P, a thread may wait raw only while GOMAXPROCS leaves the
// program's own goroutines as many Ps as the machine has CPUs (Acquire).
package rtwait

import (
	"runtime"
	"sync/atomic"
)

// waiters counts this process's threads that hold a P for raw waits.
var waiters atomic.Int32

// Acquire reserves a P for the calling thread's raw waits and reports whether it may wait raw:
// only while GOMAXPROCS(0) - runtime.NumCPU() exceeds the raw waiters already counted, so a
// program that did not raise GOMAXPROCS for its real-time threads is never starved of Ps by
// them. Each true must be matched by one Release.
func Acquire() bool {
	for {
		n := waiters.Load()
		if int(n)+1 > runtime.GOMAXPROCS(0)-runtime.NumCPU() {
			return false
		}
		if waiters.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release returns the P that a successful Acquire reserved.
func Release() { waiters.Add(-1) }
