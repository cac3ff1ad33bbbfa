package studies

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/experiment"
)

// scheduled counts the loads and bulk runs a run of plan p with o makes, read from what the
// runner is handed (each part's experiment plan and the flow and custom parts), not from the
// plan's own counts.
func scheduled(t *testing.T, p Plan, o RunOptions) (loads, runs int) {
	t.Helper()
	pr, err := p.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, pp := range pr.Parts {
		loads += len(pp.Left())
	}
	for _, f := range pr.Plan.Flows {
		runs += len(f.Mixes) * f.Runs
	}
	if c := pr.Plan.Custom; c != nil {
		runs += c.Runs()
	}
	return loads, runs
}

// TestRunsChangeTheAnnouncement checks, for every study at every scale, that --runs and --seed
// change what a run announces (loads, flow runs, estimate) exactly as they change what it runs.
func TestRunsChangeTheAnnouncement(t *testing.T) {
	for _, st := range append(All(), CarlucciCalibration()) {
		for _, sc := range Scales {
			t.Run(fmt.Sprintf("%s/%s", st.Name, sc), func(t *testing.T) {
				base := st.Plan(sc)
				o := RunOptions{Runs: 50, Seed: 7}
				applied := base.Apply(o)
				pr, err := applied.Prepare(o)
				if err != nil {
					t.Fatal(err)
				}
				loads, runs := scheduled(t, base, o)
				if pr.Loads() != loads || applied.Loads() != loads {
					t.Errorf("announced %d (plan %d) page loads, the runner is handed %d", pr.Loads(), applied.Loads(), loads)
				}
				if pr.FlowRuns() != runs || applied.FlowRuns() != runs {
					t.Errorf("announced %d (plan %d) flow runs, the runner is handed %d", pr.FlowRuns(), applied.FlowRuns(), runs)
				}
				for _, pp := range pr.Parts {
					if pp.Config.Runs != 50 || pp.Config.Seed != 7 {
						t.Errorf("part %s runs %d loads per cell with seed %d, want 50 and 7", pp.Config.Name, pp.Config.Runs, pp.Config.Seed)
					}
				}
				line := pr.Announce()
				if want := fmt.Sprintf(": %d page loads", loads); !strings.Contains(line, want) || !strings.Contains(line, applied.Custom.countRuns(runs, customRuns(applied.Custom), "flow runs", ", ")) || !strings.Contains(line, "--runs 50 seed 7") {
					t.Errorf("announcement %q does not say %d page loads, %d flow runs, --runs 50 seed 7", line, loads, runs)
				}
				est, err := applied.Estimate()
				if err != nil {
					t.Fatal(err)
				}
				if e := pr.Estimate(); e != est {
					t.Errorf("the run's estimate %v differs from the plan's %v", e, est)
				}
				was, err := base.Estimate()
				if err != nil {
					t.Fatal(err)
				}
				baseLoads, baseRuns := scheduled(t, base, RunOptions{})
				changed := baseLoads != loads || (base.Custom != nil && baseRuns != runs)
				if changed && est == was {
					t.Errorf("--runs 50 changed the work (%d -> %d loads, %d -> %d runs) but not the estimate %v", baseLoads, loads, baseRuns, runs, est)
				}
				if len(base.Parts) > 0 && !changed {
					t.Errorf("--runs 50 left the %d page loads as they were", loads)
				}
				// Applying twice is applying once; sharding the applied plan cuts the loads announced.
				if again := applied.Apply(o); again.Loads() != applied.Loads() {
					t.Errorf("Apply twice: %d loads, once %d", again.Loads(), applied.Loads())
				}
				if most, _ := maxShards(applied, o); applied.Shardable() == nil && most >= 2 {
					sh, err := cutShards(applied, 2, o)
					if err != nil {
						t.Fatal(err)
					}
					sum := 0
					for _, s := range sh {
						sum += s.Measured()
					}
					if m := pr.Measured(); sum != m {
						t.Errorf("2 shards measure %d loads, the unsharded run %d", sum, m)
					}
				}
			})
		}
	}
}

// TestApplyKeepsTheScale checks that the zero options give the scale's own plan.
func TestApplyKeepsTheScale(t *testing.T) {
	p := carlucci().Plan(Quick)
	q := p.Apply(RunOptions{})
	if q.Loads() != p.Loads() || q.Parts[0].Config.Runs != p.Parts[0].Config.Runs || q.Parts[0].Config.Seed != p.Parts[0].Config.Seed {
		t.Fatalf("Apply(zero) changed the plan: %d loads, runs %d", q.Loads(), q.Parts[0].Config.Runs)
	}
	if q.Parts[0].Config.Seed != 0 && q.Parts[0].Config.Seed != experiment.DefaultSeed {
		t.Fatalf("seed %d", q.Parts[0].Config.Seed)
	}
}
