package shaping

import (
	"runtime"
	"testing"
	"time"

	"github.com/pltlab/pltlab/internal/idlepoll"
)

// TestGovernorCountsCPUNotStops: a forwarder whose virtual CPU the host stopped for 80 ms of a
// 100 ms window (wall time passing, no CPU time used) stays in SCHED_FIFO; one that used 60 ms
// of CPU in a window leaves it, and returns once a window uses under 25 %.
func TestGovernorCountsCPUNotStops(t *testing.T) {
	var cpu time.Duration
	var switches []bool
	g := newGovernor(true, 0, func() time.Duration { return cpu }, func(rt bool) { switches = append(switches, rt) })
	cpu = 5 * time.Millisecond // the rest of the window the CPU was stopped
	g.sleep(100 * time.Millisecond)
	if !g.rt || len(switches) != 0 {
		t.Fatalf("after a host stop: rt %v, switches %v; want still SCHED_FIFO", g.rt, switches)
	}
	cpu += 60 * time.Millisecond
	g.sleep(200 * time.Millisecond)
	if g.rt || len(switches) != 1 || switches[0] {
		t.Fatalf("after 60 %% CPU: rt %v, switches %v; want SCHED_OTHER", g.rt, switches)
	}
	cpu += 10 * time.Millisecond
	g.sleep(300 * time.Millisecond)
	if !g.rt || len(switches) != 2 || !switches[1] {
		t.Fatalf("after 10 %% CPU: rt %v, switches %v; want SCHED_FIFO again", g.rt, switches)
	}
	// A window not yet over changes nothing.
	cpu += 90 * time.Millisecond
	g.sleep(350 * time.Millisecond)
	if !g.rt || len(switches) != 2 {
		t.Fatalf("mid-window: rt %v, switches %v", g.rt, switches)
	}
}

// TestThreadCPU: the thread's CPU time grows while it works.
func TestThreadCPU(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a := threadCPU()
	for x := 0; threadCPU()-a < 2*time.Millisecond; x++ {
		_ = x
	}
	if b := threadCPU(); b <= a {
		t.Fatalf("thread CPU %v then %v", a, b)
	}
}

// TestForwardersAboveWatchers: the forwarders' SCHED_FIFO priority is above the idle-poll
// watchers', so a watcher's wake-up (every millisecond on every CPU) never delays a release,
// and below the kernel's own real-time threads (99).
func TestForwardersAboveWatchers(t *testing.T) {
	if rtPriority <= idlepoll.WatcherPriority || rtPriority >= 99 {
		t.Errorf("forwarders at SCHED_FIFO %d, watchers at %d: want watchers < forwarders < 99", rtPriority, idlepoll.WatcherPriority)
	}
}
