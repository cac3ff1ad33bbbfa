package idlepoll

import (
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStartStop: Start leaves one spinner per allowed CPU, pinned to it and at SCHED_IDLE,
// counted by Active; Stop ends them all and Active is 0 again.
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
	pids := make([]int, len(k.cmds))
	for i, c := range k.cmds {
		pids[i] = c.Process.Pid
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
		if got != "ok\n" {
			t.Errorf("spinner said %q, want ok", got)
		}
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the spinner of a dead parent still spins after 5 s")
	}
}

// TestSpinnerIgnoresGuestPauses: time the guest itself takes from a spinner is never reported
// as a freeze: a spinner stopped (SIGSTOP) for 60 ms, and one kept off its CPU for 60 ms by a
// thread of ordinary priority, are switched out or waiting, which schedstat shows. Freezes the
// hypervisor makes meanwhile are logged, not required: a machine without one has none.
func TestSpinnerIgnoresGuestPauses(t *testing.T) {
	ResetFreezes()
	k, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	cpu := k.CPUs[0]
	from := time.Now()
	pid := k.cmds[0].Process.Pid
	stopAt := time.Now()
	unix.Kill(pid, unix.SIGSTOP)
	time.Sleep(60 * time.Millisecond)
	unix.Kill(pid, unix.SIGCONT)
	stopEnd := time.Now()
	// A busy loop of ordinary priority pinned to the spinner's CPU: the spinner waits on the run queue.
	hogAt := time.Now()
	hogDone := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var one unix.CPUSet
		one.Set(cpu)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Error(err)
		}
		for end := time.Now().Add(60 * time.Millisecond); time.Now().Before(end); {
		}
		close(hogDone)
	}()
	<-hogDone
	hogEnd := time.Now()
	time.Sleep(50 * time.Millisecond) // the spinner's report of anything up to now
	for _, f := range Freezes(from, time.Now()) {
		t.Logf("freeze on CPU %d: %v stolen in a %v gap", f.CPU, f.Stolen, f.End.Sub(f.Start))
		if f.CPU != cpu {
			continue
		}
		// A freeze of the hypervisor may fall in the same stretch; the pause itself must not
		// be in it: no freeze reports more than the 20 ms a hypervisor takes at most here.
		for _, p := range [][2]time.Time{{stopAt, stopEnd}, {hogAt, hogEnd}} {
			if f.End.After(p[0]) && f.Start.Before(p[1]) && f.Stolen > 40*time.Millisecond {
				t.Errorf("a guest pause of 60 ms reported as a freeze: %v stolen (gap %v)", f.Stolen, f.End.Sub(f.Start))
			}
		}
	}
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
