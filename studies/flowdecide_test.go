package studies

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// TestRunsToExclude checks the runs per mix an interval needs against hand-worked values: an
// interval of half-width 0.0046 from 3 runs around 0.0115, with its bound 0.01 at 0.0015,
// shrinks as 1/sqrt(n): n = 3 (2.807 + 0.8416)^2 / 2.807^2 (0.0046 / 0.0015)^2 = 47.4, so 48
// runs at alpha 0.005; on its bound, no number of runs.
func TestRunsToExclude(t *testing.T) {
	if n := runsToExclude(3, 0.0115, 0.0046, 0.01, 0.005); n != 48 {
		t.Errorf("runsToExclude = %d, want 48", n)
	}
	if n := runsToExclude(3, 0.95, 0.001, 0.9, 0.01); n != minFlowRuns {
		t.Errorf("an interval far off its bound: %d runs, want the floor %d", n, minFlowRuns)
	}
	if n := runsToExclude(3, 0.9, 0.02, 0.9, 0.01); n != math.MaxInt32 {
		t.Errorf("on the bound: %d runs, want none (MaxInt32)", n)
	}
	if h := halfToward(0.0115, 0.0069, 0.0161, 0.01); math.Abs(h-0.0046) > 1e-12 {
		t.Errorf("halfToward below = %g", h)
	}
	if h := halfToward(0.85, 0.80, 0.93, 0.9); math.Abs(h-0.08) > 1e-12 {
		t.Errorf("halfToward above = %g", h)
	}
}

// TestDecideFlows: carlucci2015's finding 5 with its loss difference holding the 1 pp bound
// (QUIC 0.0215, TCP 0.0100, +-0.001 between runs, 3 runs) is inconclusive and names the flow
// runs that decide it; --decide's plan measures the two alone mixes that many more times, with
// a seed of its own, as part "flows/decide/0"; the runs it makes pool with the part's (numbered
// on), are warned about, and decide the finding: contradicted, the difference 0.0115 above 1 pp.
func TestDecideFlows(t *testing.T) {
	st := carlucci()
	recs := flowRuns(3, 2.80e6, 0.0215, 0.001, [2]float64{1.5e6, 1.3e6})
	plan := FromRecords(st.Plan(Quick), recs)
	e := Evaluate(st, plan, recs)
	j := e.Judge()[4]
	if st.Findings[4].ID != "safe-alone" || j.Verdict != Inconclusive || len(j.FlowNeeds) != 1 {
		t.Fatalf("safe-alone: %s (%s), flow needs %+v", j.Verdict, j.Evidence, j.FlowNeeds)
	}
	// WelchPerArm(0.001, 0.001, 0.0015, 0.005) = (2.807 + 0.8416)^2 2e-6 / 2.25e-6 = 11.8.
	n := j.FlowNeeds[0]
	if n.Criterion != "loss ratio difference" || n.Runs != 12 || n.Have != 3 || n.TimeS <= 0 ||
		!slices.EqualFunc(n.Mixes, [][]string{{"h2:cubic"}, {"h3"}}, slices.Equal) {
		t.Fatalf("need %+v", n)
	}
	if !strings.Contains(j.Evidence, "12 runs per mix of h2:cubic, h3") || !strings.Contains(j.Evidence, "reproduce --decide") {
		t.Errorf("evidence does not say what decides it: %s", j.Evidence)
	}
	dp, skipped := DecidePlan(e)
	if len(dp.Parts) != 0 || len(dp.Flows) != 1 || len(skipped) != 0 {
		t.Fatalf("decide plan: %d parts, flows %+v, skipped %q", len(dp.Parts), dp.Flows, skipped)
	}
	f := dp.Flows[0]
	if f.Name != "flows/decide/0" || f.Runs != 9 || len(f.Mixes) != 2 || f.Seed == 0 || f.Seed == experiment.DefaultSeed ||
		f.Link != plan.Flows[0].Link || f.Duration != plan.Flows[0].Duration {
		t.Fatalf("decide flow part %+v", f)
	}
	if dp.FlowRuns() != 18 {
		t.Errorf("decide plan: %d flow runs, want 18", dp.FlowRuns())
	}
	// The runs it adds, as the runner would write them.
	var more []*result.Record
	for r := range f.Runs {
		d := 0.001 * float64(r%3-1)
		for _, x := range slices.Concat(flowRecs(r, []string{"h2:cubic"}, []float64{2.85e6}, []float64{0.010 - d}, 1, 0.1),
			flowRecs(r, []string{"h3:newreno"}, []float64{2.80e6}, []float64{0.0215 + d}, 1, 0.1)) {
			x.Experiment = PartExperiment(Carlucci2015, f.Name)
			more = append(more, x)
		}
	}
	all := slices.Concat(recs, more)
	e2 := Evaluate(st, FromRecords(st.Plan(Quick), all), all)
	if q := aloneFlows(e2.mixes("flows"), "h3"); len(q) != 12 {
		t.Errorf("pooled: %d QUIC runs alone, want 12", len(q))
	}
	runs := map[int]bool{}
	for _, m := range e2.mixes("flows") {
		if m.Mix == "h3:newreno" {
			runs[m.Run] = true
		}
	}
	if len(runs) != 12 || !runs[11] {
		t.Errorf("pooled runs numbered %v, want 0..11", runs)
	}
	j2 := e2.Judge()[4]
	if j2.Verdict != Contradicted || len(j2.FlowNeeds) != 0 {
		t.Errorf("after --decide: %s (%s), needs %+v; want contradicted", j2.Verdict, j2.Evidence, j2.FlowNeeds)
	}
	if w := strings.Join(e2.Warnings(), "\n"); !strings.Contains(w, "flow runs were added by `reproduce --decide`") {
		t.Errorf("no warning about the added flow runs: %q", w)
	}
	// A second --decide counts on from the parts already made, and has nothing to add here.
	if dp2, _ := DecidePlan(e2); len(dp2.Flows) != 0 {
		t.Errorf("a decided finding asks for more runs: %+v", dp2.Flows)
	}
	// Jain's index on its bound: no number of runs decides it, and --decide says so.
	onBound := flowRuns(3, 2.80e6, 0.012, 0.001, [2]float64{1.8668e6, 0.9332e6})
	e3 := Evaluate(st, FromRecords(st.Plan(Quick), onBound), onBound)
	if j := e3.Judge()[5]; j.Verdict != Inconclusive || len(j.FlowNeeds) != 1 {
		t.Fatalf("safe-sharing on its bound: %s, needs %+v", j.Verdict, j.FlowNeeds)
	}
	if dp3, sk := DecidePlan(e3); len(dp3.Flows) != 0 || len(sk) != 1 || !strings.Contains(sk[0], "Jain's index") {
		t.Errorf("on the bound: flows %+v, skipped %q", dp3.Flows, sk)
	}
}
