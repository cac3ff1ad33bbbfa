package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShardUsageErrors(t *testing.T) {
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	t.Setenv("JOB_COMPLETION_INDEX", "")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"index = count", []string{"run", "--page", "1x1KB", "--link", "none", "--shard", "4/4"}, `bad shard "4/4"`},
		{"not a shard", []string{"run", "--page", "1x1KB", "--link", "none", "--shard", "half"}, "accepted I/N"},
		{"more shards than blocks", []string{"run", "--page", "1x1KB", "--link", "none", "--runs", "2", "--warmup", "0", "--shard", "0/3"}, "at most 2 shards can each measure something: accepted 1..2"},
		{"auto outside an array", []string{"run", "--page", "1x1KB", "--link", "none", "--shard", "auto"}, "neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want 2 and one line containing %q", code, errOut, tt.want)
			}
		})
	}
}

func TestRunDryRun(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "2")
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	code, out, errOut := runCLI(t, "run", "--page", "10x30KB", "--page", "1x1MB", "--link", "carlucci2015", "--link", "3g",
		"--runs", "10", "--shard", "auto/4", "--dry-run", "--chrome", "/nonexistent/chromium")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"= 132 loads", "estimated", "config_hash", "2/4 *", "4 shards: the sweep takes about"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 7 {
		t.Errorf("%d lines, want 7 (summary, header, 4 shards, total):\n%s", n, out)
	}
}

func TestClusterCommands(t *testing.T) {
	dir := t.TempDir()
	matrix := filepath.Join(dir, "grid.yaml")
	if err := os.WriteFile(matrix, []byte("pages: [1x5KB]\nlinks: [none, carlucci2015]\nprotocols: [h2]\nruns: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"slurm no matrix", []string{"slurm", "--shards", "2", "--out", dir}, "missing --matrix or --study"},
		{"slurm no out", []string{"slurm", "--matrix", matrix, "--shards", "2"}, "missing --out"},
		{"slurm no shards", []string{"slurm", "--matrix", matrix, "--out", dir}, "bad --shards 0"},
		{"slurm too many shards", []string{"slurm", "--matrix", matrix, "--shards", "9", "--out", dir}, "at most 8 shards"},
		{"slurm study too many shards", []string{"slurm", "--study", "kakhki2017", "--scale", "smoke", "--shards", "5", "--out", dir}, "at most 4 shards"},
		{"slurm time under the estimate", []string{"slurm", "--study", "kakhki2017", "--scale", "full", "--shards", "4", "--time", "1h", "--out", dir}, "accepted at least"},
		{"slurm matrix and study", []string{"slurm", "--study", "kakhki2017", "--matrix", matrix, "--shards", "2", "--out", dir}, "give one"},
		{"reproduce shard too many", []string{"reproduce", "kakhki2017", "--scale", "smoke", "--shard", "1/5"}, "at most 4 shards"},
		{"reproduce merge without files", []string{"reproduce", "kakhki2017", "--merge"}, "--merge needs"},
		{"list nodes without list", []string{"reproduce", "kakhki2017", "--nodes", "3"}, "--nodes is for --list"},
		{"reproduce highway shard", []string{"reproduce", "highway2023", "--scale", "smoke", "--shard", "0/2"}, "highway2023 at scale smoke has 1 measured blocks and flow parts, so at most 1 shards"},
		{"slurm highway", []string{"slurm", "--study", "highway2023", "--scale", "smoke", "--shards", "2", "--out", dir}, "at most 1 shards"},
		{"k8s highway", []string{"k8s", "--study", "highway2023", "--scale", "smoke", "--shards", "2", "--image", "x"}, "at most 1 shards"},
		{"k8s no image", []string{"k8s", "--matrix", matrix, "--shards", "2"}, "bad image"},
		{"k8s parallelism", []string{"k8s", "--matrix", matrix, "--shards", "2", "--parallelism", "3", "--image", "x"}, "bad parallelism 3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("exit %d, stderr %q; want 2 and one line containing %q", code, errOut, tt.want)
			}
		})
	}
	out := filepath.Join(dir, "sweep")
	code, stdout, errOut := runCLI(t, "slurm", "--matrix", matrix, "--shards", "2", "--out", out, "--pltlab", "/opt/pltlab")
	if code != 0 || !strings.Contains(stdout, "submit with: sh "+filepath.Join(out, "submit.sh")) {
		t.Fatalf("slurm: exit %d, %q %q", code, stdout, errOut)
	}
	for _, f := range []string{"shards.sbatch", "merge.sbatch", "submit.sh", "matrix.yaml", "logs"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("slurm wrote no %s: %v", f, err)
		}
	}
	if code, _, _ := runCLI(t, "slurm", "--matrix", matrix, "--shards", "2", "--out", out); code != 2 {
		t.Errorf("slurm into a full directory without --force: exit %d", code)
	}
	code, stdout, errOut = runCLI(t, "k8s", "--matrix", matrix, "--shards", "2", "--parallelism", "2", "--image", "pltlab:dev")
	if code != 0 || !strings.Contains(stdout, "completionMode: Indexed") || !strings.Contains(stdout, "NET_ADMIN") {
		t.Fatalf("k8s: exit %d, %q", code, errOut)
	}
}

func TestMatrixShaped(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for name, tt := range map[string]struct {
		path string
		want bool
	}{
		"none only":  {write("none.yaml", "pages: [1x5KB]\nlinks: [none]\n"), false},
		"one shaped": {write("shaped.yaml", "pages: [1x5KB]\nlinks: [none, carlucci2015]\n"), true},
		"bad file":   {write("bad.yaml", "pages: [\n"), true},
		"missing":    {filepath.Join(dir, "nope.yaml"), true},
	} {
		if got := matrixShaped(tt.path); got != tt.want {
			t.Errorf("%s: matrixShaped = %v, want %v", name, got, tt.want)
		}
	}
}

// TestSlurmShipsTraces: a matrix whose link names a trace by a path relative to the matrix file
// gets the trace copied beside the matrix copy, and one outside its directory is refused.
func TestSlurmShipsTraces(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "m", "traces"), 0o755); err != nil {
		t.Fatal(err)
	}
	trace := strings.Repeat("1\n", 100)
	if err := os.WriteFile(filepath.Join(dir, "m", "traces", "lte.trace"), []byte(trace), 0o644); err != nil {
		t.Fatal(err)
	}
	matrix := filepath.Join(dir, "m", "grid.yaml")
	body := "pages: [1x5KB]\nlinks: [\"down=trace:traces/lte.trace,up=10mbit,rtt=20ms\"]\nprotocols: [h2]\nruns: 2\n"
	if err := os.WriteFile(matrix, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "sweep")
	// Run from another directory: the trace is found from the matrix file's.
	t.Chdir(dir)
	code, stdout, errOut := runCLI(t, "slurm", "--matrix", matrix, "--shards", "2", "--out", out, "--pltlab", "/opt/pltlab")
	if code != 0 {
		t.Fatalf("slurm: exit %d, %q %q", code, stdout, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(out, "traces", "lte.trace")); err != nil || string(b) != trace {
		t.Fatalf("trace not shipped: %v", err)
	}
	outside := filepath.Join(dir, "m", "outside.yaml")
	if err := os.WriteFile(outside, []byte(strings.ReplaceAll(body, "traces/lte.trace", "../lte.trace")), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "lte.trace"), []byte(trace), 0o644)
	code, _, errOut = runCLI(t, "slurm", "--matrix", outside, "--shards", "2", "--out", filepath.Join(dir, "s2"))
	if code != 2 || !strings.Contains(errOut, "relative to the matrix file") {
		t.Fatalf("a trace outside the matrix directory: exit %d, %q", code, errOut)
	}
}

// TestListNodesHighwayByPath: `reproduce --list --nodes N` gives every study's time on N nodes;
// highway2023 shards by path, so its quick scale (veth and the 1 Gbit/s path) takes at most 2.
func TestListNodesHighwayByPath(t *testing.T) {
	code, out, errOut := runCLI(t, "reproduce", "--list", "--nodes", "4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, line := range strings.Split(out, "\n") {
		// every study shards (evolution by endpoint since 2026-12-07)
		if strings.Contains(line, "not shardable") {
			t.Errorf("a study listed as not shardable: %s", line)
		}
	}
	quick := false
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "highway2023" && f[1] == "quick" {
			quick = strings.Contains(line, "(2 shards at most)")
		}
	}
	if !quick || !strings.Contains(out, "kakhki2017") {
		t.Fatalf("list without highway2023 quick on 2 shards at most, or without kakhki2017:\n%s", out)
	}
}
