package cluster

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Paths inside the pods of a Kubernetes sweep.
const (
	// K8sMatrixDir is where the ConfigMap with the matrix is mounted (file MatrixFile).
	K8sMatrixDir = "/etc/pltlab"
	// K8sResultsDir is where the results volume is mounted; pod I writes shard-I.jsonl there.
	K8sResultsDir = "/results"
	// CompletionIndexAnnotation is the pod annotation that holds an Indexed Job's completion index
	// (Kubernetes docs, "Job": completion mode Indexed).
	CompletionIndexAnnotation = "batch.kubernetes.io/job-completion-index"
)

// K8sOptions say how a Kubernetes sweep runs.
type K8sOptions struct {
	// Image is the container image with pltlab and Chromium (the repository's Dockerfile).
	Image string
	// Parallelism is the number of pods at once (1..shards); with one pod per node, at most the
	// number of nodes run.
	Parallelism int
	// Namespace is the objects' namespace ("" = the one kubectl uses).
	Namespace string
	// ResultsClaim names the PersistentVolumeClaim the results go to; "" makes one
	// (ReadWriteMany, ResultsSize), since pods on different nodes write to it at once.
	ResultsClaim string
	// ResultsSize is the size of the claim made ("10Gi" when "").
	ResultsSize string
	// AllowSharedNodes lets several pods of the sweep run on one node. By default a required
	// pod anti-affinity keeps one per node: co-located shards disturb each other's timing.
	AllowSharedNodes bool
}

// check refuses, in one line naming the bad value and what is accepted, options no cluster
// would take: an empty image or one with spaces, a namespace that is not a DNS-1123 label
// (Kubernetes docs, "Object Names and IDs"), a results size that is not a positive quantity.
func (o K8sOptions) check() error {
	if o.Image == "" || strings.ContainsAny(o.Image, " \n") {
		return fmt.Errorf("bad image %q: accepted an image reference such as registry.example/pltlab:v1", o.Image)
	}
	if o.Namespace != "" && len(validation.IsDNS1123Label(o.Namespace)) > 0 {
		return fmt.Errorf("bad namespace %q: accepted a DNS-1123 label (at most 63 lower-case letters, digits and '-', starting and ending with a letter or digit), such as lab", o.Namespace)
	}
	_, err := o.resultsSize()
	return err
}

// resultsSize is the size of the results claim made: ResultsSize ("10Gi" when ""), a positive
// quantity.
func (o K8sOptions) resultsSize() (resource.Quantity, error) {
	size := cmp.Or(o.ResultsSize, "10Gi")
	q, err := resource.ParseQuantity(size)
	if err != nil || q.Sign() <= 0 {
		return q, fmt.Errorf("bad results size %q: accepted a positive quantity such as 10Gi", size)
	}
	return q, nil
}

// K8s returns the YAML documents of a Kubernetes sweep, separated by "---" lines, for
// `kubectl apply -f`: a ConfigMap holding the matrix and its trace files (a matrix sweep), a
// PersistentVolumeClaim for the results (ReadWriteMany, since pods on different nodes write to
// it at once; unless o.ResultsClaim names one) and an Indexed Job (completionMode Indexed,
// completions = shards, parallelism o.Parallelism, one retry per index) whose pod I runs shard I
// into the volume (a study: `pltlab reproduce STUDY --scale S --shard auto/N --out
// /results/shard-I`; a matrix: `pltlab run --matrix /etc/pltlab/matrix.yaml --shard auto/N` into
// /results/shard-I.jsonl), with --resume when a retried pod finds its file. Each pod requests
// and is limited to s.CPUs whole cores and s.MemoryMiB plus DevShmMiB, because its
// memory-backed /dev/shm (DevShmMiB) counts against the memory limit (Guaranteed QoS, so a
// static CPU manager pins whole cores), and a required pod anti-affinity on
// kubernetes.io/hostname keeps one pod per node unless o.AllowSharedNodes. Privileges: a sweep
// with a shaped link runs as root with CAP_NET_ADMIN and CAP_SYS_ADMIN (network namespaces, TUN
// devices, the bind mount under /var/run/netns), /dev/net/tun mounted from the node, AppArmor
// unconfined (default profiles deny mount) and, because the link also writes sysctls in its
// namespace (IPv6 off, TCP buffer sizes) and /proc/sys is read-only in unprivileged containers,
// privileged (checked with podman: without it the link fails with "read-only file system"); a
// sweep whose links are all "none" runs as the image's non-root user with every capability
// dropped. activeDeadlineSeconds bounds the whole Job by s.Time per wave of pods, plus one
// wave for the retried pods (backoffLimitPerIndex 1). The merge Job
// that runs after it is K8sMerge's.
func K8s(s Sweep, o K8sOptions) ([]byte, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	est, err := s.plan()
	if err != nil {
		return nil, err
	}
	if o.Parallelism < 1 || o.Parallelism > s.Shards {
		return nil, fmt.Errorf("bad parallelism %d: accepted 1..%d (the shard count)", o.Parallelism, s.Shards)
	}
	shaped, err := s.shaped()
	if err != nil {
		return nil, err
	}
	name := s.name()
	labels := map[string]string{"app.kubernetes.io/name": "pltlab", "pltlab.dev/sweep": name}
	meta := func(n string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: n, Namespace: o.Namespace, Labels: labels}
	}
	var docs []any
	var items []corev1.KeyToPath
	if s.Study == nil {
		cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta(name + "-matrix"),
			Data: map[string]string{MatrixFile: string(s.Matrix)}}
		items = append(items, corev1.KeyToPath{Key: MatrixFile, Path: MatrixFile})
		for i, tn := range slices.Sorted(maps.Keys(s.Traces)) {
			if filepath.IsAbs(tn) || strings.HasPrefix(filepath.Clean(tn), "..") {
				return nil, fmt.Errorf("bad trace %q: a pod sees only what the ConfigMap ships: accepted a trace path relative to the matrix file, inside its directory", tn)
			}
			key := fmt.Sprintf("trace-%d", i)
			cm.Data[key] = string(s.Traces[tn])
			items = append(items, corev1.KeyToPath{Key: key, Path: filepath.Clean(tn)})
		}
		docs = append(docs, cm)
	}
	claim := o.ResultsClaim
	if claim == "" {
		claim = name + "-results"
		q, _ := o.resultsSize() // checked by o.check
		docs = append(docs, &corev1.PersistentVolumeClaim{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: meta(claim), Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}}}})
	}
	waves := (s.Shards + o.Parallelism - 1) / o.Parallelism
	job := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta(name),
		Spec: batchv1.JobSpec{
			CompletionMode:       ptr(batchv1.IndexedCompletion),
			Completions:          ptr(int32(s.Shards)),
			Parallelism:          ptr(int32(o.Parallelism)),
			BackoffLimitPerIndex: ptr(int32(1)),
			// One more wave of time for the retries BackoffLimitPerIndex allows (a pod that
			// failed is run once more after its wave).
			ActiveDeadlineSeconds: ptr(int64((time.Duration(waves+1) * s.Time).Seconds())),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: podSpec(s, o, name, claim, labels, shaped, items)},
		}}
	docs = append(docs, job)
	var out bytes.Buffer
	fmt.Fprintf(&out, "# pltlab %s: %d loads in %d shards, %d pods at once; estimated %s on one machine, longest shard %s.\n",
		s.label(), est.Loads, s.Shards, o.Parallelism, est.Total.Round(time.Second), est.Longest().Round(time.Second))
	fmt.Fprintf(&out, "# Per pod: %d cores, %d MiB (%d MiB for a shard modelled at %s, plus %d MiB of memory-backed /dev/shm); deadline %s per wave.\n",
		s.CPUs, s.MemoryMiB+DevShmMiB, s.MemoryMiB, est.Footprint, DevShmMiB, s.Time)
	fmt.Fprintf(&out, "# kubectl apply -f THIS; kubectl wait --for=condition=complete job/%s; then apply the merge Job (pltlab k8s --merge-out).\n", name)
	if err := writeDocs(&out, docs); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// K8sMerge returns the YAML of the Job that merges a Kubernetes sweep's shards from the results
// volume, to apply once K8s's Job has completed (kubectl wait --for=condition=complete): a
// study's `pltlab reproduce STUDY --merge /results/shard-*/results.jsonl --out /results/merged`
// (the report, findings and figures of an unsharded run; exit 1 naming missing shards), a
// matrix's `pltlab merge` and `pltlab report` into /results, on one core with mergeMemoryMiB
// and a deadline of mergeTime. It has no capability (as root when the shards of a shaped sweep
// wrote the volume as root).
func K8sMerge(s Sweep, o K8sOptions) ([]byte, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	if _, err := s.plan(); err != nil {
		return nil, err
	}
	name := s.name()
	claim := o.ResultsClaim
	claim = cmp.Or(claim, name+"-results")
	var script string
	if s.Study != nil {
		script = fmt.Sprintf("exec pltlab reproduce %s --merge %s/shard-*/results.jsonl --out %s/merged --force",
			strings.Join(quoteAll(s.Study.args()), " "), K8sResultsDir, K8sResultsDir)
	} else {
		script = fmt.Sprintf("cd %s && pltlab merge shard-*.jsonl --out merged.jsonl --force; status=$?; "+
			"pltlab report merged.jsonl --format markdown --out report.md || status=1; "+
			"pltlab report merged.jsonl --format html --out report.html || status=1; exit $status", K8sResultsDir)
	}
	est, _ := s.plan()
	shaped, err := s.shaped()
	if err != nil {
		return nil, err
	}
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dMi", mergeMemoryMiB(est.Loads)))}
	// The shards of a shaped sweep write the volume as root: the merge then runs as root too
	// (with no capability), so that it may write there.
	sc := &corev1.SecurityContext{RunAsNonRoot: ptr(true), AllowPrivilegeEscalation: ptr(false),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	if shaped {
		sc.RunAsNonRoot, sc.RunAsUser = ptr(false), ptr(int64(0))
	}
	labels := map[string]string{"app.kubernetes.io/name": "pltlab", "pltlab.dev/sweep": name}
	job := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name + "-merge", Namespace: o.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{BackoffLimit: ptr(int32(0)), ActiveDeadlineSeconds: ptr(int64(mergeTime(est.Loads).Seconds())), Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "merge", Image: o.Image, Command: []string{"sh", "-c", script},
				Resources:       corev1.ResourceRequirements{Requests: res, Limits: res},
				VolumeMounts:    []corev1.VolumeMount{{Name: "results", MountPath: K8sResultsDir}},
				SecurityContext: sc,
			}}, Volumes: []corev1.Volume{{Name: "results", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}}}}}}}
	var out bytes.Buffer
	fmt.Fprintf(&out, "# pltlab %s: the merge, after job/%s has completed (kubectl wait --for=condition=complete job/%s).\n", s.label(), name, name)
	if err := writeDocs(&out, []any{job}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// writeDocs writes docs as YAML documents separated by "---" lines.
func writeDocs(out *bytes.Buffer, docs []any) error {
	for i, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return fmt.Errorf("encode %T: %w", d, err)
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	return nil
}

// podSpec is the pod of one shard.
func podSpec(s Sweep, o K8sOptions, name, claim string, labels map[string]string, shaped bool, items []corev1.KeyToPath) corev1.PodSpec {
	cpu := resource.MustParse(fmt.Sprint(s.CPUs))
	mem := resource.MustParse(fmt.Sprintf("%dMi", s.MemoryMiB+DevShmMiB)) // the memory-backed /dev/shm counts
	global := ""
	if a := s.pltlabArgs(); len(a) > 0 {
		global = " " + strings.Join(a, " ")
	}
	command := fmt.Sprintf(`out=%s/shard-$JOB_COMPLETION_INDEX.jsonl; if [ -s "$out" ]; then set -- --resume; fi; `+
		`exec pltlab%s run --matrix %s/%s --shard auto/%d --out "$out" "$@"`, K8sResultsDir, global, K8sMatrixDir, MatrixFile, s.Shards)
	if s.Study != nil {
		command = fmt.Sprintf(`out=%s/shard-$JOB_COMPLETION_INDEX; mode=--force; if [ -s "$out/results.jsonl" ]; then mode=--resume; fi; `+
			`exec pltlab%s reproduce %s --shard auto/%d --out "$out" "$mode"`, K8sResultsDir, global, strings.Join(quoteAll(s.Study.args()), " "), s.Shards)
	}
	res := corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
	c := corev1.Container{
		Name:  "pltlab",
		Image: o.Image,
		// A retried pod continues its shard's file on the volume instead of starting over.
		Command: []string{"sh", "-c", command},
		Env: []corev1.EnvVar{{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + CompletionIndexAnnotation + "']"}}}},
		Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "matrix", MountPath: K8sMatrixDir, ReadOnly: true},
			{Name: "results", MountPath: K8sResultsDir},
			{Name: "dshm", MountPath: "/dev/shm"},
		},
	}
	vols := []corev1.Volume{
		{Name: "results", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}},
		{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory,
			SizeLimit: ptr(resource.MustParse(fmt.Sprintf("%dMi", DevShmMiB)))}}},
	}
	if s.Study == nil {
		vols = append(vols, corev1.Volume{Name: "matrix", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name + "-matrix"}, Items: items}}})
	} else {
		c.VolumeMounts = c.VolumeMounts[1:] // no matrix: the study is built into pltlab
	}
	if shaped || s.ShieldCPU != nil {
		// The capabilities and the TUN device are what the link uses; privileged is needed on top
		// for a writable /proc/sys (Kubernetes has no narrower switch without user-namespaced
		// pods) and, with ShieldCPU, to set other tasks' CPU affinity.
		c.SecurityContext = &corev1.SecurityContext{
			Privileged: ptr(true), RunAsUser: ptr(int64(0)), RunAsNonRoot: ptr(false),
			Capabilities:    &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN", "SYS_ADMIN"}},
			AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined},
		}
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "tun", MountPath: "/dev/net/tun"})
		vols = append(vols, corev1.Volume{Name: "tun", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
			Path: "/dev/net/tun", Type: ptr(corev1.HostPathCharDev)}}})
	} else {
		c.SecurityContext = &corev1.SecurityContext{
			RunAsNonRoot: ptr(true), AllowPrivilegeEscalation: ptr(false),
			Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		}
	}
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c}, Volumes: vols}
	if s.ShieldCPU != nil {
		spec.HostPID = true // the shield moves the node's tasks off its CPU: it must see them
	}
	if !o.AllowSharedNodes {
		spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"pltlab.dev/sweep": labels["pltlab.dev/sweep"]}},
				TopologyKey:   "kubernetes.io/hostname",
			}}}}
	}
	return spec
}

func ptr[T any](v T) *T { return &v }
