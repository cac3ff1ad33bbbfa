package cpushield

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeMachine is a machine of tasks with affinities; each task is a process of its own (PID
// = TID) unless add says otherwise; spawn, when set, runs after each SetAffinity (a task that
// forks while the shield moves it).
type fakeMachine struct {
	mask   map[TaskKey][]int
	denied map[int]bool
	pinned map[int]bool
	placed map[int]bool
	alive  map[int]bool
	parent map[int]int // process -> its parent process
	spawn  func(f *fakeMachine, tid int)
}

func newFake(masks map[int][]int) *fakeMachine {
	f := &fakeMachine{mask: map[TaskKey][]int{}, denied: map[int]bool{}, pinned: map[int]bool{},
		placed: map[int]bool{}, alive: map[int]bool{}, parent: map[int]int{}}
	for tid, m := range masks {
		f.add(tid, tid, m)
	}
	return f
}

func (f *fakeMachine) add(pid, tid int, mask []int) {
	f.mask[TaskKey{pid, tid, uint64(tid * 10)}] = mask
}

func (f *fakeMachine) Descendants(pid int) ([]TaskKey, error) {
	var out []TaskKey
	for k := range f.mask {
		for p := f.parent[k.PID]; p != 0; p = f.parent[p] {
			if p == pid {
				out = append(out, k)
				break
			}
		}
	}
	return out, nil
}

func (f *fakeMachine) Placed(tid int) bool { return f.placed[tid] }

func (f *fakeMachine) key(tid int) (TaskKey, bool) {
	for k := range f.mask {
		if k.TID == tid {
			return k, true
		}
	}
	return TaskKey{}, false
}

func (f *fakeMachine) Tasks() ([]TaskKey, error) {
	var out []TaskKey
	for k := range f.mask {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b TaskKey) int { return a.TID - b.TID })
	return out, nil
}

func (f *fakeMachine) Affinity(tid int) ([]int, error) {
	k, ok := f.key(tid)
	if !ok {
		return nil, ErrGone
	}
	return slices.Clone(f.mask[k]), nil
}

func (f *fakeMachine) SetAffinity(tid int, cpus []int) error {
	k, ok := f.key(tid)
	switch {
	case !ok:
		return ErrGone
	case f.denied[tid]:
		return ErrDenied
	case f.pinned[tid]:
		return ErrPinned
	}
	f.mask[k] = slices.Clone(cpus)
	if f.spawn != nil {
		f.spawn(f, tid)
	}
	return nil
}

func (f *fakeMachine) Alive(pid int) bool { return f.alive[pid] }

func (f *fakeMachine) of(tid int) []int { m, _ := f.Affinity(tid); return m }

// TestStartStop: a shield of CPU 0 on a 2-CPU machine moves every task allowed both CPUs to
// CPU 1, leaves one allowed CPU 1 alone, counts a per-CPU kernel thread and a task allowed CPU
// 0 alone as pinned, and Stop gives each moved task its CPUs back, adds CPU 0 to a task born
// under the shield, and leaves a task that changed its own CPUs as it set them.
func TestStartStop(t *testing.T) {
	f := newFake(map[int][]int{1: {0, 1}, 2: {0, 1}, 3: {1}, 4: {0}, 5: {0, 1}, 6: {0, 1, 2, 3}})
	f.pinned[5] = true
	f.add(99, 99, []int{0, 1}) // the holder's threads
	f.add(99, 100, []int{0, 1})
	path := filepath.Join(t.TempDir(), "s.json")
	s, err := Start(f, path, 99, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cpu, ok := Current(); !ok || cpu != 0 {
		t.Fatalf("Current() = %d, %t; want 0, true", cpu, ok)
	}
	if s.Moved != 5 || s.Pinned != 2 {
		t.Errorf("moved %d, pinned %d; want 5 (tasks 1, 2, 6 off CPU 0; 99, 100 onto it) and 2 (4, 5)", s.Moved, s.Pinned)
	}
	for tid, want := range map[int][]int{1: {1}, 2: {1}, 3: {1}, 4: {0}, 5: {0, 1}, 6: {1, 2, 3}, 99: {0}, 100: {0}} {
		if got := f.of(tid); !slices.Equal(got, want) {
			t.Errorf("task %d on %v under the shield, want %v", tid, got, want)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), `"pid":99`) {
		t.Fatalf("state file %q, %v", b, err)
	}
	f.add(7, 7, []int{1})    // born under the shield from a moved parent
	f.add(2, 2, []int{1, 2}) // changed its own CPUs
	f.add(8, 8, []int{2, 3}) // born elsewhere, with CPUs of its own
	f.add(99, 101, []int{0}) // the holder's thread born under the shield
	n, err := s.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Current(); ok {
		t.Error("Current() still reports a shield after Stop")
	}
	for tid, want := range map[int][]int{1: {0, 1}, 2: {1, 2}, 3: {1}, 4: {0}, 6: {0, 1, 2, 3}, 7: {0, 1}, 8: {2, 3}, 99: {0, 1}, 100: {0, 1}, 101: {0, 1}} {
		if got := f.of(tid); !slices.Equal(got, want) {
			t.Errorf("task %d on %v after Stop, want %v", tid, got, want)
		}
	}
	if n != 6 {
		t.Errorf("restored %d, want 6 (tasks 1, 6, 7, 99, 100, 101)", n)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("state file left after Stop: %v", err)
	}
}

// TestStartForkDuringPass: a task forked while the first pass moved its parent, with the
// parent's old CPUs, is moved by the next pass.
func TestStartForkDuringPass(t *testing.T) {
	f := newFake(map[int][]int{1: {0, 1}})
	f.spawn = func(f *fakeMachine, tid int) {
		if tid == 1 {
			f.add(2, 2, []int{0, 1})
			f.spawn = nil
		}
	}
	s, err := Start(f, filepath.Join(t.TempDir(), "s.json"), 99, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if got := f.of(2); !slices.Equal(got, []int{1}) || s.Moved != 2 {
		t.Errorf("forked task on %v, moved %d; want [1] and 2", got, s.Moved)
	}
}

// TestStartDenied: a task the process may not move fails Start, which undoes what it moved
// and holds no shield.
func TestStartDenied(t *testing.T) {
	f := newFake(map[int][]int{1: {0, 1}, 2: {0, 1}, 3: {0, 1}})
	f.denied[2] = true
	path := filepath.Join(t.TempDir(), "s.json")
	_, err := Start(f, path, 99, 0)
	if err == nil || !strings.Contains(err.Error(), "move task 2 off CPU 0") {
		t.Fatalf("Start: %v; want the task it may not move", err)
	}
	if _, ok := Current(); ok {
		t.Error("a failed Start holds a shield")
	}
	for tid := 1; tid <= 3; tid++ {
		if got := f.of(tid); !slices.Equal(got, []int{0, 1}) {
			t.Errorf("task %d on %v after a failed Start, want [0 1]", tid, got)
		}
	}
}

// TestRecover: the state a killed holder left is undone by the next Start (or Recover); a
// living holder's is refused.
func TestRecover(t *testing.T) {
	f := newFake(map[int][]int{1: {0, 1}, 2: {0, 1}})
	path := filepath.Join(t.TempDir(), "s.json")
	s, err := Start(f, path, 42, 0)
	if err != nil {
		t.Fatal(err)
	}
	current.Store(0) // the holder was killed: its Stop never ran
	_ = s
	f.alive[42] = true
	if _, err := Start(f, path, 43, 1); err == nil || !strings.Contains(err.Error(), "shielded by pltlab process 42") {
		t.Fatalf("Start beside a living holder: %v", err)
	}
	if pid, n, err := Recover(f, path); err != nil || pid != 0 || n != 0 {
		t.Errorf("Recover beside a living holder: %d, %d, %v; want nothing done", pid, n, err)
	}
	f.alive[42] = false
	pid, n, err := Recover(f, path)
	if err != nil || pid != 42 || n != 2 {
		t.Fatalf("Recover: pid %d, restored %d, %v; want 42, 2", pid, n, err)
	}
	if got := f.of(1); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("task 1 on %v after Recover", got)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("state file left after Recover: %v", err)
	}
}

// TestSweep: the holder's descendants on the shielded CPU (a browser forked from one of its
// threads, the browser's own children) go to the holder's other CPUs, except a task placed on
// purpose (an idle-poll spinner); other processes are left to Start.
func TestSweep(t *testing.T) {
	f := newFake(map[int][]int{1: {0, 1}})
	f.add(99, 99, []int{0, 1})
	s, err := Start(f, filepath.Join(t.TempDir(), "s.json"), 99, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	f.add(200, 200, []int{0}) // the browser, forked from a holder thread
	f.add(200, 201, []int{0})
	f.add(300, 300, []int{0}) // its child
	f.add(400, 400, []int{0}) // a spinner pinned to CPU 0
	f.add(500, 500, []int{0}) // not a descendant
	f.parent[200], f.parent[300], f.parent[400], f.parent[500] = 99, 200, 99, 1
	f.placed[400] = true
	if n := s.Sweep(); n != 3 || s.Swept != 3 {
		t.Errorf("swept %d (total %d), want 3", n, s.Swept)
	}
	for tid, want := range map[int][]int{200: {1}, 201: {1}, 300: {1}, 400: {0}, 500: {0}} {
		if got := f.of(tid); !slices.Equal(got, want) {
			t.Errorf("task %d on %v after Sweep, want %v", tid, got, want)
		}
	}
	if n := s.Sweep(); n != 0 {
		t.Errorf("a second sweep moved %d", n)
	}
}

// TestParseFlag: the accepted values and the one-line errors.
func TestParseFlag(t *testing.T) {
	for _, c := range []struct {
		in      string
		allowed []int
		cpu     int
		on      bool
		err     string
	}{
		{"off", []int{0, 1}, -1, false, ""},
		{"", []int{0, 1}, -1, false, ""},
		{"1", []int{0, 1}, 1, true, ""},
		{"0", []int{0, 1, 2, 3}, 0, true, ""},
		{"2", []int{0, 1}, -1, false, `--shield-cpu 2: accepted: off or one of this machine's CPUs [0 1]`},
		{"x", []int{0, 1}, -1, false, `--shield-cpu "x": accepted: off or one of`},
		{"-1", []int{0, 1}, -1, false, `--shield-cpu "-1": accepted`},
		{"0", []int{0}, -1, false, "a shield needs one for the emulator and at least one for the rest"},
	} {
		cpu, on, err := ParseFlag(c.in, c.allowed)
		if cpu != c.cpu || on != c.on || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("ParseFlag(%q, %v) = %d, %t, %v; want %d, %t, %q", c.in, c.allowed, cpu, on, err, c.cpu, c.on, c.err)
		}
	}
}
