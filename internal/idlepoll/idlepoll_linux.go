package idlepoll

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Keeper holds the spinners and watchers of one Start.
type Keeper struct {
	cmds     []*exec.Cmd // the spinners, by CPU
	watchers []*exec.Cmd // the watchers, by CPU
	// CPUs are the CPUs kept awake.
	CPUs []int
}

// childAsked is set once the program asked Child whether it is a spinner or a watcher: Start
// runs the program's own executable as one, which only a program that asks can be.
var childAsked atomic.Bool

// errNoChild is Start's error in a program that never called Child.
var errNoChild = errors.New("idle poll: this program cannot run as a spinner (its main, or a test binary's TestMain, must call idlepoll.Child first)")

// Child runs this process as the spinner or watcher that Start started it as (spinnerEnv,
// watcherEnv set) and returns its exit status with ok true once it is done (the parent gone,
// or a set-up error: 2 for a bad setting, 1 otherwise); the caller exits with it. Otherwise
// it returns at once, ok false, and the program may call Start. A program that calls Start
// calls Child first in main (a test binary in TestMain); the package itself never exits the
// process and runs nothing at its import.
func Child() (code int, ok bool) {
	childAsked.Store(true)
	if v, ok := os.LookupEnv(spinnerEnv); ok {
		return spinner(v, os.Stdout), true
	}
	if v, ok := os.LookupEnv(watcherEnv); ok {
		return watcher(v, os.Stdout), true
	}
	return 0, false
}

// Start starts one spinner per CPU this process may run on: this program's own executable run
// as a spinner (spinnerEnv), pinned there (sched_setaffinity) at SCHED_IDLE, the lowest
// priority, reporting the freezes it sees (Stolen, Freezes); and beside it a watcher (watcher,
// watcherEnv), pinned there at SCHED_FIFO WatcherPriority, which reports the freezes of the CPU
// while it is busy (none for a user who may not use SCHED_FIFO). Both end with Stop, with this process's death (Pdeathsig) and, should that
// signal be missed, by themselves once their parent is gone. Errors: the executable cannot be
// started, a child's affinity or policy cannot be set, or it does not report ready within 10 s;
// then no spinner or watcher is left; and errNoChild in a program that never called Child (its
// executable run so would run the program itself, not a spinner).
func Start() (*Keeper, error) {
	if !childAsked.Load() {
		return nil, errNoChild
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("idle poll: read CPU affinity: %w", err)
	}
	k := &Keeper{}
	for cpu := 0; cpu < 1024; cpu++ {
		if !set.IsSet(cpu) {
			continue
		}
		if err := k.spin(cpu); err != nil {
			return nil, errors.Join(err, k.Stop())
		}
		if err := k.watch(cpu); err != nil {
			return nil, errors.Join(err, k.Stop())
		}
	}
	spinMu.Lock()
	for _, c := range slices.Concat(k.cmds, k.watchers) {
		spinPIDs = append(spinPIDs, c.Process.Pid)
	}
	spinMu.Unlock()
	return k, nil
}

// spinPIDs are the spinners and watchers running now, for Ticks.
var (
	spinMu   sync.Mutex
	spinPIDs []int
)

// Ticks is the CPU time, in clock ticks (user plus system, /proc/PID/stat fields 14 and 15),
// that the spinners and watchers running now have used since they started: what a reading of the
// machine's busy time (package hostload) leaves out, so that they do not count as load.
func Ticks() uint64 {
	spinMu.Lock()
	defer spinMu.Unlock()
	var n uint64
	for _, pid := range spinPIDs {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseUint(f[11], 10, 64)
		st, _ := strconv.ParseUint(f[12], 10, 64)
		n += u + st
	}
	return n
}

// spin starts the spinner of cpu and waits until it is set up.
func (k *Keeper) spin(cpu int) error {
	// The spinner puts every thread of its own at SCHED_IDLE (pinAll) before it says "ok"; its
	// start (exec and the Go runtime's set-up) runs at the ordinary class, so that a CPU kept busy
	// by another process does not starve it: at SCHED_IDLE from the start, beside a busy loop
	// pinned to its CPU, it said nothing in 10 s (2026-12-06).
	cmd, err := k.child(cpu, "spinner", spinnerEnv, func(int) error { return nil })
	if cmd != nil {
		k.cmds = append(k.cmds, cmd)
	}
	if err != nil {
		return err
	}
	k.CPUs = append(k.CPUs, cpu)
	active.Add(1)
	return nil
}

// watch starts the watcher of cpu (watcher) and waits until it is set up. A user who may not
// use SCHED_FIFO gets none, and no error.
func (k *Keeper) watch(cpu int) error {
	cmd, err := k.child(cpu, "watcher", watcherEnv, func(pid int) error {
		param := struct{ priority int32 }{WatcherPriority}
		if _, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(pid), uintptr(unix.SCHED_FIFO), uintptr(unsafe.Pointer(&param))); e != 0 {
			return fmt.Errorf("give %d SCHED_FIFO %d: %w", pid, WatcherPriority, e)
		}
		return nil
	}, watcherGODEBUG())
	if errors.Is(err, unix.EPERM) && cmd != nil {
		// No real-time priority for this user (no CAP_SYS_NICE, RLIMIT_RTPRIO 0): the CPU goes
		// unwatched while busy, as before the watchers; the spinner still keeps it awake.
		cmd.Process.Kill()
		cmd.Wait()
		return nil
	}
	if cmd != nil {
		k.watchers = append(k.watchers, cmd)
	}
	return err
}

// child starts this program's executable as the spinner or watcher (role, selected by env) of
// cpu, pins it there with policy set by setPolicy, and waits for its "ok"; its freezes then go
// to AddFreeze. cmd is non-nil once the process started (Stop ends it), even with an error.
func (k *Keeper) child(cpu int, role, env string, setPolicy func(pid int) error, extraEnv ...string) (cmd *exec.Cmd, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("idle poll: find this program to run as a %s: %w", role, err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("idle poll: %w", err)
	}
	cmd = exec.Command(exe)
	cmd.Env = append(append(os.Environ(), extraEnv...), fmt.Sprintf("%s=%d %d", env, cpu, os.Getpid()))
	cmd.Stdout = w
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("idle poll: start a %s: %w", role, err)
	}
	pid := cmd.Process.Pid
	var one unix.CPUSet
	one.Set(cpu)
	if err := unix.SchedSetaffinity(pid, &one); err != nil {
		r.Close()
		return cmd, fmt.Errorf("idle poll: pin a %s to CPU %d: %w", role, cpu, err)
	}
	if err := setPolicy(pid); err != nil {
		r.Close()
		return cmd, fmt.Errorf("idle poll: %s: %w", role, err)
	}
	if err := readSpinner(cpu, role, r); err != nil {
		r.Close()
		return cmd, err
	}
	return cmd, nil
}

// watcherGODEBUG is the watcher's GODEBUG: this process's, with asynchronous preemption off.
// The runtime's monitor otherwise signals (SIGURG) the watcher's thread every 10 ms, its goroutine
// never blocking in Go's view; a signal that lands in the watcher's sleep restarts it, a second
// voluntary switch in one turn, which the watcher must not take for a stop of its own.
// Cooperative preemption stays, and resumes the goroutine on its thread at once (watcher).
func watcherGODEBUG() string {
	if v := os.Getenv("GODEBUG"); v != "" {
		return "GODEBUG=" + v + ",asyncpreemptoff=1"
	}
	return "GODEBUG=asyncpreemptoff=1"
}

// Stop ends the spinners and waits for them; it may be called more than once.
func (k *Keeper) Stop() error {
	if k == nil {
		return nil
	}
	all := slices.Concat(k.cmds, k.watchers)
	spinMu.Lock()
	for _, c := range all {
		spinPIDs = slices.DeleteFunc(spinPIDs, func(p int) bool { return p == c.Process.Pid })
	}
	spinMu.Unlock()
	for _, c := range all {
		c.Process.Kill()
		c.Wait()
	}
	active.Add(-int32(len(k.CPUs)))
	k.cmds, k.watchers, k.CPUs = nil, nil, nil
	return nil
}

// Virtual reports whether this machine runs under a hypervisor: the "hypervisor" CPU flag of
// /proc/cpuinfo (CPUID leaf 1, ECX bit 31, which hypervisors set for their guests).
func Virtual() bool {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if name, flags, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "flags" {
			return strings.Contains(" "+flags+" ", " hypervisor ")
		}
	}
	return false
}
