package cpushield

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/pltlab/pltlab/internal/fileout"
)

// StatePath is where a held shield keeps what it changed, so that the next pltlab can undo it
// after this one was killed (Recover).
const StatePath = "/run/pltlab/cpushield.json"

// Errors of the kernel's side, as a machine answers sched_setaffinity(2).
var (
	// ErrGone: the task exited (ESRCH).
	ErrGone = errors.New("no such task")
	// ErrPinned: the task may not change CPUs (EINVAL; the kernel's per-CPU threads).
	ErrPinned = errors.New("task bound to its CPUs")
	// ErrDenied: this process may not change the task's CPUs (EPERM: needs CAP_SYS_NICE).
	ErrDenied = errors.New("operation not permitted")
)

// TaskKey names one task (thread) of the machine: its process, its thread ID and its start
// time in clock ticks since boot (proc(5), /proc/PID/task/TID/stat field 22), which tells a
// reused ID apart.
type TaskKey struct {
	PID   int    `json:"pid"`
	TID   int    `json:"tid"`
	Start uint64 `json:"start"`
}

// Machine is the kernel's side of a shield: the tasks and their CPU affinities. The Linux one
// reads /proc and calls sched_getaffinity(2) and sched_setaffinity(2); tests give a fake.
type Machine interface {
	// Tasks lists every task of the machine now.
	Tasks() ([]TaskKey, error)
	// Affinity returns the CPUs tid may run on, in increasing order; ErrGone when it exited.
	Affinity(tid int) ([]int, error)
	// SetAffinity lets tid run on cpus only; ErrGone, ErrPinned or ErrDenied as the kernel says.
	SetAffinity(tid int, cpus []int) error
	// Alive reports whether process pid exists.
	Alive(pid int) bool
	// Descendants lists the tasks of every process descended from process pid (its children,
	// theirs, ...), not pid's own.
	Descendants(pid int) ([]TaskKey, error)
	// Placed reports whether tid runs in a scheduling class whose tasks are placed on their CPUs
	// on purpose (SCHED_IDLE, SCHED_FIFO, SCHED_RR: pltlab's idle-poll spinners and watchers).
	Placed(tid int) bool
}

// moved is one task a shield moved, with the CPUs it had before (Mask) and those it was given
// (Set): off the shielded CPU for every other process, onto it for the holder's threads.
type moved struct {
	TaskKey
	Mask []int `json:"mask"`
	Set  []int `json:"set"`
}

// state is what a held shield has changed (StatePath): who holds it, the CPU, the tasks it
// moved and every task that existed when it began.
type state struct {
	PID   int       `json:"pid"`
	CPU   int       `json:"cpu"`
	Moved []moved   `json:"moved"`
	Seen  []TaskKey `json:"seen"`
}

// Shield is a CPU kept for pltlab's own process (Start): the holder's threads (the emulator's
// forwarders, the server, the harness) run on it alone, and every other task that may change
// CPUs, the holder's children (the browser) included, runs on the others.
type Shield struct {
	// CPU is the shielded CPU.
	CPU int
	// Moved is the number of tasks moved off CPU (or, the holder's, onto it); Pinned the
	// number of other tasks left on it because the kernel binds them there (per-CPU kernel
	// threads, or a task allowed that CPU alone).
	Moved, Pinned int
	// Swept is the number of the holder's descendants moved off CPU since Start (Sweep): a
	// child inherits the holder's CPU at fork.
	Swept int
	m     Machine
	path  string
	st    state
	seen  map[TaskKey]bool
	rest  []int // the CPUs the holder was allowed, less CPU: where a descendant goes
}

// Start shields cpu on this machine for process pid: it moves every other process's task whose
// affinity holds cpu and another CPU to the same CPUs less cpu, and every thread of pid onto
// cpu alone (its later threads inherit that), over up to three passes (a task forked during a
// pass is moved in the next), after writing what it changes to path. The caller sweeps pid's
// descendants off cpu from then on (Sweep). Errors: a shield already held (in this process,
// or by a living process in path), the machine's answers, and ErrDenied for a task it may not
// move (then it undoes what it did).
func Start(m Machine, path string, pid, cpu int) (*Shield, error) {
	if c, ok := Current(); ok {
		return nil, fmt.Errorf("cpushield: CPU %d is already shielded by this process", c)
	}
	if err := recoverState(m, path); err != nil {
		return nil, err
	}
	s := &Shield{CPU: cpu, m: m, path: path, st: state{PID: pid, CPU: cpu}, seen: map[TaskKey]bool{}}
	for range 3 {
		fresh, err := s.pass()
		if err != nil {
			s.undo()
			return nil, err
		}
		if !fresh {
			break
		}
	}
	current.Store(int32(cpu + 1))
	return s, nil
}

// pass moves the tasks not seen before; fresh reports whether there were any.
func (s *Shield) pass() (fresh bool, err error) {
	tasks, err := s.m.Tasks()
	if err != nil {
		return false, fmt.Errorf("cpushield: list tasks: %w", err)
	}
	var todo []moved
	for _, t := range tasks {
		if s.seen[t] {
			continue
		}
		s.seen[t], fresh = true, true
		s.st.Seen = append(s.st.Seen, t)
		mask, err := s.m.Affinity(t.TID)
		switch {
		case err != nil:
		case t.PID == s.st.PID:
			if s.rest == nil {
				s.rest = without(mask, s.CPU)
			}
			if !slices.Equal(mask, []int{s.CPU}) {
				todo = append(todo, moved{t, mask, []int{s.CPU}})
			}
		case !slices.Contains(mask, s.CPU):
		case len(mask) == 1:
			s.Pinned++
		default:
			todo = append(todo, moved{t, mask, without(mask, s.CPU)})
		}
	}
	s.st.Moved = append(s.st.Moved, todo...)
	if err := s.save(); err != nil {
		return fresh, err
	}
	for _, t := range todo {
		switch err := s.m.SetAffinity(t.TID, t.Set); {
		case err == nil:
			s.Moved++
		case errors.Is(err, ErrPinned):
			s.Pinned++
		case errors.Is(err, ErrGone):
		default:
			return fresh, fmt.Errorf("cpushield: move task %d off CPU %d: %w", t.TID, s.CPU, err)
		}
	}
	return fresh, nil
}

// Sweep moves the holder's descendants that run on the shielded CPU (a child inherits the CPU
// of the thread that forked it) to the CPUs the holder had less it, except the tasks placed on
// purpose (Machine.Placed), and returns how many it moved. pltlab calls it every SweepEvery
// while it holds the shield, so a browser runs on the shielded CPU for at most that long after
// it starts.
func (s *Shield) Sweep() int {
	tasks, err := s.m.Descendants(s.st.PID)
	if err != nil || len(s.rest) == 0 {
		return 0
	}
	n := 0
	for _, t := range tasks {
		mask, err := s.m.Affinity(t.TID)
		if err != nil || !slices.Contains(mask, s.CPU) || s.m.Placed(t.TID) {
			continue
		}
		if s.m.SetAffinity(t.TID, s.rest) == nil {
			n++
		}
	}
	s.Swept += n
	return n
}

// save writes the shield's state to its path.
func (s *Shield) save() error {
	return fileout.Create(s.path, func(w io.Writer) error { return json.NewEncoder(w).Encode(s.st) })
}

// Stop gives the CPU back: every task the shield moved gets its CPUs back, and every task
// born while it held with the CPUs the shield gave a moved task (it inherited them from its
// parent) gets that task's CPUs from before. A task that changed its own affinity
// since is left as it is. It returns how many tasks it restored; a nil Shield does nothing.
func (s *Shield) Stop() (restored int, err error) {
	if s == nil {
		return 0, nil
	}
	defer current.Store(0)
	return s.undo(), s.remove()
}

// undo restores the tasks of s.st (restore).
func (s *Shield) undo() int { return restore(s.m, s.st) }

// remove deletes the state file; one already gone is no error.
func (s *Shield) remove() error {
	if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("cpushield: %w", err)
	}
	return nil
}

// restore undoes st on m and returns how many tasks it changed.
func restore(m Machine, st state) int {
	tasks, err := m.Tasks()
	if err != nil {
		return 0
	}
	alive := make(map[TaskKey]bool, len(tasks))
	for _, t := range tasks {
		alive[t] = true
	}
	seen := make(map[TaskKey]bool, len(st.Seen))
	for _, t := range st.Seen {
		seen[t] = true
	}
	n := 0
	for _, t := range st.Moved {
		if !alive[t.TaskKey] {
			continue
		}
		if now, err := m.Affinity(t.TID); err == nil && slices.Equal(now, t.Set) && m.SetAffinity(t.TID, t.Mask) == nil {
			n++
		}
	}
	for _, t := range tasks {
		if seen[t] {
			continue
		}
		now, err := m.Affinity(t.TID)
		if err != nil {
			continue
		}
		if was, ok := inherited(now, st); ok && m.SetAffinity(t.TID, was) == nil {
			n++
		}
	}
	return n
}

// inherited reports whether mask is one the shield gave a task it moved (what a task born under
// the shield inherits from its parent), and returns the CPUs that task had before.
func inherited(mask []int, st state) (was []int, ok bool) {
	i := slices.IndexFunc(st.Moved, func(t moved) bool { return slices.Equal(mask, t.Set) })
	if i < 0 {
		return nil, false
	}
	return st.Moved[i].Mask, true
}

// Recover undoes a shield that a pltlab killed before its Stop left at path, unless the process
// that holds it is alive: it returns the holder's PID and how many tasks it restored (0, 0 when
// there was none to undo), or an error when path cannot be read or removed.
func Recover(m Machine, path string) (pid, restored int, err error) {
	st, ok, err := readState(path)
	if err != nil || !ok || m.Alive(st.PID) {
		return 0, 0, err
	}
	restored = restore(m, st)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return st.PID, restored, fmt.Errorf("cpushield: %w", err)
	}
	return st.PID, restored, nil
}

// recoverState is Recover for Start: a living holder is an error.
func recoverState(m Machine, path string) error {
	st, ok, err := readState(path)
	if err != nil || !ok {
		return err
	}
	if m.Alive(st.PID) {
		return fmt.Errorf("cpushield: CPU %d is shielded by pltlab process %d (%s); one shield at a time", st.CPU, st.PID, path)
	}
	_, _, err = Recover(m, path)
	return err
}

// readState reads path; ok is false when there is no file.
func readState(path string) (st state, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, false, nil
	}
	if err != nil {
		return st, false, fmt.Errorf("cpushield: %w", err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, false, fmt.Errorf("cpushield: %s: %w", path, err)
	}
	return st, true, nil
}

// without returns mask less cpu.
func without(mask []int, cpu int) []int {
	return slices.DeleteFunc(slices.Clone(mask), func(c int) bool { return c == cpu })
}
