package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/pltlab/pltlab/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// tinyMatrix is a sweep that needs neither root nor much time: an unshaped link, a 10 KB page,
// h2 cold (one browser per shard), 4 measured blocks and 1 warm-up block of one load each.
const tinyMatrix = `name: tiny-sim
pages: [2x5KB]
links: [none]
protocols: [h2]
runs: 4
warmup: 1
timeout: 30s
`

// needChromium skips when Chromium is absent and CI is unset (in CI it must run).
func needChromium(t *testing.T) {
	t.Helper()
	testenv.Require(t, "chromium")
}

// buildPltlab builds the pltlab binary into a temporary directory.
func buildPltlab(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pltlab")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/pltlab").CombinedOutput(); err != nil {
		t.Fatalf("build pltlab: %v\n%s", err, out)
	}
	return bin
}

// expand does what the kubelet does to a container's command: $(VAR) becomes the value of the
// container's environment variable VAR.
func expand(s string, env map[string]string) string {
	for k, v := range env {
		s = strings.ReplaceAll(s, "$("+k+")", v)
	}
	return s
}

// TestIntegrationK8sJobSimulated runs the Indexed Job that 'pltlab k8s' writes without a
// cluster: the ConfigMap becomes a directory, the results volume another, and each completion
// index one process of the container's command with JOB_COMPLETION_INDEX set (as the Job
// controller sets it), one at a time (docs/design.md: no test measures through two links at
// once unless that is what it tests); then the shards are merged and must hold the
// cells and counts of the unsharded schedule, every load valid. A lost shard must be named.
func TestIntegrationK8sJobSimulated(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test")
	}
	needChromium(t)
	bin := buildPltlab(t)
	const shards, parallelism = 4, 2
	s := sweep(t, tinyMatrix, shards)
	y, err := K8s(s, K8sOptions{Image: "localhost/pltlab:latest", Parallelism: parallelism})
	if err != nil {
		t.Fatal(err)
	}
	cm, _, job := decodeK8s(t, y)
	etc, results := t.TempDir(), t.TempDir()
	for name, data := range cm.Data {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := job.Spec.Template.Spec.Containers[0]
	paths := strings.NewReplacer(K8sMatrixDir, etc, K8sResultsDir, results)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	// In a cluster each pod has a node of its own (the Job asks for parallelism pods at once,
	// checked above by the YAML's tests); here they would share this machine's two cores, and
	// two Chromium measurements through two links at once disturb each other's timing, which is
	// not what this test tests. So the pods run one at a time, each still with its own index.
	sem := make(chan struct{}, 1)
	var wg sync.WaitGroup
	errs := make([]error, *job.Spec.Completions)
	for i := range int(*job.Spec.Completions) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			env := map[string]string{"JOB_COMPLETION_INDEX": fmt.Sprint(i)}
			args := make([]string, len(c.Command))
			for k, a := range c.Command {
				args[k] = paths.Replace(expand(a, env))
			}
			cmd := exec.CommandContext(ctx, args[0], args[1:]...)
			// The image's pltlab is on PATH; the Job controller sets JOB_COMPLETION_INDEX.
			cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"),
				"JOB_COMPLETION_INDEX="+env["JOB_COMPLETION_INDEX"], "SLURM_ARRAY_TASK_ID=")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("index %d: %v\n%s", i, err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d shards, one at a time (the Job's parallelism %d): %v", shards, parallelism, time.Since(start).Round(100*time.Millisecond))

	files, _ := filepath.Glob(filepath.Join(results, "shard-*.jsonl"))
	if len(files) != shards {
		t.Fatalf("shard files %v, want %d", files, shards)
	}
	merged := filepath.Join(t.TempDir(), "merged.jsonl")
	out, err := exec.Command(bin, append([]string{"merge", "--out", merged}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("merge: %v\n%s", err, out)
	}
	checkMerged(t, s.Config, merged)

	// A shard lost: merge exits 1 and names it.
	lost := exec.Command(bin, append([]string{"merge", "--out", "/dev/null"}, files[0], files[2], files[3])...)
	out, err = lost.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "missing shards 1/4") {
		t.Fatalf("merge without shard 1: %v\n%s", err, out)
	}
}

// checkMerged checks that the merged file holds, per (page, link, protocol, mode), as many
// measured loads as the unsharded schedule of c, each valid, one run number per measured load,
// and every warm-up made by each shard that brought its link up.
func checkMerged(t *testing.T, c experiment.Config, merged string) {
	t.Helper()
	f, err := os.Open(merged)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := result.NewReader(f, merged)
	got, want := map[string]int{}, map[string]int{}
	runs := map[int]bool{}
	warm := map[string]bool{}
	for {
		r, err := rd.Next()
		if err != nil {
			break
		}
		if !r.IsLoad() {
			continue
		}
		if r.Warmup {
			k := fmt.Sprint(r.Run, r.Shard)
			if warm[k] {
				t.Errorf("warm-up run %d of shard %s twice", r.Run, r.Shard)
			}
			warm[k] = true
		} else if runs[r.Run] {
			t.Errorf("run %d twice", r.Run)
		}
		runs[r.Run] = true
		if r.ConfigHash != experiment.ConfigHash(c) || r.Shard == "" {
			t.Errorf("run %d: config_hash %q shard %q", r.Run, r.ConfigHash, r.Shard)
		}
		if !r.Valid {
			t.Errorf("run %d invalid: %s", r.Run, r.InvalidReason)
		}
		if !r.Warmup {
			got[fmt.Sprintf("%s|%s|%s|%s", r.Page.Spec, r.Link.Spec, r.Protocol, r.Mode)]++
		}
	}
	jobs := experiment.Order(c)
	for _, j := range jobs {
		if !j.Warmup {
			want[fmt.Sprintf("%s|%s|%s|%s", c.Pages[j.Page], c.Links[j.Link], j.Arm.Protocol, j.Arm.Mode)]++
		}
	}
	if !reflect.DeepEqual(got, want) || len(runs) != len(jobs) {
		b, _ := json.Marshal(got)
		t.Fatalf("merged cells %s and %d loads, want %v and %d (the unsharded schedule)", b, len(runs), want, len(jobs))
	}
}
