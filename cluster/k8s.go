package cluster

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/pltlab/pltlab/experiment"
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

// K8s returns the YAML documents of a Kubernetes sweep, separated by "---" lines, for
// `kubectl apply -f`: a ConfigMap holding the matrix, a PersistentVolumeClaim for the results
// (unless o.ResultsClaim names one) and an Indexed Job (completionMode Indexed, completions =
// shards, parallelism o.Parallelism, one retry per index) whose pod I runs `pltlab run --matrix
// /etc/pltlab/matrix.yaml --shard auto/N` into /results/shard-I.jsonl (with --resume when a
// retried pod finds the file). Each pod requests and is
// limited to s.CPUs whole cores and s.MemoryMiB (Guaranteed QoS, so a static CPU manager pins
// whole cores), and a required pod anti-affinity on kubernetes.io/hostname keeps one pod per
// node. Privileges: a sweep with a shaped link runs as root with CAP_NET_ADMIN and CAP_SYS_ADMIN
// (network namespaces, TUN devices, the bind mount under /var/run/netns), /dev/net/tun mounted
// from the node, AppArmor unconfined (default profiles deny mount) and, because the link also
// writes sysctls in its namespace (IPv6 off, TCP buffer sizes) and /proc/sys is read-only in
// unprivileged containers, privileged (checked with podman: without it the link fails with
// "read-only file system"); a sweep whose links are all "none" runs as the image's non-root
// user with every capability dropped. activeDeadlineSeconds bounds the whole Job by s.Time per wave of pods.
func K8s(s Sweep, o K8sOptions) ([]byte, error) {
	if o.Image == "" || strings.ContainsAny(o.Image, " \n") {
		return nil, fmt.Errorf("bad image %q: accepted an image reference such as registry.example/pltlab:v1", o.Image)
	}
	plan, err := s.plan()
	if err != nil {
		return nil, err
	}
	if o.Parallelism < 1 || o.Parallelism > s.Shards {
		return nil, fmt.Errorf("bad parallelism %d: accepted 1..%d (the shard count)", o.Parallelism, s.Shards)
	}
	shaped, err := experiment.Shaped(s.Config)
	if err != nil {
		return nil, err
	}
	name := s.name()
	labels := map[string]string{"app.kubernetes.io/name": "pltlab", "pltlab.dev/sweep": name}
	meta := func(n string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: n, Namespace: o.Namespace, Labels: labels}
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta(name + "-matrix"),
		Data: map[string]string{MatrixFile: string(s.Matrix)}}
	docs := []any{cm}
	claim := o.ResultsClaim
	if claim == "" {
		claim = name + "-results"
		size := o.ResultsSize
		if size == "" {
			size = "10Gi"
		}
		q, err := resource.ParseQuantity(size)
		if err != nil {
			return nil, fmt.Errorf("bad results size %q: accepted a quantity such as 10Gi", size)
		}
		docs = append(docs, &corev1.PersistentVolumeClaim{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: meta(claim), Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: q}}}})
	}
	waves := (s.Shards + o.Parallelism - 1) / o.Parallelism
	job := &batchv1.Job{TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta(name),
		Spec: batchv1.JobSpec{
			CompletionMode:        ptr(batchv1.IndexedCompletion),
			Completions:           ptr(int32(s.Shards)),
			Parallelism:           ptr(int32(o.Parallelism)),
			BackoffLimitPerIndex:  ptr(int32(1)),
			ActiveDeadlineSeconds: ptr(int64((time.Duration(waves) * s.Time).Seconds())),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: podSpec(s, o, name, claim, labels, shaped)},
		}}
	docs = append(docs, job)
	var out bytes.Buffer
	fmt.Fprintf(&out, "# pltlab sweep %s (config_hash %s): %d loads in %d shards, %d pods at once; estimated %s on one machine.\n",
		s.Config.Name, experiment.ConfigHash(s.Config), plan.Loads, s.Shards, o.Parallelism, plan.Estimate.Round(time.Second))
	fmt.Fprintf(&out, "# kubectl apply -f THIS; when the Job completes, merge the shards from the %s volume with 'pltlab merge'.\n", claim)
	for i, d := range docs {
		b, err := yaml.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("encode %T: %w", d, err)
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}

// podSpec is the pod of one shard.
func podSpec(s Sweep, o K8sOptions, name, claim string, labels map[string]string, shaped bool) corev1.PodSpec {
	cpu := resource.MustParse(fmt.Sprint(s.CPUs))
	mem := resource.MustParse(fmt.Sprintf("%dMi", s.MemoryMiB))
	res := corev1.ResourceList{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem}
	c := corev1.Container{
		Name:  "pltlab",
		Image: o.Image,
		// A retried pod continues its shard's file on the volume instead of starting over.
		Command: []string{"sh", "-c", fmt.Sprintf(`out=%s/shard-$JOB_COMPLETION_INDEX.jsonl; if [ -s "$out" ]; then set -- --resume; fi; `+
			`exec pltlab run --matrix %s/%s --shard auto/%d --out "$out" "$@"`, K8sResultsDir, K8sMatrixDir, MatrixFile, s.Shards)},
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
		{Name: "matrix", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: name + "-matrix"}}}},
		{Name: "results", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}},
		{Name: "dshm", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory,
			SizeLimit: ptr(resource.MustParse("1Gi"))}}},
	}
	if shaped {
		// The capabilities and the TUN device are what the link uses; privileged is needed on top
		// only for a writable /proc/sys (Kubernetes has no narrower switch without user-namespaced
		// pods).
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
