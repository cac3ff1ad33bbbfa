package rtwait

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Ppoll is ppoll(2) on fds with timeout ts (nil: none), as a raw system call when raw, an
// ordinary one otherwise. It clears every Revents first and returns the number of ready
// descriptors: 0 on a timeout, an error or an interrupted call (EINTR: a signal, such as the
// runtime's preemption request, which a raw waiter receives while it blocks).
func Ppoll(fds []unix.PollFd, ts *unix.Timespec, raw bool) int {
	for i := range fds {
		fds[i].Revents = 0
	}
	if !raw {
		n, _ := unix.Ppoll(fds, ts, nil)
		return max(n, 0)
	}
	var p unsafe.Pointer
	if len(fds) > 0 {
		p = unsafe.Pointer(&fds[0])
	}
	n, _, e := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(p), uintptr(len(fds)), uintptr(unsafe.Pointer(ts)), 0, 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}

// PollFor is Ppoll with a timeout d (at most 100 ms per call, so that a stop flag checked
// between calls is seen; negative counts as 0).
func PollFor(fds []unix.PollFd, d time.Duration, raw bool) int {
	ts := unix.NsecToTimespec(int64(min(max(d, 0), 100*time.Millisecond)))
	return Ppoll(fds, &ts, raw)
}

// Sleep blocks the calling thread for d: clock_nanosleep(2) on CLOCK_MONOTONIC as a raw system
// call when raw (resumed after a signal until d has passed), time.Sleep otherwise.
func Sleep(d time.Duration, raw bool) {
	if !raw {
		time.Sleep(d)
		return
	}
	end := time.Now().Add(d)
	for left := time.Until(end); left > 0; left = time.Until(end) {
		ts := unix.NsecToTimespec(int64(left))
		unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, 0, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	}
}

// DrainEventfd resets the non-blocking eventfd fd with a raw read.
func DrainEventfd(fd int) {
	var b [8]byte
	unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), 8)
}
