package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/studies"
)

// wantUsage fails t unless a command line exited 2 with one line on stderr containing want.
func wantUsage(t *testing.T, code int, errOut, want string) {
	t.Helper()
	if code != 2 || !strings.Contains(errOut, want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q; want 2 and one line containing %q", code, errOut, want)
	}
}

// TestClusterFlagRefusals (issue 50 items 9 and 12): cluster flags no cluster would take are
// refused in one line before anything is written, and --merge-out may not be the --out file.
func TestClusterFlagRefusals(t *testing.T) {
	dir := t.TempDir()
	study := []string{"--study", "kakhki2017", "--scale", "smoke", "--shards", "2"}
	k8s := append([]string{"k8s", "--image", "pltlab:dev"}, study...)
	same := filepath.Join(dir, "job.yaml")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"slurm cpus 0", append(append([]string{"slurm"}, study...), "--cpus", "0", "--out", filepath.Join(dir, "s")), "bad --cpus 0"},
		{"k8s cpus 0", append(k8s, "--cpus", "0"), "bad --cpus 0"},
		{"slurm shield beyond the shard's cores", append([]string{"--shield-cpu", "2", "slurm"}, append(study, "--out", filepath.Join(dir, "s2"))...), `bad --shield-cpu "2" for the shards: accepted off or a CPU of each shard's node among its --cpus 2 cores, [0 1]`},
		{"k8s shield on one core", append([]string{"--shield-cpu", "0"}, append(k8s, "--cpus", "1")...), `bad --shield-cpu "0" for the shards`},
		{"slurm shield not a number", append([]string{"--shield-cpu", "x", "slurm"}, append(study, "--out", filepath.Join(dir, "s3"))...), `bad --shield-cpu "x"`},
		{"k8s upper-case namespace", append(k8s, "--namespace", "Lab"), `bad namespace "Lab": accepted a DNS-1123 label`},
		{"k8s negative results size", append(k8s, "--results-size", "-1Gi"), `bad results size "-1Gi"`},
		{"k8s merge-out is out", append(k8s, "--out", same, "--merge-out", same), "bad --merge-out " + same},
		{"k8s merge-out is out, forced", append(k8s, "--out", same, "--merge-out", same, "--force"), "bad --merge-out " + same},
		{"k8s both to stdout", append(k8s, "--merge-out", "-"), "bad --merge-out -"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.args...)
			wantUsage(t, code, errOut, tt.want)
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("refused, yet wrote %s", entries[0].Name())
			}
		})
	}
	code, stdout, errOut := runCLI(t, append(k8s, "--namespace", "lab-1", "--results-size", "1Gi", "--cpus", "4",
		"--out", filepath.Join(dir, "shards.yaml"), "--merge-out", filepath.Join(dir, "merge.yaml"))...)
	if code != 0 {
		t.Fatalf("k8s: exit %d, %q %q", code, stdout, errOut)
	}
}

// TestLowRefusals (issue 50 item 13): values that were accepted, or checked only after
// contacting something, are usage errors before anything is done.
func TestLowRefusals(t *testing.T) {
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	t.Setenv("JOB_COMPLETION_INDEX", "")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"reproduce dry-run view", []string{"reproduce", "carlucci2015", "--dry-run", "--view=bogus"}, `bad --view "bogus": accepted HOST:PORT`},
		{"run dry-run view", []string{"run", "--page", "1x1KB", "--link", "none", "--dry-run", "--out", filepath.Join(t.TempDir(), "r.jsonl"), "--view=bogus"}, `bad --view "bogus"`},
		{"load spki", []string{"load", "https://127.0.0.1:1/index.html", "--protocol", "h2", "--spki", "!!!"}, `bad --spki "!!!"`},
		{"run device empty mechanism", []string{"run", "--page", "1x1KB", "--link", "none", "--dry-run", "--device", "motog4:"}, `bad device "motog4:"`},
		{"run shard plus", []string{"run", "--page", "1x1KB", "--link", "none", "--dry-run", "--shard", "+1/2"}, `bad shard "+1/2"`},
		{"reproduce shard plus", []string{"reproduce", "kakhki2017", "--scale", "smoke", "--dry-run", "--shard", "+1/2"}, `bad shard "+1/2"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.args...)
			wantUsage(t, code, errOut, tt.want)
		})
	}
}

// TestReproduceShortNamesEveryStudy (issue 50 item 13): the short help names every study of
// the registry.
func TestReproduceShortNamesEveryStudy(t *testing.T) {
	short := newReproduceCmd(nil).Short
	for _, name := range studies.Names() {
		if !strings.Contains(short, name) {
			t.Errorf("reproduce's short help %q lacks the study %s", short, name)
		}
	}
}

// TestNgtcp2OriginsDryRun (issue 50 item 8): --dry-run refuses a page with other origins for
// the ngtcp2 stack when h3 is measured, and accepts it for a run of h1 and h2 only.
func TestNgtcp2OriginsDryRun(t *testing.T) {
	args := []string{"run", "--page", "1x10KB@o1", "--link", "none", "--h3-stack", "ngtcp2", "--dry-run"}
	code, _, errOut := runCLI(t, args...)
	wantUsage(t, code, errOut, "has objects on other origins")
	if code, _, errOut := runCLI(t, append(args, "--protocols", "h1,h2")...); code != 0 {
		t.Fatalf("h1 and h2 only: exit %d, %s", code, errOut)
	}
}

// TestPagesForceKeepsOtherDirs (issue 50 item 2): a web app's directory (a manifest.json of
// its own, src/) is not a page: refused with and without --force, naming it, and left whole.
func TestPagesForceKeepsOtherDirs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app")
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"name":"App"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		args := []string{"pages", "--spec", "2x1KB", "--out", dir}
		if force {
			args = append(args, "--force")
		}
		code, _, errOut := runCLI(t, args...)
		wantUsage(t, code, errOut, "output directory "+dir+" is not empty and holds no page")
		if b, err := os.ReadFile(filepath.Join(dir, "manifest.json")); err != nil || string(b) != `{"name":"App"}` {
			t.Fatalf("--force %v: the app's manifest is now %q, %v", force, b, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "src")); err != nil {
			t.Fatalf("--force %v: src/ is gone: %v", force, err)
		}
	}
}

// TestNothingStartsBeforeValidation (issue 50 item 5): a measuring command refuses bad input
// before it starts the idle-poll spinners and watchers; given good input, it starts them
// before it opens anything (the seam stops it there).
func TestNothingStartsBeforeValidation(t *testing.T) {
	self, _ := os.Executable()
	dir := t.TempDir()
	errStop := errors.New("stopped at the idle-poll start")
	for _, tt := range []struct {
		name    string
		args    []string
		code    int
		started bool
	}{
		{"run --runs 0", []string{"run", "--page", "1x1KB", "--link", "none", "--runs", "0"}, 2, false},
		{"reproduce nosuch", []string{"reproduce", "nosuch"}, 2, false},
		{"flows --flow h9", []string{"flows", "--link", "none", "--flow", "h9"}, 2, false},
		{"link check bad link", []string{"link", "check", "--link", "rate=fast"}, 2, false},
		{"shell bad link", []string{"shell", "--link", "rate=fast", "--", "true"}, 2, false},
		{"shell no such command", []string{"shell", "--link", "none", "--", "pltlab-no-such-command"}, 127, false},
		{"run", []string{"run", "--page", "1x1KB", "--link", "none", "--runs", "1", "--chrome", self, "--out", filepath.Join(dir, "r.jsonl")}, 1, true},
		{"flows", []string{"flows", "--link", "none", "--flow", "h2", "--duration", "1s", "--out", filepath.Join(dir, "f.jsonl")}, 1, true},
		{"reproduce", []string{"reproduce", "carlucci2015", "--scale", "smoke", "--chrome", self, "--out", filepath.Join(dir, "study")}, 1, true},
		{"link check", []string{"link", "check", "--link", "none"}, 1, true},
		{"shell", []string{"shell", "--link", "none", "--", "true"}, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			started := false
			start := func(*cobra.Command, idlepoll.Mode) error { started = true; return errStop }
			code, _, errOut := runCLIWith(t, start, append([]string{"--idle-poll", "on"}, tt.args...)...)
			if code != tt.code || started != tt.started {
				t.Fatalf("exit %d, idle poll started %v (%q); want exit %d, started %v", code, started, errOut, tt.code, tt.started)
			}
			if tt.started && !strings.Contains(errOut, errStop.Error()) {
				t.Fatalf("stderr %q: started, but not stopped by the seam", errOut)
			}
		})
	}
}
