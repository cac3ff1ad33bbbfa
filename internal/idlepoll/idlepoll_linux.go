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
	"unsafe"

	"golang.org/x/sys/unix"
)

// spinScript is what each spinner runs: a shell loop that ends when its parent (pltlab) is gone,
// besides the SIGKILL it gets when the parent's thread dies (Pdeathsig), so no spinner outlives
// a killed pltlab.
const spinScript = `while kill -0 "$1" 2>/dev/null; do :; done`

// Keeper holds the spinners of one Start.
type Keeper struct {
	cmds []*exec.Cmd
	// CPUs are the CPUs kept awake.
	CPUs []int
}

// Start starts one spinner (/bin/sh running spinScript) per CPU this process may run on, pins
// it there (sched_setaffinity) and gives it SCHED_IDLE, the lowest priority. Errors: /bin/sh
// cannot be started or a spinner's affinity or policy cannot be set; then no spinner is left.
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

// spin starts the spinner of cpu.
func (k *Keeper) spin(cpu int) error {
	cmd := exec.Command("/bin/sh", "-c", spinScript, "pltlab-idle-poll", strconv.Itoa(os.Getpid()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("idle poll: start a spinner: %w", err)
	}
	k.cmds = append(k.cmds, cmd)
	pid := cmd.Process.Pid
	var one unix.CPUSet
	one.Set(cpu)
	if err := unix.SchedSetaffinity(pid, &one); err != nil {
		return fmt.Errorf("idle poll: pin a spinner to CPU %d: %w", cpu, err)
	}
	param := struct{ priority int32 }{0}
	if _, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(pid), uintptr(unix.SCHED_IDLE), uintptr(unsafe.Pointer(&param))); e != 0 {
		return fmt.Errorf("idle poll: give a spinner SCHED_IDLE: %w", e)
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
