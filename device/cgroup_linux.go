package device

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroupMount is where the cgroup filesystems are mounted (tests pass a fake tree to newGroup).
const cgroupMount = "/sys/fs/cgroup"

// parentName is the directory under the cpu hierarchy that holds pltlab's groups, one per
// browser: PARENT/PID-N, PID the pltlab process that made it (CleanStale removes those of dead
// processes).
const parentName = "pltlab"

var groupSeq atomic.Int64

// Group is one cgroup with a CPU budget, holding one browser's process tree.
type Group struct {
	// Dir is the group's directory, e.g. /sys/fs/cgroup/cpu/pltlab/4711-1 (v1) or
	// /sys/fs/cgroup/pltlab/4711-1 (v2).
	Dir string
	// Version is the cgroup version, 1 or 2.
	Version int
	// Acct is the directory whose cpuacct.usage (v1) counts the group's CPU time: Dir when the
	// cpuacct controller shares the cpu hierarchy, else a twin group in the cpuacct hierarchy
	// that the browser joins too; "" on v2 (cpu.stat's usage_usec).
	Acct string
	// CPU is the one CPU the group's processes run on (cpuset), or -1 when none could be set.
	// A CFS budget shared by threads on several CPUs is handed out in slices
	// (sched_cfs_bandwidth_slice_us, 5 ms by default) that a CPU keeps while its other threads
	// hardly use them: measured here, a 0.25-core budget over 2 CPUs slowed a script 6.65x
	// instead of 4x. On one CPU the whole quota goes to whichever of the tree's threads runs,
	// which is also the model: one of the device's cores, at the device's speed.
	CPU int
	// Cpuset is the group's directory in the v1 cpuset hierarchy ("" on v2, where Dir has it).
	Cpuset string
	// rel is Dir relative to its hierarchy's root, as /proc/PID/cgroup shows it ("/pltlab/4711-1").
	rel string
}

// hierarchy returns the cgroup version the cpu controller is mounted at under mount and its
// root: v1 when a cpu hierarchy with CFS bandwidth exists (cgroup v1, or a hybrid), else v2
// when the unified hierarchy offers the cpu controller. The error names what is missing.
func hierarchy(mount string) (version int, root string, err error) {
	v1 := filepath.Join(mount, "cpu")
	if _, err := os.Stat(filepath.Join(v1, "cpu.cfs_quota_us")); err == nil {
		return 1, v1, nil
	}
	ctrl, err := os.ReadFile(filepath.Join(mount, "cgroup.controllers"))
	if err == nil {
		if !strings.Contains(" "+strings.TrimSpace(string(ctrl))+" ", " cpu ") {
			return 0, "", fmt.Errorf("the unified cgroup hierarchy at %s offers no cpu controller (cgroup.controllers: %q)", mount, strings.TrimSpace(string(ctrl)))
		}
		return 2, mount, nil
	}
	return 0, "", fmt.Errorf("no cgroup cpu controller at %s (neither cgroup v1's cpu/cpu.cfs_quota_us nor cgroup v2's cgroup.controllers)", mount)
}

// NewGroup makes a new group without a budget (SetBudget gives it one). On cgroup v2 it enables
// the cpu controller for pltlab's parent group. Errors say what the kernel refused (EACCES as a
// user without a delegated cgroup, EROFS in a container): the device cannot be emulated with a
// budget here, only with CDP throttling.
func NewGroup() (*Group, error) { return newGroup(cgroupMount) }

// newGroup is NewGroup with the cgroup filesystems mounted at mount.
func newGroup(mount string) (*Group, error) {
	v, root, err := hierarchy(mount)
	if err != nil {
		return nil, err
	}
	parent := filepath.Join(root, parentName)
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("make cgroup %s: %w (a CPU budget needs root or a delegated cgroup; :cdp throttles the renderer without one)", parent, err)
	}
	if v == 2 {
		for _, dir := range []string{root, parent} {
			if err := enableCPU(dir); err != nil {
				return nil, err
			}
		}
	}
	name := fmt.Sprintf("%d-%d", os.Getpid(), groupSeq.Add(1))
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make cgroup %s: %w", dir, err)
	}
	g := &Group{Dir: dir, Version: v, rel: "/" + parentName + "/" + name, CPU: -1}
	if err := g.pin(mount, name); err != nil {
		_ = g.Close()
		return nil, err
	}
	if v == 1 {
		g.Acct = dir
		if _, err := os.Stat(filepath.Join(dir, "cpuacct.usage")); err != nil {
			acct := filepath.Join(mount, "cpuacct", parentName)
			if err := os.MkdirAll(filepath.Join(acct, name), 0o755); err != nil {
				_ = os.Remove(dir)
				return nil, fmt.Errorf("make cgroup %s: %w", filepath.Join(acct, name), err)
			}
			g.Acct = filepath.Join(acct, name)
		}
	}
	return g, nil
}

// pin puts the group on the last online CPU (cpuset.cpus; on v1 a twin group in the cpuset
// hierarchy under mount, whose memory nodes it copies from the root).
func (g *Group) pin(mount, name string) error {
	online, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return fmt.Errorf("read the online CPUs: %w", err)
	}
	cpu, err := lastCPU(strings.TrimSpace(string(online)))
	if err != nil {
		return err
	}
	if g.Version == 2 {
		for _, dir := range []string{mount, filepath.Dir(g.Dir)} {
			if err := enable(dir, "cpuset"); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(g.Dir, "cpuset.cpus"), []byte(strconv.Itoa(cpu)), 0o644); err != nil {
			return fmt.Errorf("pin cgroup %s to CPU %d: %w", g.Dir, cpu, err)
		}
		g.CPU = cpu
		return nil
	}
	root := filepath.Join(mount, "cpuset")
	mems, err := os.ReadFile(filepath.Join(root, "cpuset.mems"))
	if err != nil {
		return fmt.Errorf("no cgroup v1 cpuset hierarchy at %s: %w", root, err)
	}
	parent := filepath.Join(root, parentName)
	dir := filepath.Join(parent, name)
	for _, d := range []string{parent, dir} {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("make cgroup %s: %w", d, err)
		}
		for file, val := range map[string]string{"cpuset.cpus": strconv.Itoa(cpu), "cpuset.mems": strings.TrimSpace(string(mems))} {
			if d == parent {
				if cur, _ := os.ReadFile(filepath.Join(d, file)); strings.TrimSpace(string(cur)) != "" && file == "cpuset.mems" {
					continue
				}
				if file == "cpuset.cpus" { // the parent spans every CPU; children pick theirs
					val = strings.TrimSpace(string(online))
				}
			}
			if err := os.WriteFile(filepath.Join(d, file), []byte(val), 0o644); err != nil {
				return fmt.Errorf("set %s of cgroup %s: %w", file, d, err)
			}
		}
	}
	g.Cpuset, g.CPU = dir, cpu
	return nil
}

// lastCPU returns the highest CPU of a list such as "0-1" or "0,2-3".
func lastCPU(list string) (int, error) {
	last := -1
	for _, part := range strings.Split(list, ",") {
		_, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = part
		}
		n, err := strconv.Atoi(strings.TrimSpace(hi))
		if err != nil {
			return 0, fmt.Errorf("bad CPU list %q", list)
		}
		last = max(last, n)
	}
	return last, nil
}

// enableCPU adds the cpu controller to dir's cgroup.subtree_control (cgroup v2) unless it is there.
func enableCPU(dir string) error { return enable(dir, "cpu") }

// enable adds controller to dir's cgroup.subtree_control (cgroup v2) unless it is there.
func enable(dir, controller string) error {
	f := filepath.Join(dir, "cgroup.subtree_control")
	b, err := os.ReadFile(f)
	if err == nil && strings.Contains(" "+strings.TrimSpace(string(b))+" ", " "+controller+" ") {
		return nil
	}
	if err := os.WriteFile(f, []byte("+"+controller), 0o644); err != nil {
		return fmt.Errorf("enable the %s controller in %s: %w", controller, f, err)
	}
	return nil
}

// ProcsFile is the file a process writes its PID to to join the group.
func (g *Group) ProcsFile() string { return filepath.Join(g.Dir, "cgroup.procs") }

// JoinFiles are the files a process writes its PID to, in order, to join the group: ProcsFile
// and, on v1 with a separate cpuacct hierarchy, its twin's.
func (g *Group) JoinFiles() []string {
	files := []string{g.ProcsFile()}
	if g.Acct != "" && g.Acct != g.Dir {
		files = append(files, filepath.Join(g.Acct, "cgroup.procs"))
	}
	if g.Cpuset != "" {
		files = append(files, filepath.Join(g.Cpuset, "cgroup.procs"))
	}
	return files
}

// Wrap makes cmd join the group before it runs (JoinCommand with JoinFiles).
func (g *Group) Wrap(cmd *exec.Cmd) { JoinCommand(cmd, g.JoinFiles()) }

// JoinCommand wraps cmd so that its process writes its own PID to each of files (a group's
// JoinFiles) before it becomes cmd's program: /bin/sh -c 'echo $$ > "$1" && ... && exec "$@"'.
// Every process it forks is then in the group from its start.
func JoinCommand(cmd *exec.Cmd, files []string) {
	var script strings.Builder
	for i := range files {
		fmt.Fprintf(&script, `echo $$ > "$%d" && `, i+1)
	}
	fmt.Fprintf(&script, `shift %d && exec "$@"`, len(files))
	args := append([]string{"sh", "-c", script.String(), "sh"}, files...)
	cmd.Args = append(append(args, cmd.Path), cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
}

// UsageMs is the CPU time the group's processes spent so far, all CPUs together, in ms (ns
// precision: v1 cpuacct.usage, v2 cpu.stat usage_usec).
func (g *Group) UsageMs() (float64, error) {
	if g.Version == 2 {
		b, err := os.ReadFile(filepath.Join(g.Dir, "cpu.stat"))
		if err != nil {
			return 0, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				return float64(n) / 1e3, err
			}
		}
		return 0, fmt.Errorf("%s: no usage_usec", filepath.Join(g.Dir, "cpu.stat"))
	}
	b, err := os.ReadFile(filepath.Join(g.Acct, "cpuacct.usage"))
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return float64(n) / 1e6, err
}

// SetBudget caps the group at cpus cores (Budget's period and quota); cpus 0 lifts the cap.
// It returns the period and quota written (µs; quota -1 for no cap).
func (g *Group) SetBudget(cpus float64) (periodUs, quotaUs int, err error) {
	periodUs, quotaUs = BasePeriod, -1
	if cpus > 0 {
		periodUs, quotaUs = Budget(cpus)
	}
	if g.Version == 2 {
		q := "max"
		if quotaUs > 0 {
			q = strconv.Itoa(quotaUs)
		}
		err = os.WriteFile(filepath.Join(g.Dir, "cpu.max"), []byte(fmt.Sprintf("%s %d", q, periodUs)), 0o644)
		return periodUs, quotaUs, err
	}
	// v1: lift the quota first, so that no (quota, period) pair in between is refused.
	if err := os.WriteFile(filepath.Join(g.Dir, "cpu.cfs_quota_us"), []byte("-1"), 0o644); err != nil {
		return 0, 0, err
	}
	if err := os.WriteFile(filepath.Join(g.Dir, "cpu.cfs_period_us"), []byte(strconv.Itoa(periodUs)), 0o644); err != nil {
		return 0, 0, err
	}
	if quotaUs > 0 {
		err = os.WriteFile(filepath.Join(g.Dir, "cpu.cfs_quota_us"), []byte(strconv.Itoa(quotaUs)), 0o644)
	}
	return periodUs, quotaUs, err
}

// Mechanism names the kernel interface of the group's budget, as a record states it.
func (g *Group) Mechanism() string {
	if g.Version == 2 {
		return "cgroup v2 cpu.max"
	}
	return "cgroup v1 cpu.cfs_quota_us/cpu.cfs_period_us"
}

// Throttling is the group's CFS bandwidth counters (cpu.stat).
type Throttling struct {
	// Periods is the number of enforcement periods that had runnable tasks, Throttled how many
	// of them ended with the group throttled.
	Periods, Throttled int64
	// ThrottledMs is the total time the group's tasks were held back, in ms.
	ThrottledMs float64
}

// Throttling reads the group's cpu.stat.
func (g *Group) Throttling() (Throttling, error) {
	f, err := os.Open(filepath.Join(g.Dir, "cpu.stat"))
	if err != nil {
		return Throttling{}, err
	}
	defer f.Close()
	var t Throttling
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "nr_periods":
			t.Periods = n
		case "nr_throttled":
			t.Throttled = n
		case "throttled_time": // v1, ns
			t.ThrottledMs = float64(n) / 1e6
		case "throttled_usec": // v2
			t.ThrottledMs = float64(n) / 1e3
		}
	}
	return t, sc.Err()
}

// Has reports whether process pid is in the group (its /proc/PID/cgroup line for the cpu
// controller, or the unified line on v2, names the group).
func (g *Group) Has(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || parts[2] != g.rel {
			continue
		}
		if g.Version == 2 && parts[0] == "0" && parts[1] == "" {
			return true
		}
		if g.Version == 1 && strings.Contains(","+parts[1]+",", ",cpu,") {
			return true
		}
	}
	return false
}

// Close kills whatever is left in the group, waits up to 2 s for it to empty and removes it
// (and its cpuacct twin).
func (g *Group) Close() error {
	err := removeGroup(g.Dir)
	if g.Acct != "" && g.Acct != g.Dir {
		err = errors.Join(err, removeGroup(g.Acct))
	}
	if g.Cpuset != "" {
		err = errors.Join(err, removeGroup(g.Cpuset))
	}
	return err
}

func removeGroup(dir string) error {
	procs := filepath.Join(dir, "cgroup.procs")
	deadline := time.Now().Add(2 * time.Second)
	for {
		pids := readPIDs(procs)
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("remove cgroup %s: %w (%d process(es) left)", dir, err, len(pids))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func readPIDs(file string) []int {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			pids = append(pids, n)
		}
	}
	return pids
}

// CleanStale removes the groups left by pltlab processes that died without removing theirs
// (SIGKILL), killing what is still in them, and returns the directories removed. Groups of
// live processes are left alone. It does nothing where there is no cgroup cpu controller.
func CleanStale() []string {
	_, root, err := hierarchy(cgroupMount)
	if err != nil {
		return nil
	}
	var removed []string
	for _, parent := range []string{filepath.Join(root, parentName), filepath.Join(cgroupMount, "cpuacct", parentName), filepath.Join(cgroupMount, "cpuset", parentName)} {
		removed = append(removed, cleanStaleIn(parent)...)
	}
	return removed
}

func cleanStaleIn(parent string) []string {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		pidStr, _, ok := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(pidStr)
		if !e.IsDir() || !ok || err != nil || alive(pid) {
			continue
		}
		dir := filepath.Join(parent, e.Name())
		if removeGroup(dir) == nil {
			removed = append(removed, dir)
		}
	}
	return removed
}

// alive reports whether a process pid exists and has not exited (signal 0, EPERM meaning it
// exists; a zombie, killed but not yet reaped, counts as gone).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	p, err := readProc(pid)
	return err != nil || !p.Zombie()
}
