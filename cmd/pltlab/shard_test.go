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
		{"more shards than blocks", []string{"run", "--page", "1x1KB", "--link", "none", "--runs", "2", "--warmup", "0", "--shard", "0/3"}, "accepted 1..2 shards"},
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
		{"slurm no matrix", []string{"slurm", "--shards", "2", "--out", dir}, "missing --matrix"},
		{"slurm no out", []string{"slurm", "--matrix", matrix, "--shards", "2"}, "missing --out"},
		{"slurm no shards", []string{"slurm", "--matrix", matrix, "--out", dir}, "bad --shards 0"},
		{"slurm too many shards", []string{"slurm", "--matrix", matrix, "--shards", "11", "--out", dir}, "accepted 1..10 shards"},
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
