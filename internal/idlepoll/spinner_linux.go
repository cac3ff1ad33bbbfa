package idlepoll

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// spinnerEnv, when set ("CPU PARENT-PID"), makes the program a spinner (Child): Start runs its
// own executable once per CPU with it, so pltlab and every test binary that starts spinners
// can be one.
const spinnerEnv = "PLTLAB_IDLE_POLL_SPINNER"

// spinner is the spinner process: pinned to its CPU at SCHED_IDLE (every thread of it), it
// reads the clock in a loop and reports each freeze it sees on out, until its parent is gone.
// A gap between two consecutive readings in which the spinner never blocked or stopped (no
// voluntary context switch) is judged by stolenIn from the spinner's run-queue wait and its
// own CPU time in it (schedstat and CLOCK_THREAD_CPUTIME_ID). A preemption, such as a
// real-time thread's wake-up at the end of a freeze, is involuntary and leaves it judged.
// Protocol on out:
// "ok" once set up, or "error TEXT"; then "freeze START END STOLEN" (CLOCK_MONOTONIC ns).
func spinner(arg string, out *os.File) int {
	var cpu, parent int
	if _, err := fmt.Sscanf(arg, "%d %d", &cpu, &parent); err != nil {
		fmt.Fprintf(out, "error bad %s %q: want CPU and parent PID\n", spinnerEnv, arg)
		return 2
	}
	runtime.GOMAXPROCS(1)
	debug.SetGCPercent(-1)
	runtime.LockOSThread()
	if err := pinAll(cpu); err != nil {
		fmt.Fprintf(out, "error %v\n", err)
		return 1
	}
	var buf [128]byte
	fd, err := openSchedstat(&buf)
	if err != nil {
		fmt.Fprintf(out, "error %v\n", err)
		return 1
	}
	w := bufio.NewWriter(out)
	fmt.Fprintln(w, "ok")
	w.Flush()
	// The readings of one turn are not taken at one instant: a pause may fall between a turn's
	// clock reading and its schedstat one, which then already holds the pause's wait. So a gap
	// between the clock readings of turns k and k+1 is judged against the CPU time and wait
	// from turn k-1 to turn k+1 (the extra turn only makes a freeze look shorter).
	t1 := clock(unix.CLOCK_MONOTONIC)
	c0 := clock(unix.CLOCK_THREAD_CPUTIME_ID)
	w0, _, _ := schedstat(fd, &buf)
	v0 := voluntarySwitches()
	c1, w1, v1 := c0, w0, v0
	for i := 0; ; i++ {
		t, c := clock(unix.CLOCK_MONOTONIC), clock(unix.CLOCK_THREAD_CPUTIME_ID)
		wait, _, _ := schedstat(fd, &buf)
		v := voluntarySwitches()
		if gap := t - t1; gap > int64(FreezeMin) && v == v0 {
			if stolen := stolenIn(time.Duration(gap), time.Duration(c-c0), time.Duration(wait-w0)); stolen > 0 {
				fmt.Fprintf(w, "freeze %d %d %d\n", t1, t, int64(stolen))
				if w.Flush() != nil {
					return 0 // the parent closed the pipe
				}
			}
		}
		t1, c0, w0, v0, c1, w1, v1 = t, c1, w1, v1, c, wait, v
		if i&0x3ff == 0 && os.Getppid() != parent {
			return 0
		}
	}
}

// voluntarySwitches is the calling thread's count of voluntary context switches (getrusage(2)
// RUSAGE_THREAD, ru_nvcsw): the times it blocked or was stopped. The spinner never blocks, so
// a change means the guest itself took it off the CPU (a stop signal, a page fault's I/O).
func voluntarySwitches() int64 {
	var ru unix.Rusage
	unix.RawSyscall(unix.SYS_GETRUSAGE, uintptr(unix.RUSAGE_THREAD), uintptr(unsafe.Pointer(&ru)), 0)
	return ru.Nvcsw
}

// pinAll pins every thread of this process to cpu and gives it SCHED_IDLE (threads made later
// inherit both from the thread that makes them).
func pinAll(cpu int) error {
	return eachThread(func(tid int) error {
		var one unix.CPUSet
		one.Set(cpu)
		if err := unix.SchedSetaffinity(tid, &one); err != nil {
			return fmt.Errorf("pin thread %d to CPU %d: %w", tid, cpu, err)
		}
		return setIdle(tid)
	})
}

// eachThread calls fn with the id of every thread of this process (/proc/self/task), stopping
// at the first error.
func eachThread(fn func(tid int) error) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if err := fn(tid); err != nil {
			return err
		}
	}
	return nil
}

// setIdle gives thread or process id the SCHED_IDLE policy.
func setIdle(id int) error {
	param := struct{ priority int32 }{0}
	if _, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(id), uintptr(unix.SCHED_IDLE), uintptr(unsafe.Pointer(&param))); e != 0 {
		return fmt.Errorf("give %d SCHED_IDLE: %w", id, e)
	}
	return nil
}

// clock reads clock id in ns with a raw system call (the goroutine never enters the syscall
// state, so the runtime's monitor has no reason to touch it).
func clock(id int) int64 {
	var ts unix.Timespec
	unix.RawSyscall(unix.SYS_CLOCK_GETTIME, uintptr(id), uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// openSchedstat opens the calling thread's /proc/thread-self/schedstat and reads it once into
// buf; an error when it cannot be opened or read (a kernel without CONFIG_SCHED_INFO).
func openSchedstat(buf *[128]byte) (int, error) {
	fd, err := unix.Open("/proc/thread-self/schedstat", unix.O_RDONLY, 0)
	if err != nil {
		return -1, fmt.Errorf("open schedstat: %w", err)
	}
	if _, _, ok := schedstat(fd, buf); !ok {
		unix.Close(fd)
		return -1, errors.New("/proc/thread-self/schedstat unreadable (CONFIG_SCHED_INFO)")
	}
	return fd, nil
}

// schedstat reads /proc/thread-self/schedstat (open as fd): the run-queue wait in ns and the
// number of timeslices run (Documentation/scheduler/sched-stats.rst, fields 2 and 3).
func schedstat(fd int, buf *[128]byte) (wait, slices int64, ok bool) {
	n, _, e := unix.RawSyscall6(unix.SYS_PREAD64, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
	if e != 0 || n == 0 {
		return 0, 0, false
	}
	var f [3]int64
	k := 0
	for _, b := range buf[:n] {
		switch {
		case b >= '0' && b <= '9':
			f[k] = f[k]*10 + int64(b-'0')
		case b == ' ' && k < 2:
			k++
		}
	}
	return f[1], f[2], k == 2
}

// monoBase ties this process's clock to CLOCK_MONOTONIC, in which spinners report: a freeze at
// CLOCK_MONOTONIC m happened at monoBase.t + (m - monoBase.ns).
var monoBase = func() (b struct {
	t  time.Time
	ns int64
}) {
	b.t, b.ns = time.Now(), clock(unix.CLOCK_MONOTONIC)
	return b
}()

// monoTime converts a CLOCK_MONOTONIC reading in ns to a time.Time (with this process's
// monotonic reading, so it compares exactly with time.Now's).
func monoTime(ns int64) time.Time { return monoBase.t.Add(time.Duration(ns - monoBase.ns)) }

// readSpinner reads spinner cpu's first line from r ("ok", or an error), then, in a goroutine,
// records every freeze it reports until r ends.
func readSpinner(cpu int, role string, r *os.File) error {
	br := bufio.NewReader(r)
	type line struct {
		s   string
		err error
	}
	first := make(chan line, 1)
	go func() {
		s, err := br.ReadString('\n')
		first <- line{s, err}
	}()
	var l line
	select {
	case l = <-first:
	case <-time.After(10 * time.Second):
		return fmt.Errorf("idle poll: the %s of CPU %d said nothing in 10 s", role, cpu)
	}
	if l.err != nil {
		return fmt.Errorf("idle poll: the %s of CPU %d: %w", role, cpu, l.err)
	}
	if s := strings.TrimSpace(l.s); s != "ok" {
		return errors.New("idle poll: the " + role + " of CPU " + strconv.Itoa(cpu) + ": " + strings.TrimPrefix(s, "error "))
	}
	go func() {
		defer r.Close()
		for {
			s, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if f, ok := parseFreeze(cpu, s); ok {
				f.Spinner = role == "spinner"
				AddFreeze(f)
			}
		}
	}()
	return nil
}

// parseFreeze parses a spinner's "freeze START END STOLEN" line.
func parseFreeze(cpu int, s string) (Freeze, bool) {
	var start, end, stolen int64
	if _, err := fmt.Sscanf(s, "freeze %d %d %d", &start, &end, &stolen); err != nil || end < start || stolen < 0 {
		return Freeze{}, false
	}
	return Freeze{CPU: cpu, Start: monoTime(start), End: monoTime(end), Stolen: time.Duration(min(stolen, end-start))}, true
}
