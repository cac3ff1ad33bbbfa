package idlepoll

import (
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestStartStop: Start leaves one spinner per allowed CPU, pinned to it and at SCHED_IDLE,
// counted by Active, and one watcher pinned beside it at SCHED_FIFO WatcherPriority; Stop ends
// them all and Active is 0 again.
func TestStartStop(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	k, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	if len(k.CPUs) != set.Count() || Active() != set.Count() {
		t.Fatalf("%d spinners (Active %d) for %d CPUs", len(k.CPUs), Active(), set.Count())
	}
	for i, c := range k.cmds {
		pid := c.Process.Pid
		policy, _, e := unix.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(pid), 0, 0)
		if e != 0 || int(policy) != unix.SCHED_IDLE {
			t.Errorf("spinner %d: policy %d (%v), want SCHED_IDLE (%d)", pid, policy, e, unix.SCHED_IDLE)
		}
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(pid, &got); err != nil || got.Count() != 1 || !got.IsSet(k.CPUs[i]) {
			t.Errorf("spinner %d: affinity %v (%v), want CPU %d alone", pid, got, err, k.CPUs[i])
		}
	}
	if len(k.watchers) != len(k.CPUs) {
		t.Fatalf("%d watchers for %d CPUs", len(k.watchers), len(k.CPUs))
	}
	for i, c := range k.watchers {
		pid := c.Process.Pid
		policy, _, e := unix.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(pid), 0, 0)
		var param struct{ priority int32 }
		unix.RawSyscall(unix.SYS_SCHED_GETPARAM, uintptr(pid), uintptr(unsafe.Pointer(&param)), 0)
		if e != 0 || int(policy) != unix.SCHED_FIFO || param.priority != WatcherPriority {
			t.Errorf("watcher %d: policy %d priority %d (%v), want SCHED_FIFO (%d) %d", pid, policy, param.priority, e, unix.SCHED_FIFO, WatcherPriority)
		}
		var got unix.CPUSet
		if err := unix.SchedGetaffinity(pid, &got); err != nil || got.Count() != 1 || !got.IsSet(k.CPUs[i]) {
			t.Errorf("watcher %d: affinity %v (%v), want CPU %d alone", pid, got, err, k.CPUs[i])
		}
	}
	var pids []int
	for _, c := range slices.Concat(k.cmds, k.watchers) {
		pids = append(pids, c.Process.Pid)
	}
	k.Stop()
	if Active() != 0 {
		t.Errorf("Active %d after Stop", Active())
	}
	for _, pid := range pids {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(b), ") Z") {
			t.Errorf("spinner %d still alive after Stop", pid)
		}
	}
}

// TestSpinnerEndsWithParent: a spinner (this test binary run with spinnerEnv) reports ready and
// then ends by itself once the PID it watches is gone (a pltlab killed with SIGKILL leaves no
// spinner, even if its death signal is missed).
func TestSpinnerEndsWithParent(t *testing.T) {
	dead := 0
	for pid := 400000; pid < 4194304; pid += 7919 {
		if unix.Kill(pid, 0) == unix.ESRCH {
			dead = pid
			break
		}
	}
	if dead == 0 {
		t.Skip("no free PID found")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), spinnerEnv+"=0 "+strconv.Itoa(dead))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(out)
		cmd.Wait()
		done <- string(b)
	}()
	select {
	case got := <-done:
		// "ok", then nothing but freeze reports: a spinner on a busy machine may report stops
		// of its own (which explain no lateness, Freeze.Spinner), and must still end.
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if lines[0] != "ok" {
			t.Errorf("spinner said %q, want ok first", got)
		}
		for _, l := range lines[1:] {
			if !strings.HasPrefix(l, "freeze ") {
				t.Errorf("spinner said %q after ok, want only freeze reports", l)
			}
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the spinner of a dead parent still spins after 5 s")
	}
}

// TestIgnoresGuestPauses: time the guest itself takes from a spinner or a watcher is never
// reported as a freeze. A spinner stopped (SIGSTOP) for 60 ms, or kept off its CPU for 60 ms by a
// thread of ordinary priority, is switched out or waiting, which schedstat shows; a watcher
// stopped for 60 ms blocks once more than its sleep, and one kept waiting 60 ms by a real-time
// thread above it waits on the run queue. Freezes the hypervisor makes meanwhile are logged, not
// required: a machine without one has none.
func TestIgnoresGuestPauses(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  func(*Keeper) int
		fifo int // the hog's priority
	}{
		{"spinner", func(k *Keeper) int { return k.cmds[0].Process.Pid }, 0},
		{"watcher", func(k *Keeper) int { return k.watchers[0].Process.Pid }, WatcherPriority + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ResetFreezes()
			k, err := Start()
			if err != nil {
				t.Fatal(err)
			}
			defer k.Stop()
			from := time.Now()
			pauses := guestPauses(t, tc.pid(k), k.CPUs[0], tc.fifo)
			time.Sleep(50 * time.Millisecond) // the child's report of anything up to now
			noPauseFreeze(t, k.CPUs[0], from, pauses)
		})
	}
}

// guestPauses takes 60 ms from process pid twice, as the guest itself would: it stops pid
// (SIGSTOP), then runs a busy loop pinned to cpu, at SCHED_FIFO priority fifo (SCHED_OTHER when
// 0), so that pid waits on the run queue. It returns the two stretches.
func guestPauses(t *testing.T, pid, cpu, fifo int) [][2]time.Time {
	t.Helper()
	stopAt := time.Now()
	unix.Kill(pid, unix.SIGSTOP)
	time.Sleep(60 * time.Millisecond)
	unix.Kill(pid, unix.SIGCONT)
	stopEnd := time.Now()
	hogAt := time.Now()
	hogDone := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine, policy and all
		defer close(hogDone)
		var one unix.CPUSet
		one.Set(cpu)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Error(err)
			return
		}
		if fifo > 0 {
			param := struct{ priority int32 }{int32(fifo)}
			if _, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, uintptr(unix.SCHED_FIFO), uintptr(unsafe.Pointer(&param))); e != 0 {
				t.Error(e)
				return
			}
		}
		for end := time.Now().Add(60 * time.Millisecond); time.Now().Before(end); {
		}
	}()
	<-hogDone
	return [][2]time.Time{{stopAt, stopEnd}, {hogAt, time.Now()}}
}

// TestParseMode: auto, on and off are accepted, anything else names itself and the choices.
func TestParseMode(t *testing.T) {
	for _, s := range []string{"auto", "on", "off"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("%q: %v %v", s, m, err)
		}
	}
	if _, err := ParseMode("yes"); err == nil || err.Error() != "bad --idle-poll yes: accepted auto, on, off" {
		t.Errorf("yes: %v", err)
	}
	if Off.Wanted() || !On.Wanted() {
		t.Error("off wanted or on not wanted")
	}
}

// TestWatchJudge: a watcher's late wake-up is a freeze only for the part its run-queue wait does
// not cover (a forwarder, or a thread in the kernel, kept the CPU), and only beyond FreezeMin.
func TestWatchJudge(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	for _, tc := range []struct {
		late, wait, want time.Duration
	}{
		{ms(5.4), ms(0.03), ms(5.37)}, // the traced freeze: the interrupt came 5.4 ms late
		{ms(5.4), ms(5.35), 0},        // woken in time, then waited behind another thread
		{ms(0.3), 0, 0},               // FreezeMin: not reported
		{ms(0.31), 0, ms(0.31)},       // just over it
		{ms(2), ms(-1), ms(2)},        // a wait that went backwards counts as none
		{ms(1), ms(3), 0},             // a wait longer than the lateness leaves nothing
	} {
		if got := watchJudge(tc.late, tc.wait); got != tc.want {
			t.Errorf("watchJudge(late %v, wait %v) = %v, want %v", tc.late, tc.wait, got, tc.want)
		}
	}
}

// noPauseFreeze fails t when a freeze of cpu reported since from overlaps one of the guest's own
// pauses (60 ms each) and claims more than 40 ms: a freeze of the hypervisor may fall in the same
// stretch (up to about 20 ms here), the pause itself must not be in it.
func noPauseFreeze(t *testing.T, cpu int, from time.Time, pauses [][2]time.Time) {
	t.Helper()
	for _, f := range Freezes(from, time.Now()) {
		t.Logf("freeze on CPU %d: %v stolen in a %v gap", f.CPU, f.Stolen, f.End.Sub(f.Start))
		if f.CPU != cpu {
			continue
		}
		for _, p := range pauses {
			if f.End.After(p[0]) && f.Start.Before(p[1]) && f.Stolen > 40*time.Millisecond {
				t.Errorf("a guest pause of 60 ms reported as a freeze: %v stolen (gap %v)", f.Stolen, f.End.Sub(f.Start))
			}
		}
	}
}
