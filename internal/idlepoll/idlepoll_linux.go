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
	"syscall"

	"golang.org/x/sys/unix"
)

// Keeper holds the spinners of one Start.
type Keeper struct {
	cmds []*exec.Cmd
	// CPUs are the CPUs kept awake.
	CPUs []int
}

// Start starts one spinner per CPU this process may run on: this program's own executable run
// as a spinner (spinnerEnv), pinned there (sched_setaffinity) at SCHED_IDLE, the lowest
// priority, reporting the freezes it sees (Stolen, Freezes). A spinner ends with Stop, with
// this process's death (Pdeathsig) and, should that signal be missed, by itself once its parent
// is gone. Errors: the executable cannot be started, a spinner's affinity or policy cannot be
// set, or it does not report ready within 10 s; then no spinner is left.
func Start() (*Keeper, error) {
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
	}
	active.Add(int32(len(k.CPUs)))
	spinMu.Lock()
	for _, c := range k.cmds {
		spinPIDs = append(spinPIDs, c.Process.Pid)
	}
	spinMu.Unlock()
	return k, nil
}

// spinPIDs are the spinners running now, for Ticks.
var (
	spinMu   sync.Mutex
	spinPIDs []int
)

// Ticks is the CPU time, in clock ticks (user plus system, /proc/PID/stat fields 14 and 15),
// that the spinners running now have used since they started: what a reading of the
// machine's busy time (package hostload) leaves out, so that the spinners do not count as load.
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
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("idle poll: find this program to run as a spinner: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("idle poll: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %d", spinnerEnv, cpu, os.Getpid()))
	cmd.Stdout = w
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return fmt.Errorf("idle poll: start a spinner: %w", err)
	}
	k.cmds = append(k.cmds, cmd)
	pid := cmd.Process.Pid
	var one unix.CPUSet
	one.Set(cpu)
	if err := unix.SchedSetaffinity(pid, &one); err != nil {
		r.Close()
		return fmt.Errorf("idle poll: pin a spinner to CPU %d: %w", cpu, err)
	}
	if err := setIdle(pid); err != nil {
		r.Close()
		return fmt.Errorf("idle poll: spinner: %w", err)
	}
	if err := readSpinner(cpu, r); err != nil {
		r.Close()
		return err
	}
	k.CPUs = append(k.CPUs, cpu)
	return nil
}

// Stop ends the spinners and waits for them; it may be called more than once.
func (k *Keeper) Stop() error {
	if k == nil {
		return nil
	}
	spinMu.Lock()
	for _, c := range k.cmds {
		spinPIDs = slices.DeleteFunc(spinPIDs, func(p int) bool { return p == c.Process.Pid })
	}
	spinMu.Unlock()
	for _, c := range k.cmds {
		c.Process.Kill()
		c.Wait()
	}
	active.Add(-int32(len(k.CPUs)))
	k.cmds, k.CPUs = nil, nil
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
