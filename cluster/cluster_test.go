package cluster

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/pltlab/pltlab/experiment"
)

const shapedMatrix = `name: Grid 2026
pages: [10x30KB, 1x1MB]
links: [carlucci2015, "rate=10mbit,rtt=100ms"]
protocols: [h2, h3]
runs: 10
warmup: 1
`

func sweep(t *testing.T, matrix string, shards int) Sweep {
	t.Helper()
	c, err := experiment.ReadMatrix(strings.NewReader(matrix), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return Sweep{Config: c, Matrix: []byte(matrix), Shards: shards}
}

// decodeK8s splits the YAML stream and decodes every document strictly (unknown or duplicate
// fields are errors) into the API types.
func decodeK8s(t *testing.T, y []byte) (*corev1.ConfigMap, *corev1.PersistentVolumeClaim, *batchv1.Job) {
	t.Helper()
	var (
		cm  *corev1.ConfigMap
		pvc *corev1.PersistentVolumeClaim
		job *batchv1.Job
	)
	for _, doc := range bytes.Split(y, []byte("\n---\n")) {
		var tm struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			t.Fatal(err)
		}
		var into any
		switch tm.Kind {
		case "ConfigMap":
			cm = &corev1.ConfigMap{}
			into = cm
		case "PersistentVolumeClaim":
			pvc = &corev1.PersistentVolumeClaim{}
			into = pvc
		case "Job":
			job = &batchv1.Job{}
			into = job
		default:
			t.Fatalf("unexpected document kind %q:\n%s", tm.Kind, doc)
		}
		if err := yaml.UnmarshalStrict(doc, into); err != nil {
			t.Fatalf("strict decode of %s: %v", tm.Kind, err)
		}
	}
	if job == nil {
		t.Fatalf("missing Job in:\n%s", y)
	}
	return cm, pvc, job
}

func TestK8sShaped(t *testing.T) {
	s := sweep(t, shapedMatrix, 4)
	y, err := K8s(s, K8sOptions{Image: "registry.example/pltlab:v1", Parallelism: 2, Namespace: "lab"})
	if err != nil {
		t.Fatal(err)
	}
	cm, pvc, job := decodeK8s(t, y)
	if cm.Data[MatrixFile] != shapedMatrix || cm.Namespace != "lab" {
		t.Errorf("ConfigMap %+v", cm)
	}
	if pvc == nil || pvc.Spec.AccessModes[0] != corev1.ReadWriteMany || pvc.Spec.Resources.Requests.Storage().String() != "10Gi" {
		t.Errorf("PVC %+v", pvc)
	}
	js := job.Spec
	if *js.CompletionMode != batchv1.IndexedCompletion || *js.Completions != 4 || *js.Parallelism != 2 || *js.BackoffLimitPerIndex != 1 {
		t.Errorf("job spec: mode %v, completions %d, parallelism %d", *js.CompletionMode, *js.Completions, *js.Parallelism)
	}
	if !strings.HasPrefix(job.Name, "pltlab-grid-2026") {
		t.Errorf("job name %q", job.Name)
	}
	pod := js.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("pod %+v", pod)
	}
	c := pod.Containers[0]
	wantCmd := []string{"sh", "-c", `out=/results/shard-$JOB_COMPLETION_INDEX.jsonl; if [ -s "$out" ]; then set -- --resume; fi; ` +
		`exec pltlab run --matrix /etc/pltlab/matrix.yaml --shard auto/4 --out "$out" "$@"`}
	if !slices.Equal(c.Command, wantCmd) || c.Image != "registry.example/pltlab:v1" {
		t.Errorf("command %q image %q", c.Command, c.Image)
	}
	if c.Env[0].Name != "JOB_COMPLETION_INDEX" || !strings.Contains(c.Env[0].ValueFrom.FieldRef.FieldPath, CompletionIndexAnnotation) {
		t.Errorf("env %+v", c.Env)
	}
	// Whole cores: requests = limits, integer CPUs (Guaranteed QoS); memory: twice one shard's
	// modelled footprint plus the memory-backed /dev/shm, which counts against the limit.
	req, lim := c.Resources.Requests, c.Resources.Limits
	fp, _ := experiment.PlanFootprint(s.Config)
	if req.Cpu().String() != "2" || lim.Cpu().String() != "2" || req.Memory().String() != fmt.Sprintf("%dMi", MemoryMargin*fp.MiB+DevShmMiB) || !lim.Memory().Equal(*req.Memory()) {
		t.Errorf("resources %+v", c.Resources)
	}
	// The privileges a shaped link needs today.
	sc := c.SecurityContext
	if *sc.RunAsUser != 0 || !*sc.Privileged || !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"NET_ADMIN", "SYS_ADMIN"}) {
		t.Errorf("security context %+v", sc)
	}
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		t.Error("privileged with allowPrivilegeEscalation false: the API server refuses that")
	}
	var tun, results, matrix bool
	for _, v := range pod.Volumes {
		switch {
		case v.HostPath != nil && v.HostPath.Path == "/dev/net/tun" && *v.HostPath.Type == corev1.HostPathCharDev:
			tun = true
		case v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == pvc.Name:
			results = true
		case v.ConfigMap != nil && v.ConfigMap.Name == cm.Name:
			matrix = true
		}
	}
	if !tun || !results || !matrix {
		t.Errorf("volumes: tun %v, results %v, matrix %v", tun, results, matrix)
	}
	// One pod per node.
	aa := pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if len(aa) != 1 || aa[0].TopologyKey != "kubernetes.io/hostname" || aa[0].LabelSelector.MatchLabels["pltlab.dev/sweep"] != js.Template.Labels["pltlab.dev/sweep"] {
		t.Errorf("anti-affinity %+v", aa)
	}
	if *js.ActiveDeadlineSeconds < 600 {
		t.Errorf("active deadline %ds", *js.ActiveDeadlineSeconds)
	}
}

func TestK8sUnshapedAndOptions(t *testing.T) {
	s := sweep(t, "pages: [1x5KB]\nlinks: [none]\nprotocols: [h2]\nruns: 4\n", 2)
	s.CPUs, s.MemoryMiB, s.Time = 4, 4096, time.Hour
	y, err := K8s(s, K8sOptions{Image: "pltlab:dev", Parallelism: 1, ResultsClaim: "sweeps", AllowSharedNodes: true})
	if err != nil {
		t.Fatal(err)
	}
	_, pvc, job := decodeK8s(t, y)
	if pvc != nil {
		t.Error("made a claim although one was named")
	}
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	if !*c.SecurityContext.RunAsNonRoot || len(c.SecurityContext.Capabilities.Add) != 0 {
		t.Errorf("an unshaped sweep runs privileged: %+v", c.SecurityContext)
	}
	if pod.Affinity != nil {
		t.Error("anti-affinity despite AllowSharedNodes")
	}
	if c.Resources.Limits.Cpu().String() != "4" || c.Resources.Limits.Memory().String() != "5Gi" {
		t.Errorf("resources %+v", c.Resources)
	}
	if *job.Spec.ActiveDeadlineSeconds != 3*3600 {
		t.Errorf("deadline %d, want two waves of an hour and one for the retried pods", *job.Spec.ActiveDeadlineSeconds)
	}
	if !strings.HasPrefix(job.Name, "pltlab-") || len(job.Name) > 40 {
		t.Errorf("name %q", job.Name)
	}
}

func TestK8sErrors(t *testing.T) {
	s := sweep(t, shapedMatrix, 4)
	for name, o := range map[string]K8sOptions{
		"no image":         {Parallelism: 1},
		"parallelism 0":    {Image: "x", Parallelism: 0},
		"parallelism > N":  {Image: "x", Parallelism: 5},
		"bad results size": {Image: "x", Parallelism: 1, ResultsSize: "lots"},
		"negative size":    {Image: "x", Parallelism: 1, ResultsSize: "-1Gi"},
		"zero size":        {Image: "x", Parallelism: 1, ResultsSize: "0"},
		"upper namespace":  {Image: "x", Parallelism: 1, Namespace: "Lab"},
		"dotted namespace": {Image: "x", Parallelism: 1, Namespace: "lab.one"},
	} {
		if _, err := K8s(s, o); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line", name, err)
		}
		if _, err := K8sMerge(s, o); err == nil && o.Parallelism == 1 { // the merge Job has no parallelism
			t.Errorf("%s: the merge Job was made", name)
		}
	}
	s.Shards = 100
	if _, err := K8s(s, K8sOptions{Image: "x", Parallelism: 1}); err == nil || !strings.Contains(err.Error(), "bad shard count") {
		t.Errorf("too many shards: %v", err)
	}
}

func TestSlurm(t *testing.T) {
	s := sweep(t, shapedMatrix, 3)
	files, err := Slurm(s, SlurmOptions{Dir: "/shared/sweep one", Pltlab: "/opt/pltlab/bin/pltlab", Partition: "measure", RunArgs: []string{"--chrome", "/usr/bin/chromium"}})
	if err != nil {
		t.Fatal(err)
	}
	shards := string(files[SlurmShardsScript])
	fp, _ := experiment.PlanFootprint(s.Config)
	for _, want := range []string{
		"#SBATCH --array=0-2\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --hint=nomultithread\n", "#SBATCH --partition=measure\n",
		"#SBATCH --output=/shared/sweep one/logs/shard-%a.log\n", fmt.Sprintf("#SBATCH --mem=%dM\n", MemoryMargin*fp.MiB), "#SBATCH --requeue\n",
		`out="/shared/sweep one/shard-${SLURM_ARRAY_TASK_ID}.jsonl"` + "\n", `if [ -s "$out" ]; then resume=--resume; fi`,
		`exec /opt/pltlab/bin/pltlab run --matrix '/shared/sweep one/matrix.yaml' --shard auto/3 --out "$out" $resume --chrome /usr/bin/chromium`,
	} {
		if !strings.Contains(shards, want) {
			t.Errorf("shards script lacks %q:\n%s", want, shards)
		}
	}
	if !strings.Contains(shards, "#SBATCH --time=0-") {
		t.Errorf("no time limit:\n%s", shards)
	}
	merge := string(files[SlurmMergeScript])
	for _, want := range []string{"merge shard-*.jsonl --out merged.jsonl", "--format html --out report.html", "cd '/shared/sweep one'"} {
		if !strings.Contains(merge, want) {
			t.Errorf("merge script lacks %q:\n%s", want, merge)
		}
	}
	if sub := string(files[SlurmSubmitScript]); !strings.Contains(sub, "--dependency=afterany:$array") {
		t.Errorf("submit script:\n%s", sub)
	}
	if string(files[MatrixFile]) != shapedMatrix {
		t.Error("matrix not copied verbatim")
	}
	if _, err := Slurm(s, SlurmOptions{Dir: "relative", Pltlab: "/bin/pltlab"}); err == nil {
		t.Error("relative directory accepted")
	}
	s.CPUs = -1
	if _, err := Slurm(s, SlurmOptions{Dir: "/d", Pltlab: "/bin/pltlab"}); err == nil || !strings.Contains(err.Error(), "bad cpus") {
		t.Errorf("bad cpus: %v", err)
	}
}

func TestSlurmTime(t *testing.T) {
	for d, want := range map[time.Duration]string{
		90 * time.Second:              "0-00:02:00",
		2 * time.Hour:                 "0-02:00:00",
		49*time.Hour + 30*time.Minute: "2-01:30:00",
	} {
		if got := slurmTime(d); got != want {
			t.Errorf("slurmTime(%v) = %q, want %q", d, got, want)
		}
	}
}
