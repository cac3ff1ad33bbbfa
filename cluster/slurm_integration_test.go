package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/studies"
)

// slurmCluster is a one-node Slurm cluster started by a test: munged with a generated key,
// slurmctld and slurmd, all configured in dir and stopped by stop.
type slurmCluster struct {
	dir  string
	conf string
	env  []string
	pids map[string]int // daemon -> pid, read from its pid file once it started
}

// ensureSlurm installs slurm-wlm and munge when slurmctld is missing (Debian packages; CI runs
// 'make setup', which installs them too). Outside CI a failed install skips the test.
func ensureSlurm(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("slurmctld"); err == nil {
		if _, err := exec.LookPath("munged"); err == nil {
			return
		}
	}
	out, err := exec.Command("sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge").CombinedOutput()
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("slurm-wlm and munge are not installed and could not be: %v\n%s", err, out)
		}
		t.Fatalf("install slurm-wlm and munge: %v\n%s", err, out)
	}
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startSlurm starts the one-node cluster (NodeName=localhost CPUs=2, select/cons_tres by core,
// no cgroups, no accounting) and registers its teardown with t.Cleanup, so that every daemon is
// stopped and the files removed even when the test fails.
func startSlurm(t *testing.T) *slurmCluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "pltlab-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	sc := &slurmCluster{dir: dir, conf: filepath.Join(dir, "slurm.conf"), pids: map[string]int{}}
	t.Cleanup(func() { sc.stop(t); os.RemoveAll(dir) })
	sc.env = append(os.Environ(), "SLURM_CONF="+sc.conf)
	munge := filepath.Join(dir, "munge")
	for _, d := range []string{munge, filepath.Join(dir, "state"), filepath.Join(dir, "spool")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(filepath.Join(munge, "munge.key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(munge, "munge.socket")
	sc.daemon(t, "munged", filepath.Join(munge, "munged.pid"), "munged", "--force", "--key-file="+filepath.Join(munge, "munge.key"),
		"--socket="+socket, "--pid-file="+filepath.Join(munge, "munged.pid"), "--log-file="+filepath.Join(munge, "munged.log"),
		"--seed-file="+filepath.Join(munge, "munged.seed"))
	conf := fmt.Sprintf(`ClusterName=pltlabtest
SlurmctldHost=localhost
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
AuthInfo=socket=%[4]s
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=%[1]s/slurmctld.pid
SlurmdPidFile=%[1]s/slurmd.pid
SlurmdSpoolDir=%[1]s/spool
StateSaveLocation=%[1]s/state
SlurmctldLogFile=%[1]s/slurmctld.log
SlurmdLogFile=%[1]s/slurmd.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmdParameters=config_overrides
NodeName=localhost CPUs=2 RealMemory=4096 State=UNKNOWN
PartitionName=pltlab Nodes=localhost Default=YES MaxTime=INFINITE State=UP
`, dir, freePort(t), freePort(t), socket)
	if err := os.WriteFile(sc.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	sc.daemon(t, "slurmctld", filepath.Join(dir, "slurmctld.pid"), "slurmctld", "-f", sc.conf, "-i")
	sc.daemon(t, "slurmd", filepath.Join(dir, "slurmd.pid"), "slurmd", "-f", sc.conf, "-N", "localhost")
	sc.waitFor(t, 30*time.Second, "the node to be idle", func() bool {
		out, _ := sc.run("sinfo", "-h", "-o", "%T")
		return strings.TrimSpace(out) == "idle"
	})
	return sc
}

// daemon starts a daemon that forks into the background and records its pid from pidFile.
func (sc *slurmCluster) daemon(t *testing.T, name, pidFile string, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = sc.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("start %s: %v\n%s%s", name, err, out, sc.logs())
	}
	sc.waitFor(t, 10*time.Second, name+"'s pid file", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err == nil && pid > 0 {
			sc.pids[name] = pid
			return true
		}
		return false
	})
}

// run runs a Slurm client command against the cluster.
func (sc *slurmCluster) run(argv ...string) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = sc.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (sc *slurmCluster) waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s%s", d, what, sc.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logs returns the tails of the daemons' logs, for failure messages.
func (sc *slurmCluster) logs() string {
	var b strings.Builder
	for _, f := range []string{"slurmctld.log", "slurmd.log", "munge/munged.log"} {
		data, _ := os.ReadFile(filepath.Join(sc.dir, f))
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		fmt.Fprintf(&b, "\n--- %s:\n%s", f, data)
	}
	return b.String()
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}

// stop shuts the cluster down: scontrol shutdown, then SIGTERM and at last SIGKILL to each
// daemon this test started (by the pid it recorded), waiting until each is gone.
func (sc *slurmCluster) stop(t *testing.T) {
	if sc.pids["slurmctld"] != 0 {
		sc.run("scontrol", "shutdown")
	}
	for _, name := range []string{"slurmd", "slurmctld", "munged"} {
		pid := sc.pids[name]
		if pid == 0 {
			continue
		}
		for i := 0; alive(pid) && i < 50; i++ {
			if i == 0 || i == 10 {
				syscall.Kill(pid, syscall.SIGTERM)
			}
			if i == 40 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("%s (pid %d) still runs after SIGKILL", name, pid)
		}
	}
}

// TestIntegrationSlurmOneNode starts a one-node Slurm cluster on this machine, writes a small
// sweep's job array with 'pltlab slurm' (an unshaped link, a 10 KB page, h2, 2 shards),
// submits it with the generated submit.sh, waits for the final merge-and-report job and checks
// that the merged result covers the cells and counts of the unsharded schedule with every load
// valid, and that the merge job succeeded. Every daemon is stopped at the end, even on failure.
func TestIntegrationSlurmOneNode(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: starts munged, slurmctld and slurmd")
	}
	needChromium(t)
	ensureSlurm(t)
	bin := buildPltlab(t)
	sc := startSlurm(t)
	start := time.Now()
	sweepDir := filepath.Join(sc.dir, "sweep")
	matrix := filepath.Join(sc.dir, "grid.yaml")
	if err := os.WriteFile(matrix, []byte(tinyMatrix), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	gen := exec.CommandContext(ctx, bin, "slurm", "--matrix", matrix, "--shards", "2", "--time", "5m", "--out", sweepDir)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("pltlab slurm: %v\n%s", err, out)
	}
	out, err := sc.run("sh", filepath.Join(sweepDir, SlurmSubmitScript))
	if err != nil {
		t.Fatalf("submit: %v\n%s%s", err, out, sc.logs())
	}
	m := regexp.MustCompile(`job (\d+) \(array 0-1\); merge and report: job (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("submit printed %q", out)
	}
	array, merge := m[1], m[2]
	var state string
	sc.waitFor(t, 100*time.Second, "the merge job "+merge+" to end", func() bool {
		out, _ := sc.run("scontrol", "-o", "show", "job", merge)
		state = out
		return regexp.MustCompile(`JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT)`).MatchString(out)
	})
	t.Logf("array job %s and merge job %s done in %v", array, merge, time.Since(start).Round(100*time.Millisecond))
	taskLogs := func() string {
		var b bytes.Buffer
		files, _ := filepath.Glob(filepath.Join(sweepDir, "logs", "*.log"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			fmt.Fprintf(&b, "\n--- %s:\n%s", f, data)
		}
		return b.String()
	}
	if !strings.Contains(state, "JobState=COMPLETED") || !strings.Contains(state, "ExitCode=0:0") {
		t.Fatalf("merge job: %s%s%s", state, taskLogs(), sc.logs())
	}
	tasks, _ := sc.run("scontrol", "-o", "show", "job", array)
	if n := strings.Count(tasks, "JobState=COMPLETED"); n != 2 {
		t.Fatalf("%d of 2 array tasks completed:\n%s%s", n, tasks, taskLogs())
	}
	checkMerged(t, sweep(t, tinyMatrix, 2).Config, filepath.Join(sweepDir, "merged.jsonl"))
	for _, f := range []string{"report.md", "report.html", "shard-0.jsonl", "shard-1.jsonl"} {
		if st, err := os.Stat(filepath.Join(sweepDir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestIntegrationSlurmStudy reproduces the smallest study's smoke scale (muthuraj2024: 8 loads
// in 2 parts on one shaped link) on a one-node Slurm cluster as an array of 3 shards plus the
// merge job that 'pltlab slurm --study' writes, runs the same study unsharded, and checks that
// the merged study equals the unsharded one: the same findings in findings.json in the same
// verdict vocabulary, the same report sections, and the same measured loads per cell; every
// shard's lines name their shard and node, and no two shards overlapped on the node.
func TestIntegrationSlurmStudy(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: starts munged, slurmctld and slurmd")
	}
	needChromium(t)
	ensureSlurm(t)
	bin := buildPltlab(t)
	sc := startSlurm(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	unsharded := filepath.Join(sc.dir, "unsharded")
	if out, err := exec.CommandContext(ctx, bin, "reproduce", "muthuraj2024", "--scale", "smoke", "--out", unsharded).CombinedOutput(); err != nil {
		t.Fatalf("unsharded reproduce: %v\n%s", err, out)
	}
	t.Logf("unsharded: %v", time.Since(start).Round(100*time.Millisecond))
	sweepDir := filepath.Join(sc.dir, "sweep")
	gen := exec.CommandContext(ctx, bin, "slurm", "--study", "muthuraj2024", "--scale", "smoke", "--shards", "3", "--out", sweepDir)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("pltlab slurm: %v\n%s", err, out)
	}
	out, err := sc.run("sh", filepath.Join(sweepDir, SlurmSubmitScript))
	if err != nil {
		t.Fatalf("submit: %v\n%s%s", err, out, sc.logs())
	}
	m := regexp.MustCompile(`job (\d+) \(array 0-2\); merge and report: job (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("submit printed %q", out)
	}
	array, merge := m[1], m[2]
	var state string
	sc.waitFor(t, 3*time.Minute, "the merge job "+merge+" to end", func() bool {
		out, _ := sc.run("scontrol", "-o", "show", "job", merge)
		state = out
		return regexp.MustCompile(`JobState=(COMPLETED|FAILED|CANCELLED|TIMEOUT)`).MatchString(out)
	})
	t.Logf("unsharded run, then array job %s (3 shards) and merge job %s: %v", array, merge, time.Since(start).Round(100*time.Millisecond))
	logs := func() string {
		var b bytes.Buffer
		files, _ := filepath.Glob(filepath.Join(sweepDir, "logs", "*.log"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			fmt.Fprintf(&b, "\n--- %s:\n%s", f, data)
		}
		return b.String()
	}
	if !strings.Contains(state, "JobState=COMPLETED") || !strings.Contains(state, "ExitCode=0:0") {
		t.Fatalf("merge job: %s%s%s", state, logs(), sc.logs())
	}
	merged := filepath.Join(sweepDir, "merged")
	// The same findings, in the same vocabulary.
	type findings struct {
		Findings []struct{ ID, Verdict string } `json:"findings"`
	}
	readFindings := func(dir string) findings {
		var f findings
		b, err := os.ReadFile(filepath.Join(dir, "findings.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := readFindings(unsharded), readFindings(merged)
	// The verdict words are the studies package's, nothing else (reproduced, contradicted,
	// inconclusive, not testable here, not run).
	vocabulary := map[string]bool{}
	for _, v := range studies.Verdicts {
		vocabulary[string(v)] = true
	}
	if len(a.Findings) == 0 || len(a.Findings) != len(b.Findings) {
		t.Fatalf("findings: unsharded %d, merged %d", len(a.Findings), len(b.Findings))
	}
	for i := range a.Findings {
		if a.Findings[i].ID != b.Findings[i].ID || !vocabulary[b.Findings[i].Verdict] || !vocabulary[a.Findings[i].Verdict] {
			t.Errorf("finding %d: unsharded %+v, merged %+v", i, a.Findings[i], b.Findings[i])
		}
		if (a.Findings[i].Verdict == "not testable here") != (b.Findings[i].Verdict == "not testable here") {
			t.Errorf("finding %s: testable in one run only: %q vs %q", a.Findings[i].ID, a.Findings[i].Verdict, b.Findings[i].Verdict)
		}
	}
	sections := func(dir string) []string {
		data, err := os.ReadFile(filepath.Join(dir, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		return regexp.MustCompile(`(?m)^## .*$`).FindAllString(string(data), -1)
	}
	if sa, sb := sections(unsharded), sections(merged); !reflect.DeepEqual(sa, sb) {
		t.Errorf("report sections: unsharded %q, merged %q", sa, sb)
	}
	// The same measured loads per cell; shard and node on every line; warm-ups per shard.
	cells := func(file string) (map[string]int, []*result.Record) {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rd := result.NewReader(f, file)
		out := map[string]int{}
		var recs []*result.Record
		for {
			r, err := rd.Next()
			if err != nil {
				break
			}
			recs = append(recs, r)
			if r.IsLoad() && !r.Warmup && r.Valid {
				out[fmt.Sprintf("%s|%s|%s|%s|%s", r.Experiment, r.Page.Spec, r.Link.Spec, r.Protocol, r.Mode)]++
			}
		}
		return out, recs
	}
	ca, _ := cells(filepath.Join(unsharded, "results.jsonl"))
	cb, recs := cells(filepath.Join(merged, "results.jsonl"))
	if len(ca) == 0 || !reflect.DeepEqual(ca, cb) {
		t.Errorf("valid measured loads per cell: unsharded %v, merged %v", ca, cb)
	}
	shards := map[string]bool{}
	host, _ := os.Hostname()
	merges := 0
	for _, r := range recs {
		if r.Kind == result.KindPlan {
			continue
		}
		if r.Kind == result.KindMerge { // the merge's own line: of no shard
			merges++
			if r.Merge == nil || r.Merge.Partial() != "" || r.Merge.Shards != 3 || len(r.Merge.Present) != 3 {
				t.Errorf("merge line %+v: want 3 of 3 shards present", r.Merge)
			}
			continue
		}
		if r.Shard == "" || r.Env == nil || r.Env.Host != host {
			t.Fatalf("line %s run %d: shard %q, env %+v: want its shard and node", r.Kind, r.Run, r.Shard, r.Env)
		}
		shards[r.Shard] = true
	}
	if len(shards) != 3 || merges != 1 {
		t.Errorf("lines of shards %v and %d merge lines, want 3 shards and 1 merge line", shards, merges)
	}
	// One node of 2 cores and 2 cores per shard: the shards ran one after another.
	if w := plan.NodeOverlaps(recs); w != nil {
		t.Errorf("overlaps on a node that runs one shard at a time: %q", w)
	}
}
