package idlepoll

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A spinner sees a freeze only while it runs, that is while its CPU has nothing else to do. A
// CPU busy with the guest's own threads is frozen just as often: traced with ftrace on
// 2026-12-03 (sched_switch, sched_wakeup, irq_vectors), the emulator's forwarder on CPU 1 woke
// the other direction's forwarder on CPU 0 at t, and CPU 0, running an ordinary thread of
// pltlab, logged nothing at all until t+5.4 ms, when the rescheduling interrupt and its first
// timer tick since arrived together: the hypervisor had held that virtual CPU, and the packets
// due meanwhile left 5.4 ms late. So each CPU also has a watcher: a real-time thread that sleeps
// to an absolute deadline every WatchPeriod and reports a freeze when it wakes later than the
// guest can account for.

// watcherEnv, when set ("CPU PARENT-PID"), makes the program a watcher (Child).
const watcherEnv = "PLTLAB_IDLE_POLL_WATCHER"

// WatchPeriod is a watcher's sleep: the most of a freeze's start a watcher can miss (a freeze
// that begins just after a wake-up is seen from the next deadline on). 1000 wake-ups per
// second per CPU of a few microseconds each.
const WatchPeriod = time.Millisecond

// WatcherPriority is the SCHED_FIFO priority of the watchers: below the emulator's forwarders
// (89, shaping), so that a watcher never delays a release, above every ordinary thread.
const WatcherPriority = 88

// watchJudge is how much of a watcher's late wake-up the hypervisor held the CPU, for a wake-up
// with no block of its own besides the sleep (a stop is not judged): late (wake-up minus
// deadline) less the watcher's run-queue wait since it went to sleep (schedstat), that is
// the time it was runnable but another thread of the guest (a forwarder at a higher priority,
// or a thread in the kernel, which this kernel does not preempt: CONFIG_PREEMPT_NONE) kept the
// CPU. What is left is the time the timer interrupt itself came late: the guest takes it at
// once unless the virtual CPU was not running (or the guest ran with interrupts off, which its
// own code does for microseconds). 0 when that is FreezeMin or less.
func watchJudge(late, wait time.Duration) time.Duration {
	s := late - max(wait, 0)
	if s <= FreezeMin {
		return 0
	}
	return min(s, late)
}

// watcher is the watcher process: pinned to its CPU at SCHED_FIFO WatcherPriority (every
// thread of it), it sleeps to a deadline every WatchPeriod and reports each freeze on out, in
// the spinner's protocol ("ok", then "freeze START END STOLEN", CLOCK_MONOTONIC ns), until its
// parent is gone. Its goroutine is the process's only one and is not locked to its thread, so
// the runtime's preemption of it (every 10 ms: it never blocks in Go's view) resumes it on the
// same thread at once; a turn whose deadline had passed before it went to sleep is not judged.
func watcher(arg string, out *os.File) int {
	var cpu, parent int
	if _, err := fmt.Sscanf(arg, "%d %d", &cpu, &parent); err != nil {
		fmt.Fprintf(out, "error bad %s %q: want CPU and parent PID\n", watcherEnv, arg)
		return 2
	}
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
	if err := pinAllFIFO(cpu, WatcherPriority); err != nil {
		fmt.Fprintf(out, "error %v\n", err)
		return 1
	}
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	tid := unix.Gettid()
	var buf [128]byte
	fd, err := openSchedstat(&buf)
	if err != nil {
		fmt.Fprintf(out, "error %v\n", err)
		return 1
	}
	fmt.Fprintln(out, "ok")
	period := int64(WatchPeriod)
	due := clock(unix.CLOCK_MONOTONIC) + period
	for i := 0; ; i++ {
		w0, _, _ := schedstat(fd, &buf)
		v0 := voluntarySwitches()
		if before := clock(unix.CLOCK_MONOTONIC); before >= due {
			due = before + period // held up before the sleep: nothing to judge
			continue
		}
		ts := unix.NsecToTimespec(due)
		unix.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, uintptr(unix.CLOCK_MONOTONIC), uintptr(unix.TIMER_ABSTIME), uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		t := clock(unix.CLOCK_MONOTONIC)
		w1, _, _ := schedstat(fd, &buf)
		// The sleep itself is one voluntary switch; a second is a stop (SIGSTOP) or some other
		// block of the guest's own, which is not a freeze.
		if late := t - due; late > int64(FreezeMin) && voluntarySwitches()-v0 <= 1 && unix.Gettid() == tid {
			if stolen := watchJudge(time.Duration(late), time.Duration(w1-w0)); stolen > 0 {
				if _, err := fmt.Fprintf(out, "freeze %d %d %d\n", due, due+int64(stolen), int64(stolen)); err != nil {
					return 0 // the parent closed the pipe
				}
			}
		}
		due += period
		if now := clock(unix.CLOCK_MONOTONIC); due <= now {
			due = now + period
		}
		if i&0x3ff == 0 && os.Getppid() != parent {
			return 0
		}
	}
}

// pinAllFIFO pins every thread of this process to cpu at SCHED_FIFO priority prio.
func pinAllFIFO(cpu, prio int) error {
	return eachThread(func(tid int) error {
		var one unix.CPUSet
		one.Set(cpu)
		if err := unix.SchedSetaffinity(tid, &one); err != nil {
			return fmt.Errorf("pin thread %d to CPU %d: %w", tid, cpu, err)
		}
		param := struct{ priority int32 }{int32(prio)}
		if _, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(tid), uintptr(unix.SCHED_FIFO), uintptr(unsafe.Pointer(&param))); e != 0 {
			return fmt.Errorf("give %d SCHED_FIFO %d: %w", tid, prio, e)
		}
		return nil
	})
}
