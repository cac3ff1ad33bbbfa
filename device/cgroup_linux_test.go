package device

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestLastCPU(t *testing.T) {
	for list, want := range map[string]int{"0": 0, "0-1": 1, "0,2-3": 3, "0-3,8": 8} {
		if got, err := lastCPU(list); err != nil || got != want {
			t.Errorf("lastCPU(%q) = %d, %v, want %d", list, got, err, want)
		}
	}
	if _, err := lastCPU("a-b"); err == nil {
		t.Error("lastCPU(a-b): no error")
	}
}

// fakeRoot makes a directory tree laid out like a cgroup mount for the test and returns it.
func fakeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for f, content := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// TestGroupV2Files checks what a group writes on cgroup v2 (a fake tree: the files, not the
// kernel): the cpu and cpuset controllers enabled on the way down, cpu.max "QUOTA PERIOD", the
// one CPU, and usage and throttling read from cpu.stat.
func TestGroupV2Files(t *testing.T) {
	root := fakeRoot(t, map[string]string{"cgroup.controllers": "cpuset cpu io memory pids", "cgroup.subtree_control": ""})
	g, err := newGroup(root)
	if err != nil {
		t.Fatal(err)
	}
	if g.Version != 2 || filepath.Dir(g.Dir) != filepath.Join(root, parentName) || g.Acct != "" || g.Cpuset != "" {
		t.Fatalf("group %+v: want v2 under %s/%s", g, root, parentName)
	}
	if got := read(t, filepath.Join(root, "cgroup.subtree_control")); got != "+cpuset" { // the fake file keeps the last write
		t.Errorf("root subtree_control %q", got)
	}
	period, quota, err := g.SetBudget(0.25)
	if err != nil || period != 10000 || quota != 2500 || read(t, filepath.Join(g.Dir, "cpu.max")) != "2500 10000" {
		t.Errorf("SetBudget(0.25) = %d, %d, %v; cpu.max %q", period, quota, err, read(t, filepath.Join(g.Dir, "cpu.max")))
	}
	if _, _, err := g.SetBudget(0); err != nil || read(t, filepath.Join(g.Dir, "cpu.max")) != "max 10000" {
		t.Errorf("SetBudget(0): %v; cpu.max %q", err, read(t, filepath.Join(g.Dir, "cpu.max")))
	}
	if cpu := read(t, filepath.Join(g.Dir, "cpuset.cpus")); cpu != strconv.Itoa(g.CPU) || g.CPU < 0 {
		t.Errorf("cpuset.cpus %q, group CPU %d", cpu, g.CPU)
	}
	os.WriteFile(filepath.Join(g.Dir, "cpu.stat"), []byte("usage_usec 123456\nnr_periods 10\nnr_throttled 4\nthrottled_usec 5500\n"), 0o644)
	if ms, err := g.UsageMs(); err != nil || ms != 123.456 {
		t.Errorf("UsageMs = %v, %v, want 123.456", ms, err)
	}
	if th, err := g.Throttling(); err != nil || th != (Throttling{Periods: 10, Throttled: 4, ThrottledMs: 5.5}) {
		t.Errorf("Throttling = %+v, %v", th, err)
	}
	if files := g.JoinFiles(); len(files) != 1 || files[0] != filepath.Join(g.Dir, "cgroup.procs") {
		t.Errorf("JoinFiles = %v", files)
	}
}

// TestGroupV1Files checks the v1 layout: a group in the cpu hierarchy with period then quota,
// and twins in cpuset (pinned, memory nodes copied) and cpuacct (its usage) that the browser
// joins too.
func TestGroupV1Files(t *testing.T) {
	root := fakeRoot(t, map[string]string{"cpu/cpu.cfs_quota_us": "-1", "cpuset/cpuset.mems": "0", "cpuacct/cpuacct.usage": "0"})
	g, err := newGroup(root)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(g.Dir)
	if g.Version != 1 || g.Acct != filepath.Join(root, "cpuacct", parentName, name) || g.Cpuset != filepath.Join(root, "cpuset", parentName, name) {
		t.Fatalf("group %+v", g)
	}
	if _, _, err := g.SetBudget(0.1); err != nil {
		t.Fatal(err)
	}
	if q, p := read(t, filepath.Join(g.Dir, "cpu.cfs_quota_us")), read(t, filepath.Join(g.Dir, "cpu.cfs_period_us")); q != "1000" || p != "10000" {
		t.Errorf("quota %s period %s, want 1000 of 10000", q, p)
	}
	if m := read(t, filepath.Join(g.Cpuset, "cpuset.mems")); m != "0" {
		t.Errorf("cpuset.mems %q", m)
	}
	if n := len(g.JoinFiles()); n != 3 {
		t.Errorf("JoinFiles = %v, want cpu, cpuacct and cpuset", g.JoinFiles())
	}
	os.WriteFile(filepath.Join(g.Acct, "cpuacct.usage"), []byte("2500000\n"), 0o644)
	if ms, err := g.UsageMs(); err != nil || ms != 2.5 {
		t.Errorf("UsageMs = %v, %v, want 2.5", ms, err)
	}
}

func TestNoController(t *testing.T) {
	root := fakeRoot(t, map[string]string{"cgroup.controllers": "memory pids"})
	if _, err := newGroup(root); err == nil || !strings.Contains(err.Error(), "no cpu controller") {
		t.Errorf("NewGroup without a cpu controller: %v", err)
	}
	root = fakeRoot(t, map[string]string{"nothing": ""})
	if _, err := newGroup(root); err == nil || !strings.Contains(err.Error(), "no cgroup cpu controller") {
		t.Errorf("NewGroup without cgroups: %v", err)
	}
}

func TestBetween(t *testing.T) {
	before := map[int]Proc{
		1: {PID: 1, Type: TypeBrowser, CPUMs: 100, Start: 5},
		2: {PID: 2, Type: TypeRenderer, CPUMs: 50, Start: 6},
		3: {PID: 3, Type: TypeNetwork, CPUMs: 20, Start: 6},
		4: {PID: 4, Type: TypeOther, CPUMs: 10, Start: 6}, // exits
	}
	after := map[int]Proc{
		1: {PID: 1, Type: TypeBrowser, CPUMs: 130, Start: 5},
		2: {PID: 2, Type: TypeRenderer, CPUMs: 40, Start: 9}, // PID reused by a new renderer
		3: {PID: 3, Type: TypeNetwork, CPUMs: 50, Start: 6},
		7: {PID: 7, Type: TypeGPU, CPUMs: 10, Start: 9},
	}
	u := Between(before, after)
	want := Use{Browser: 30, Renderer: 40, Network: 30, GPU: 10, Exited: 2}
	if u != want || u.Total() != 110 {
		t.Errorf("Between = %+v (total %g), want %+v (110)", u, u.Total(), want)
	}
}

// TestIntegrationBudgetHolds puts a busy shell loop into a real group with a 0.25-core budget
// for a second: the group's CPU time must be a quarter of the wall time (within 15 %), the
// kernel must have throttled it, the process must be in the group, and Close must remove
// the group and its twins with the process killed.
func TestIntegrationBudgetHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("a real cgroup for a second: skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Fatal("needs root (a cgroup)")
	}
	g, err := NewGroup()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, _, err := g.SetBudget(0.25); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
	g.Wrap(cmd)
	u0, _ := g.UsageMs()
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if !g.Has(cmd.Process.Pid) {
		t.Errorf("process %d is not in %s", cmd.Process.Pid, g.Dir)
	}
	u1, _ := g.UsageMs()
	wall := time.Since(begin)
	th, _ := g.Throttling()
	share := (u1 - u0) / float64(wall.Milliseconds())
	t.Logf("%.1f ms of CPU in %v: %.3f cores; throttled %d of %d periods (%.0f ms)", u1-u0, wall, share, th.Throttled, th.Periods, th.ThrottledMs)
	if share < 0.25*0.85 || share > 0.25*1.15 || th.Throttled == 0 {
		t.Errorf("%.3f cores used, throttled %d times: want 0.25 +- 15 %%, throttled", share, th.Throttled)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, dir := range []string{g.Dir, g.Acct, g.Cpuset} {
		if _, err := os.Stat(dir); dir != "" && !os.IsNotExist(err) {
			t.Errorf("%s left after Close", dir)
		}
	}
}
