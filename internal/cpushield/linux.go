//go:build linux

package cpushield

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Kernel is the Linux machine: /proc for the tasks, sched_getaffinity(2) and
// sched_setaffinity(2) for their CPUs.
type Kernel struct{}

// Tasks lists every thread of every process in /proc with its start time.
func (Kernel) Tasks() ([]TaskKey, error) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []TaskKey
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		dir := "/proc/" + p.Name() + "/task/"
		tids, err := os.ReadDir(dir)
		if err != nil {
			continue // the process exited
		}
		pid, _ := strconv.Atoi(p.Name())
		out = append(out, threads(pid, dir, tids)...)
	}
	return out, nil
}

// threads returns the tasks of process pid from the entries of its task directory dir.
func threads(pid int, dir string, tids []os.DirEntry) []TaskKey {
	var out []TaskKey
	for _, t := range tids {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		if start, ok := startTime(dir + t.Name() + "/stat"); ok {
			out = append(out, TaskKey{PID: pid, TID: tid, Start: start})
		}
	}
	return out
}

// Descendants lists the tasks of every process descended from pid, read from each task's
// children file (proc(5), /proc/PID/task/TID/children).
func (Kernel) Descendants(pid int) ([]TaskKey, error) {
	var out []TaskKey
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		dir := "/proc/" + strconv.Itoa(p) + "/task/"
		tids, err := os.ReadDir(dir)
		if err != nil {
			continue // exited
		}
		if p != pid {
			out = append(out, threads(p, dir, tids)...)
		}
		for _, t := range tids {
			b, _ := os.ReadFile(dir + t.Name() + "/children")
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					queue = append(queue, c)
				}
			}
		}
	}
	return out, nil
}

// Placed reports whether tid runs as SCHED_IDLE, SCHED_FIFO or SCHED_RR
// (sched_getscheduler(2)).
func (Kernel) Placed(tid int) bool {
	p, _, errno := unix.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
	if errno != 0 {
		return false
	}
	switch int(p) &^ unix.SCHED_RESET_ON_FORK {
	case unix.SCHED_IDLE, unix.SCHED_FIFO, unix.SCHED_RR:
		return true
	}
	return false
}

// startTime reads field 22 (starttime, clock ticks since boot) of a stat file (proc(5)); the
// fields are counted after the command name's closing parenthesis, since the name may hold
// spaces.
func startTime(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:]) // field 3 (state) on
	if len(f) < 20 {
		return 0, false
	}
	v, err := strconv.ParseUint(f[19], 10, 64)
	return v, err == nil
}

// Affinity returns the CPUs tid may run on.
func (Kernel) Affinity(tid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &set); err != nil {
		return nil, kernelErr(err)
	}
	return cpus(&set), nil
}

// SetAffinity lets tid run on list only.
func (Kernel) SetAffinity(tid int, list []int) error {
	var set unix.CPUSet
	for _, c := range list {
		set.Set(c)
	}
	return kernelErr(unix.SchedSetaffinity(tid, &set))
}

// Alive reports whether process pid exists (kill(2) with signal 0: EPERM means it does).
func (Kernel) Alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// kernelErr maps the kernel's errno to this package's errors.
func kernelErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ESRCH):
		return ErrGone
	case errors.Is(err, unix.EINVAL):
		return ErrPinned
	case errors.Is(err, unix.EPERM):
		return ErrDenied
	}
	return err
}

// cpus lists the CPUs of set in increasing order.
func cpus(set *unix.CPUSet) []int {
	var out []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

// Allowed lists the CPUs this process may run on (its affinity), in increasing order; nil when
// it cannot be read.
func Allowed() []int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	return cpus(&set)
}

// PinThread pins the calling thread, which the caller has locked to its goroutine
// (runtime.LockOSThread), to the shielded CPU when this process holds a shield, and reports
// whether it did. The emulator's forwarders and the link check's probes call it: the process
// is there already, but a thread may have been given other CPUs before the shield began.
func PinThread() bool {
	cpu, ok := Current()
	if !ok {
		return false
	}
	var set unix.CPUSet
	set.Set(cpu)
	return unix.SchedSetaffinity(0, &set) == nil
}
