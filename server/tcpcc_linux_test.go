//go:build linux

package server

import (
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// ccList reads a space-separated congestion-control sysctl.
func ccList(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/ipv4/" + name)
	if err != nil {
		t.Skipf("no %s: %v", name, err)
	}
	return strings.Fields(string(b))
}

// asNobodyThread runs fn on an OS thread whose credentials are the unprivileged user nobody's
// (uid 65534, no capabilities); the thread is never unlocked, so Go ends it after fn.
func asNobodyThread(t *testing.T, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
		// The raw syscall changes this thread only (syscall.Setresuid would change every thread).
		if _, _, e := unix.RawSyscall(unix.SYS_SETRESUID, 65534, 65534, 65534); e != 0 {
			done <- e
			return
		}
		done <- fn()
	}()
	return <-done
}

// TestProbeTCPCC: the probe accepts what this context may set and refuses, in one line naming
// the value and the accepted list, a controller this user may not set and one the kernel lacks.
func TestProbeTCPCC(t *testing.T) {
	if err := ProbeTCPCC("reno"); err != nil { // reno is always built in and always allowed
		t.Fatalf("reno: %v", err)
	}
	err := ProbeTCPCC("nosuchcc")
	if err == nil || !strings.Contains(err.Error(), "tcp_cc nosuchcc: this kernel has no such congestion control") ||
		!strings.Contains(err.Error(), "accepted net.ipv4.tcp_available_congestion_control") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("unknown controller: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to become nobody on one thread")
	}
	allowed := ccList(t, "tcp_allowed_congestion_control")
	var restricted string
	for _, cc := range ccList(t, "tcp_available_congestion_control") {
		if !slices.Contains(allowed, cc) {
			restricted = cc
			break
		}
	}
	if err := asNobodyThread(t, func() error { return ProbeTCPCC(allowed[0]) }); err != nil {
		t.Fatalf("nobody, allowed %s: %v", allowed[0], err)
	}
	if restricted == "" {
		t.Skipf("every available controller is allowed (%v): none to refuse", allowed)
	}
	err = asNobodyThread(t, func() error { return ProbeTCPCC(restricted) })
	want := "tcp_cc " + restricted + ": this user may not set it"
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), strings.Join(allowed, " ")) {
		t.Fatalf("nobody, %s (not in %v): err = %v, want %q naming the allowed list", restricted, allowed, err, want)
	}
}
