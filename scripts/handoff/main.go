//go:build linux

// Command handoff measures how late a real-time thread wakes when it runs in a Go process the
// way the link emulator's forwarders do: a goroutine locked to a SCHED_FIFO thread that waits
// in a raw ppoll(2) and so keeps its P. The runtime's monitor preempts such a goroutine about
// every 10 ms, and the runtime parks the locked thread until another thread of the process hands
// its P back (docs/design.md, "What still stalls the emulator"). How long that takes depends on
// what that other thread is. Three variants, each in a process of its own, alternating:
//
//   - shared: the waiter beside -busy goroutines that compute and allocate (a server's work),
//     every other thread ordinary (SCHED_OTHER): the emulator inside pltlab today;
//   - own: the waiter alone in its process, the other threads ordinary;
//   - own-rt: the waiter alone, every thread of the process SCHED_FIFO (priority 1, inherited by
//     the threads the runtime creates later): the emulator in a real-time process of its own.
//
// Run it beside a CPU load (the busy neighbour of the benchmark), as root:
//
//	go run ./scripts/handoff -rounds 2 -for 8s
//
// It prints one line per variant and round (waits, p50, p99, p99.9, max lateness in
// microseconds, and the waits more than 5 ms late: the emulator's bound, result.LatenessBoundMs).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// waitFor is each raw wait's timeout: a release due 1 ms ahead.
const waitFor = time.Millisecond

// bound is the lateness a load may meet (result.LatenessBoundMs).
const bound = 5 * time.Millisecond

func main() {
	variant := flag.String("variant", "", "run one variant in this process: shared, own or own-rt (the parent runs all)")
	busy := flag.Int("busy", 3, "goroutines that compute and allocate beside the waiter in the shared variant (>= 0)")
	rounds := flag.Int("rounds", 2, "rounds; each runs every variant once (>= 1)")
	dur := flag.Duration("for", 8*time.Second, "how long each variant waits (> 0)")
	flag.Parse()
	if *busy < 0 || *rounds < 1 || *dur <= 0 {
		fmt.Fprintf(os.Stderr, "handoff: bad -busy %d, -rounds %d or -for %v: want -busy >= 0, -rounds >= 1, -for > 0\n", *busy, *rounds, *dur)
		os.Exit(2)
	}
	if *variant != "" {
		if err := measure(*variant, *busy, *dur); err != nil {
			fmt.Fprintln(os.Stderr, "handoff:", err)
			os.Exit(1)
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "handoff:", err)
		os.Exit(1)
	}
	for r := 1; r <= *rounds; r++ {
		for _, v := range []string{"shared", "own", "own-rt"} {
			cmd := exec.Command(self, "-variant", v, "-busy", strconv.Itoa(*busy), "-for", dur.String())
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			fmt.Printf("round %d ", r)
			if err := cmd.Run(); err != nil {
				fmt.Fprintln(os.Stderr, "handoff:", v, err)
				os.Exit(1)
			}
		}
	}
}

// measure runs one variant in this process and prints its line.
func measure(variant string, busy int, dur time.Duration) error {
	switch variant {
	case "shared":
	case "own":
		busy = 0
	case "own-rt":
		busy = 0
		if err := allThreadsFIFO(1); err != nil {
			return err
		}
	default:
		return fmt.Errorf("bad -variant %q: want shared, own or own-rt", variant)
	}
	runtime.GOMAXPROCS(runtime.NumCPU() + 1) // a P of its own for the waiter, as pltlab raises it
	for range busy {
		go work()
	}
	lates := make(chan []time.Duration)
	errs := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := setFIFO(0, 89); err != nil { // the forwarders' priority (shaping.rtPriority)
			errs <- err
			return
		}
		lates <- waitRaw(dur)
	}()
	var l []time.Duration
	select {
	case err := <-errs:
		return err
	case l = <-lates:
	}
	slices.Sort(l)
	n, over := len(l), 0
	for _, x := range l {
		if x > bound {
			over++
		}
	}
	us := func(d time.Duration) int64 { return d.Microseconds() }
	fmt.Printf("%-7s waits %d, late p50 %d us, p99 %d us, p99.9 %d us, max %d us; over %v: %d\n",
		variant, n, us(l[n/2]), us(l[n*99/100]), us(l[n*999/1000]), us(l[n-1]), bound, over)
	return nil
}

// waitRaw waits waitFor at a time in a raw ppoll(2) for dur and returns how late each wait
// ended (negative when a signal ended it early).
func waitRaw(dur time.Duration) []time.Duration {
	var lates []time.Duration
	for end := time.Now().Add(dur); time.Now().Before(end); {
		ts := unix.NsecToTimespec(int64(waitFor))
		t0 := time.Now()
		unix.RawSyscall6(unix.SYS_PPOLL, 0, 0, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
		lates = append(lates, time.Since(t0)-waitFor)
	}
	return lates
}

// work computes and allocates like a server's goroutine, pausing 100 us between rounds.
func work() {
	for x := 0; ; x++ {
		for j := range 1_000_000 {
			x += j
		}
		b := make([]byte, 4096) // garbage, as a server makes
		b[0] = byte(x)
		runtime.KeepAlive(b)
		time.Sleep(100 * time.Microsecond)
	}
}

// allThreadsFIFO makes every thread of the process SCHED_FIFO at prio; threads the runtime
// creates later inherit the policy from the thread that creates them (clone(2)).
func allThreadsFIFO(prio int) error {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if err := setFIFO(tid, prio); err != nil {
			return fmt.Errorf("thread %d: %w", tid, err)
		}
	}
	return nil
}

// setFIFO sets thread tid (0: the caller) to SCHED_FIFO at prio (sched_setscheduler(2); root).
func setFIFO(tid, prio int) error {
	p := struct{ prio int32 }{int32(prio)}
	if _, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(tid), unix.SCHED_FIFO, uintptr(unsafe.Pointer(&p))); e != 0 {
		return fmt.Errorf("sched_setscheduler SCHED_FIFO %d: %w", prio, e)
	}
	return nil
}
