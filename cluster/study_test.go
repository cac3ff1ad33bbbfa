package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/studies"
)

func studySweep(t *testing.T, name string, scale studies.Scale, shards int) Sweep {
	t.Helper()
	st, err := studies.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return Sweep{Study: &Study{Name: name, Scale: scale, Seed: 1, Plan: st.Plan(scale)}, Shards: shards}
}

func TestSlurmStudy(t *testing.T) {
	s := studySweep(t, "kakhki2017", studies.Full, 64)
	files, err := Slurm(s, SlurmOptions{Dir: "/shared/kk", Pltlab: "/opt/pltlab"})
	if err != nil {
		t.Fatal(err)
	}
	est, _ := s.Estimate()
	if limit, _ := s.TimeLimit(); limit != (TimeMargin*est.Longest()+TimeSlack).Round(time.Minute) || limit < est.Longest() {
		t.Errorf("time limit %v for a longest shard of %v", limit, est.Longest())
	}
	shards := string(files[SlurmShardsScript])
	for _, want := range []string{
		"#SBATCH --array=0-63\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --requeue\n", fmt.Sprintf("#SBATCH --mem=%dM\n", MemoryMargin*est.Footprint.MiB),
		`out="/shared/kk/shard-${SLURM_ARRAY_TASK_ID}"`, `if [ -s "$out/results.jsonl" ]; then mode=--resume; fi`,
		`exec /opt/pltlab reproduce kakhki2017 --scale full --seed 1 --shard auto/64 --out "$out" "$mode"`,
		"rootless mode",
	} {
		if !strings.Contains(shards, want) {
			t.Errorf("shards script lacks %q:\n%s", want, shards)
		}
	}
	if strings.Contains(shards, "need root today") {
		t.Error("the script says shaped links need root, but rootless mode runs them")
	}
	merge := string(files[SlurmMergeScript])
	if !strings.Contains(merge, "reproduce kakhki2017 --scale full --seed 1 --merge shard-*/results.jsonl --out merged --force") {
		t.Errorf("merge script:\n%s", merge)
	}
	if _, ok := files[MatrixFile]; ok {
		t.Error("a study sweep ships a matrix")
	}
	// A limit under the estimate is refused; more shards than the work too.
	s.Time = time.Minute
	if _, err := Slurm(s, SlurmOptions{Dir: "/d", Pltlab: "/p"}); err == nil || !strings.Contains(err.Error(), "accepted at least") {
		t.Errorf("time under the estimate: %v", err)
	}
	s = studySweep(t, "kakhki2017", studies.Smoke, 5)
	if _, err := Slurm(s, SlurmOptions{Dir: "/d", Pltlab: "/p"}); err == nil || !strings.Contains(err.Error(), "at most 4 shards") {
		t.Errorf("5 shards of kakhki2017 smoke: %v", err)
	}
	s = studySweep(t, "kakhki2017", studies.Smoke, 3)
	s.MemoryMiB = 512
	if _, err := Slurm(s, SlurmOptions{Dir: "/d", Pltlab: "/p"}); err == nil || !strings.Contains(err.Error(), "2 browsers x") {
		t.Errorf("memory under one shard's footprint: %v", err)
	}
}

func TestK8sStudyAndMerge(t *testing.T) {
	s := studySweep(t, "kakhki2017", studies.Smoke, 3)
	o := K8sOptions{Image: "registry.example/pltlab:v1", Parallelism: 3}
	y, err := K8s(s, o)
	if err != nil {
		t.Fatal(err)
	}
	cm, pvc, job := decodeK8s(t, y)
	if cm != nil || pvc == nil || job == nil {
		t.Fatalf("documents: configmap %v pvc %v job %v", cm != nil, pvc != nil, job != nil)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if !strings.Contains(c.Command[2], `exec pltlab reproduce kakhki2017 --scale smoke --seed 1 --shard auto/3 --out "$out" "$mode"`) {
		t.Errorf("command %q", c.Command)
	}
	// kakhki2017 forces h2 and h3: two browsers per link.
	fp, _ := s.Study.Plan.Footprint()
	if want := fmt.Sprintf("%dMi", MemoryMargin*fp.MiB+DevShmMiB); fp.Browsers != 2 || c.Resources.Limits.Memory().String() != want {
		t.Errorf("memory limit %s with footprint %s, want %s (2 x the footprint + 1024 MiB /dev/shm)", c.Resources.Limits.Memory(), fp, want)
	}
	for _, m := range c.VolumeMounts {
		if m.Name == "matrix" {
			t.Error("a study pod mounts a matrix")
		}
	}
	my, err := K8sMerge(s, o)
	if err != nil {
		t.Fatal(err)
	}
	var mj batchv1.Job
	if err := yaml.UnmarshalStrict(my, &mj); err != nil {
		t.Fatalf("merge job: %v\n%s", err, my)
	}
	mc := mj.Spec.Template.Spec.Containers[0]
	if mj.Name != job.Name+"-merge" || !strings.Contains(mc.Command[2], "reproduce kakhki2017 --scale smoke --seed 1 --merge /results/shard-*/results.jsonl --out /results/merged") {
		t.Errorf("merge job %s: %q", mj.Name, mc.Command)
	}
	if mj.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != pvc.Name {
		t.Error("the merge job mounts another claim")
	}
}

func TestK8sShipsTraces(t *testing.T) {
	s := sweep(t, shapedMatrix, 2)
	s.Traces = map[string][]byte{"traces/lte.trace": []byte("1\n2\n")}
	y, err := K8s(s, K8sOptions{Image: "i:1", Parallelism: 1})
	if err != nil {
		t.Fatal(err)
	}
	cm, _, job := decodeK8s(t, y)
	if cm.Data["trace-0"] != "1\n2\n" {
		t.Errorf("configmap %v", cm.Data)
	}
	found := false
	for _, v := range job.Spec.Template.Spec.Volumes {
		if v.ConfigMap != nil {
			for _, it := range v.ConfigMap.Items {
				found = found || (it.Key == "trace-0" && it.Path == "traces/lte.trace")
			}
		}
	}
	if !found {
		t.Error("the trace is not mounted beside the matrix")
	}
	s.Traces = map[string][]byte{"/abs/lte.trace": nil}
	if _, err := K8s(s, K8sOptions{Image: "i:1", Parallelism: 1}); err == nil || !strings.Contains(err.Error(), "relative") {
		t.Errorf("absolute trace: %v", err)
	}
}

// TestFullGridFits: the full grids' shards request what their browsers need. kakhki2017 and
// muthuraj2024 full serve 42 and 41 pages per link through one browser per protocol (two), so a
// shard's footprint is that of two browsers and the server's capped page bytes, not of 84
// browsers; a --mem below the footprint is refused naming it; and a plan that forces more
// protocols needs more.
func TestFullGridFits(t *testing.T) {
	for _, name := range []string{"kakhki2017", "muthuraj2024"} {
		s := studySweep(t, name, studies.Full, 8)
		est, err := s.Estimate()
		if err != nil {
			t.Fatal(err)
		}
		fp := est.Footprint
		if fp.Browsers != 2 || fp.ServerMiB != server.MemoryBudget>>20 || fp.MiB != experiment.FootprintBaseMiB+2*fp.BrowserMiB+fp.ServerMiB ||
			fp.BrowserMiB < 1400 { // its heaviest page is 100 x 10 MB: 1470 MiB measured
			t.Errorf("%s full: footprint %+v, want 2 browsers of its 1 GB page and the server's whole budget", name, fp)
		}
		y, err := Slurm(s, SlurmOptions{Dir: "/d", Pltlab: "/p"})
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("#SBATCH --mem=%dM", MemoryMargin*fp.MiB); !strings.Contains(string(y[SlurmShardsScript]), want) {
			t.Errorf("%s full: the shards script lacks %q", name, want)
		}
		s = studySweep(t, name, studies.Full, 8)
		s.MemoryMiB = fp.MiB - 1
		if _, err := s.Estimate(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("accepted %d MiB or more", fp.MiB)) {
			t.Errorf("%s full at %d MiB: %v, want a refusal naming the footprint", name, fp.MiB-1, err)
		}
	}
	three, err := experiment.PlanFootprint(experiment.Config{Pages: []string{"10x10KB"}, Arms: experiment.CrossArms([]string{"h1", "h2", "h3"}, []result.Mode{result.Cold})})
	if err != nil || three.Browsers != 3 {
		t.Errorf("the default arms (h1, h2, h3): %+v, %v: want 3 browsers", three, err)
	}
}

// TestShieldedShards checks that a sweep with ShieldCPU runs every shard as 'pltlab
// --shield-cpu N ...' on a node of its own: Slurm --exclusive, a Kubernetes pod privileged in
// the node's PID namespace.
func TestShieldedShards(t *testing.T) {
	s := studySweep(t, "carlucci2015", studies.Quick, 2)
	cpu := 1
	s.ShieldCPU = &cpu
	files, err := Slurm(s, SlurmOptions{Dir: "/shared/c", Pltlab: "/opt/pltlab"})
	if err != nil {
		t.Fatal(err)
	}
	shards := string(files[SlurmShardsScript])
	for _, want := range []string{"#SBATCH --exclusive\n", `exec /opt/pltlab --shield-cpu 1 reproduce carlucci2015 --scale quick --seed 1 --shard auto/2`} {
		if !strings.Contains(shards, want) {
			t.Errorf("shielded shards script lacks %q:\n%s", want, shards)
		}
	}
	if merge := string(files[SlurmMergeScript]); strings.Contains(merge, "--shield-cpu") {
		t.Errorf("the merge measures nothing and must not shield a CPU:\n%s", merge)
	}
	s.ShieldCPU = nil
	files, err = Slurm(s, SlurmOptions{Dir: "/shared/c", Pltlab: "/opt/pltlab"})
	if err != nil {
		t.Fatal(err)
	}
	if shards := string(files[SlurmShardsScript]); strings.Contains(shards, "--exclusive") || strings.Contains(shards, "--shield-cpu") {
		t.Errorf("an unshielded sweep got a shield or a whole node:\n%s", shards)
	}

	s.ShieldCPU = &cpu
	pod := podSpec(s, K8sOptions{Image: "pltlab:dev"}, "c", "claim", map[string]string{"pltlab.dev/sweep": "c"}, false, nil)
	c := pod.Containers[0]
	if !pod.HostPID || c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
		t.Errorf("shielded pod: hostPID %v, security context %+v; want the node's PID namespace and privileged", pod.HostPID, c.SecurityContext)
	}
	if cmd := strings.Join(c.Command, " "); !strings.Contains(cmd, "exec pltlab --shield-cpu 1 reproduce carlucci2015") {
		t.Errorf("shielded pod command: %s", cmd)
	}
	s.ShieldCPU = nil
	if pod := podSpec(s, K8sOptions{Image: "pltlab:dev"}, "c", "claim", map[string]string{"pltlab.dev/sweep": "c"}, false, nil); pod.HostPID {
		t.Error("an unshielded pod shares the node's PID namespace")
	}
}
