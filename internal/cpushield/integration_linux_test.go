package cpushield

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/pltlab/pltlab/internal/testenv"
)

// TestIntegrationShieldKernel shields CPU 0 of this machine for a moment with the kernel's own
// answers: a process that was running moves off CPU 0, as does PID 1; this process's threads
// move onto it; a child started under the shield inherits CPU 0 and the sweep moves it off;
// Stop gives every one of them its CPUs back and leaves no state file.
func TestIntegrationShieldKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("moves every task of the machine: integration only")
	}
	if os.Geteuid() != 0 {
		if testenv.InCI() {
			t.Fatal("needs root, and CI runs as root")
		}
		t.Skip("needs root")
	}
	all := Allowed()
	if len(all) < 2 || all[0] != 0 {
		t.Fatalf("this process may run on CPUs %v: the test needs CPU 0 and another", all)
	}
	k := Kernel{}
	before := exec.Command("sleep", "60")
	if err := before.Start(); err != nil {
		t.Fatal(err)
	}
	defer before.Process.Kill()
	init1, err := k.Affinity(1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "shield.json")
	s, err := Start(k, path, os.Getpid(), 0)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			s.Stop()
		}
	}()
	rest := all[1:]
	if got, _ := k.Affinity(before.Process.Pid); !slices.Equal(got, rest) {
		t.Errorf("running child on %v under the shield, want %v", got, rest)
	}
	if got, _ := k.Affinity(1); slices.Contains(got, 0) {
		t.Errorf("PID 1 on %v under the shield", got)
	}
	runtime.LockOSThread()
	self, _ := k.Affinity(0)
	runtime.UnlockOSThread()
	if !slices.Equal(self, []int{0}) {
		t.Errorf("this thread on %v under the shield, want [0]", self)
	}
	after := exec.Command("sleep", "60")
	if err := after.Start(); err != nil {
		t.Fatal(err)
	}
	defer after.Process.Kill()
	if got, _ := k.Affinity(after.Process.Pid); !slices.Equal(got, []int{0}) {
		t.Errorf("child started under the shield on %v before the sweep, want [0] (inherited)", got)
	}
	if n := s.Sweep(); n < 1 {
		t.Errorf("the sweep moved %d tasks, want the new child", n)
	}
	if got, _ := k.Affinity(after.Process.Pid); !slices.Equal(got, rest) {
		t.Errorf("child started under the shield on %v after the sweep, want %v", got, rest)
	}
	t.Logf("moved %d, pinned %d, swept %d", s.Moved, s.Pinned, s.Swept)
	if _, err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	stopped = true
	for name, pid := range map[string]int{"running child": before.Process.Pid, "child started under the shield": after.Process.Pid, "PID 1": 1} {
		want := all
		if pid == 1 {
			want = init1
		}
		if got, _ := k.Affinity(pid); !slices.Equal(got, want) {
			t.Errorf("%s (%s) on %v after Stop, want %v", name, strconv.Itoa(pid), got, want)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("state file after Stop: %v", err)
	}
}
