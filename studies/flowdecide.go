package studies

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/plan"
)

// FlowNeed is what would decide an inconclusive criterion on bulk flows: Runs runs of each of
// Mixes (flow specs, as in FlowPart.Mixes) of flow part Part, of which Have are made, for the
// criterion named by Criterion (e.g. "loss ratio difference"). Time is the cost model's
// estimate (plan.EstimateFlows) of the runs still missing.
type FlowNeed struct {
	Part      string        `json:"part"`
	Mixes     [][]string    `json:"mixes"`
	Runs      int           `json:"runs_per_mix"`
	Have      int           `json:"have_per_mix"`
	Criterion string        `json:"criterion"`
	Time      time.Duration `json:"-"`
	TimeS     float64       `json:"time_s"`
}

// MaxDecideFlowRuns bounds the runs per mix --decide adds to one flow part; a criterion that
// needs more is left undecided and named.
const MaxDecideFlowRuns = 60

// runsToExclude is the runs per mix that would move an interval of half-width half, made from
// have runs around est, off bound with analysis.Power at level alpha: runs are independent, so
// the half-width shrinks as 1/sqrt(runs) and n = have (z_{1-alpha/2} + z_power)^2 /
// z_{1-alpha/2}^2 (half / |est - bound|)^2 (the normal approximation of WelchPerArm, Chow et al.
// 2008, section 3.2.1, with the variance read from the interval). At least minFlowRuns;
// math.MaxInt32 for an estimate on its bound or no interval.
func runsToExclude(have int, est, half, bound, alpha float64) int {
	d := math.Abs(est - bound)
	if have <= 0 || d == 0 || !(half > 0) || math.IsNaN(est) {
		return math.MaxInt32
	}
	z := analysis.NormalQuantile(1 - alpha/2)
	zs := z + analysis.NormalQuantile(analysis.Power)
	n := float64(have) * (zs * zs) / (z * z) * (half * half) / (d * d)
	if n > 1e9 || math.IsNaN(n) {
		return math.MaxInt32
	}
	return max(int(math.Ceil(n)), minFlowRuns)
}

// halfToward is the half-width of the interval [lo, hi] on the side of bound from est (the
// side a decision must clear).
func halfToward(est, lo, hi, bound float64) float64 {
	if bound < est {
		return est - lo
	}
	return hi - est
}

// flowPart returns the plan's flow part called name, nil when the plan has none.
func (e *Support) flowPart(name string) *FlowPart {
	for i := range e.Plan.Flows {
		if e.Plan.Flows[i].Name == name {
			return &e.Plan.Flows[i]
		}
	}
	return nil
}

// mixesWhere returns the part's mixes for which keep holds of their flow specs.
func mixesWhere(f *FlowPart, keep func(mix []string) bool) [][]string {
	var out [][]string
	for _, m := range f.Mixes {
		if keep(m) {
			out = append(out, m)
		}
	}
	return out
}

// aloneMix reports whether mix is one flow of protocol proto ("h3" or "h3:CC").
func aloneMix(proto string) func([]string) bool {
	return func(m []string) bool {
		return len(m) == 1 && (m[0] == proto || strings.HasPrefix(m[0], proto+":"))
	}
}

// flowNeedFor builds the FlowNeed of flow part part's mixes with runs per mix wanted and have
// made, for criterion, with the cost model's time of the missing runs.
func (e *Support) flowNeedFor(part string, mixes [][]string, runs, have int, criterion string) FlowNeed {
	n := FlowNeed{Part: part, Mixes: mixes, Runs: runs, Have: have, Criterion: criterion}
	f := e.flowPart(part)
	if more := runs - have; f != nil && more > 0 && runs < math.MaxInt32 {
		if d, err := plan.EstimateFlows(len(mixes)*more, f.Duration, f.Link); err == nil {
			n.Time, n.TimeS = d, d.Seconds()
		}
	}
	return n
}

// text says what the need is: "decided by 48 runs per mix of h3, h2:cubic (45 more, about
// 14 min; `reproduce --decide`)", or that no number of runs decides it.
func (n FlowNeed) text() string {
	if n.Runs >= math.MaxInt32 {
		return fmt.Sprintf("%s: no number of runs decides an estimate on its bound", n.Criterion)
	}
	var ms []string
	for _, m := range n.Mixes {
		ms = append(ms, strings.Join(m, "+"))
	}
	return fmt.Sprintf("%s: decided with %.0f %% power by %d runs per mix of %s at the value observed here (%d more, about %s; `reproduce --decide`)",
		n.Criterion, analysis.Power*100, n.Runs, strings.Join(ms, ", "), n.Runs-n.Have, quantity.FormatEstimate(n.Time))
}

// decideFlows adds to p one flow part per flow part the inconclusive judgements js need runs
// of: each mix gets the most runs any need asks of it, less those made, as part
// "PART/decide/K" with a seed of its own (k counts on). It returns p, the next k and the needs
// left out (no number of runs decides them, or more than MaxDecideFlowRuns).
func (e *Support) decideFlows(p Plan, js []Judgement, k int) (Plan, int, []string) {
	var skipped []string
	type want struct {
		mix  []string
		more int
	}
	wants := map[string][]want{}
	var order []string
	for _, j := range js {
		if j.Verdict != Inconclusive {
			continue
		}
		for _, n := range j.FlowNeeds {
			more := n.Runs - n.Have
			switch {
			case n.Runs >= math.MaxInt32:
				skipped = append(skipped, fmt.Sprintf("%s %s", n.Part, n.text()))
				continue
			case more > MaxDecideFlowRuns:
				skipped = append(skipped, fmt.Sprintf("%s %s: needs %d more runs per mix, above the %d --decide adds", n.Part, n.Criterion, more, MaxDecideFlowRuns))
				continue
			case more <= 0:
				continue
			}
			if _, ok := wants[n.Part]; !ok {
				order = append(order, n.Part)
			}
			for _, m := range n.Mixes {
				i := slices.IndexFunc(wants[n.Part], func(w want) bool { return slices.Equal(w.mix, m) })
				if i < 0 {
					wants[n.Part] = append(wants[n.Part], want{mix: m, more: more})
				} else {
					wants[n.Part][i].more = max(wants[n.Part][i].more, more)
				}
			}
		}
	}
	for _, part := range order {
		f := e.flowPart(part)
		if f == nil {
			continue
		}
		// One part per distinct count of runs, so no mix is run more than it needs.
		byRuns := map[int][][]string{}
		var counts []int
		for _, w := range wants[part] {
			if _, ok := byRuns[w.more]; !ok {
				counts = append(counts, w.more)
			}
			byRuns[w.more] = append(byRuns[w.more], w.mix)
		}
		slices.Sort(counts)
		for _, runs := range counts {
			d := *f
			d.Name = fmt.Sprintf("%s%s%d", part, decideTag, k)
			d.Title = "Flow runs added to decide " + part
			d.Mixes, d.Runs = byRuns[runs], runs
			d.Seed = experiment.DefaultSeed + int64(1000+k)
			p.Flows = append(p.Flows, d)
			k++
		}
	}
	return p, k, skipped
}
