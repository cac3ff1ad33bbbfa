package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/internal/cpushield"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/studies"
)

// TestReproduceDryRunAnnouncesTheRuns checks that --runs, --seed and --shard change the page
// loads and the estimate a reproduction announces, study by study, and that the dry run needs no
// root, Chromium or output directory.
func TestReproduceDryRunAnnouncesTheRuns(t *testing.T) {
	loadsOf := regexp.MustCompile(`: (\d+) page loads .*, (\d+) flow runs, estimated ([^,]+?) on one`)
	for _, study := range []string{"carlucci2015", "kakhki2017", "muthuraj2024", "highway2023"} {
		var lines []string
		for _, extra := range [][]string{nil, {"--runs", "50"}, {"--runs", "50", "--seed", "3"}} {
			args := append([]string{"reproduce", study, "--dry-run", "--out", filepath.Join(t.TempDir(), "none")}, extra...)
			code, out, errOut := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut)
			}
			m := loadsOf.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("%s: no announcement in %q", strings.Join(args, " "), out)
			}
			lines = append(lines, m[0])
		}
		if lines[0] == lines[1] {
			t.Errorf("%s: --runs 50 announces what the scale's plan does: %q", study, lines[0])
		}
		if lines[1] != lines[2] {
			t.Errorf("%s: --seed changed the counts or the estimate: %q vs %q", study, lines[1], lines[2])
		}
	}
	code, out, _ := runCLI(t, "reproduce", "carlucci2015", "--runs", "50", "--dry-run")
	if code != 0 || !strings.Contains(out, "663 page loads (650 measured)") || !strings.Contains(out, "part lossy: 459 page loads") {
		t.Errorf("carlucci2015 --runs 50: exit %d, %q: want 663 page loads, lossy 459", code, out)
	}
	if _, err := os.Stat("results"); err == nil {
		t.Errorf("the dry run wrote results/")
	}
}

// TestJobsAnnounceTheRuns checks that a study's job array comments count the loads --runs gives.
func TestJobsAnnounceTheRuns(t *testing.T) {
	count := func(runs string) string {
		out := filepath.Join(t.TempDir(), "jobs")
		args := []string{"slurm", "--study", "carlucci2015", "--shards", "2", "--out", out}
		if runs != "" {
			args = append(args, "--runs", runs)
		}
		code, _, errOut := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("slurm: exit %d: %s", code, errOut)
		}
		b, err := os.ReadFile(filepath.Join(out, "shards.sbatch"))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(\d+) loads in 2 shards`).FindStringSubmatch(string(b))
		if m == nil {
			t.Fatalf("no load count in %s", b)
		}
		return m[1]
	}
	if a, b := count(""), count("50"); a != "165" || b != "663" {
		t.Errorf("slurm job comments: %s loads at the scale's runs, %s with --runs 50; want 165 and 663", a, b)
	}
}

// TestReproduceDerivesItsPlanOnce counts the schedules derived (measureSetup.derive) by one
// `reproduce carlucci2015 --runs 50` that prints its plan, whole and as one shard: one per
// part, once; the announcement, the estimates, the part lines and the shard's share read it.
func TestReproduceDerivesItsPlanOnce(t *testing.T) {
	st, err := studies.Lookup("carlucci2015")
	if err != nil {
		t.Fatal(err)
	}
	parts := len(st.Plan(st.DefaultScale).Parts)
	for _, extra := range [][]string{nil, {"--shard", "1/3"}} {
		n := 0
		setup := measureSetup{start: startIdlePoll, probe: shaping.Available, derive: func(c experiment.Config) (*experiment.Schedule, error) {
			n++
			return experiment.NewSchedule(c)
		}}
		args := append([]string{"reproduce", "carlucci2015", "--runs", "50", "--dry-run", "--out", filepath.Join(t.TempDir(), "none")}, extra...)
		if code, _, errOut := runCLISetup(t, setup, args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errOut)
		}
		if n != parts {
			t.Errorf("%s derived %d part schedules, want %d (one per part)", strings.Join(args, " "), n, parts)
		}
	}
}

// TestSlurmShieldsTheNodes checks that --shield-cpu before slurm is passed to every shard and
// keeps no CPU of the submitting machine.
func TestSlurmShieldsTheNodes(t *testing.T) {
	out := filepath.Join(t.TempDir(), "jobs")
	code, _, errOut := runCLI(t, "--shield-cpu", "1", "slurm", "--study", "carlucci2015", "--shards", "2", "--out", out)
	if code != 0 {
		t.Fatalf("slurm: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(out, "shards.sbatch"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), " --shield-cpu 1 reproduce carlucci2015 ") || !strings.Contains(string(b), "#SBATCH --exclusive") {
		t.Errorf("shards script without the shield or a whole node:\n%s", b)
	}
	if _, held := cpushield.Current(); held {
		t.Error("slurm kept a CPU of the submitting machine")
	}
}
