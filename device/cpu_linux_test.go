package device

import (
	"os/exec"
	"testing"
	"time"
)

// TestMainThreadCPU: a child busy in a loop for about 300 ms of wall time shows its main
// thread's CPU time: more than none, never more than the wall time it had, and it grows; a PID
// that does not exist is an error.
func TestMainThreadCPU(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	// The wall clock starts before the child does: the CPU time the fork and exec spent
	// belongs to the child's main thread too (CI once read 305.98 ms against 303.97 ms of wall
	// time counted from after Start).
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	time.Sleep(150 * time.Millisecond)
	a, err := MainThreadCPU(cmd.Process.Pid)
	if err != nil {
		t.Fatalf("MainThreadCPU: %v (the kernel keeps no schedstat?)", err)
	}
	time.Sleep(150 * time.Millisecond)
	b, err := MainThreadCPU(cmd.Process.Pid)
	wall := time.Since(start)
	if err != nil || b <= a || b > wall {
		t.Fatalf("readings %v then %v over %v of wall time (err %v): want growth, at most the wall time", a, b, wall, err)
	}
	if _, err := MainThreadCPU(1 << 30); err == nil {
		t.Error("a PID that does not exist was read")
	}
}
