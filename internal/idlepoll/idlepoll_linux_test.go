package idlepoll

import (
	"os"
	"os/exec"
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

// TestSpinnerEndsWithParent: the spinner's loop ends by itself once the PID it watches is gone
// (a pltlab killed with SIGKILL leaves no spinner).
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
	cmd := exec.Command("/bin/sh", "-c", spinScript, "pltlab-idle-poll", strconv.Itoa(dead))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the spinner of a dead parent still spins after 5 s")
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
