package studies

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// decideTag marks the experiment names of the loads `reproduce --decide` adds to a part:
// "STUDY/PART/decide/K". Evaluate pools them with the part's own loads of the same cell.
const decideTag = "/decide/"

// MaxDecideRuns bounds the loads per arm --decide adds to one cell; a cell that needs more is
// left undecided and named.
const MaxDecideRuns = 500

// DecidePlan returns the plan that would decide the inconclusive findings of e: one part per
// cell a Need names, measuring the loads per arm still missing (Need.Runs - Need.Have) with the
// part's settings (TCP congestion control, TLS, timeout, warm-ups) and a seed of its own, so
// that the new loads are new draws (order and loss). Its experiments are named
// "STUDY/PART/decide/K" with K counting on from the decide parts already in e's records. skipped
// names the cells left out (no number of loads decides them, or more than MaxDecideRuns). Flow
// criteria's needs (Judgement.FlowNeeds) become flow parts "PART/decide/K" the same way
// (decideFlows), pooled with the part's runs by Support.mixes.
func DecidePlan(e *Support) (p Plan, skipped []string) {
	p = Plan{Study: e.Plan.Study, Scale: e.Plan.Scale}
	seen := map[string]bool{}
	k := e.decideParts()
	js := e.Judge()
	for _, j := range js {
		if j.Verdict != Inconclusive {
			continue
		}
		for _, n := range j.Needs {
			key := n.Part + "|" + n.Page + "|" + n.Link + "|" + strings.Join(n.ArmNames, ",")
			if seen[key] {
				continue
			}
			seen[key] = true
			more := n.Runs - n.Have
			switch {
			case n.Runs >= math.MaxInt32:
				skipped = append(skipped, fmt.Sprintf("%s %s %s: no number of loads decides it at the effect %s", n.Part, n.Link, strings.Join(n.ArmNames, " vs "), n.EffectFrom))
				continue
			case more > MaxDecideRuns:
				skipped = append(skipped, fmt.Sprintf("%s %s %s: needs %d more loads per arm, above the %d --decide adds", n.Part, n.Link, strings.Join(n.ArmNames, " vs "), more, MaxDecideRuns))
				continue
			case more <= 0:
				continue
			}
			pr := e.Part(n.Part)
			if pr == nil {
				continue
			}
			c := pr.Part.Config
			c.Pages, c.Links, c.Arms, c.Runs = []string{n.Page}, []string{n.Link}, n.Arms, more
			c.Seed = experiment.DefaultSeed + int64(1000+k)
			name := fmt.Sprintf("%s%s%d", n.Part, decideTag, k)
			p.Parts = append(p.Parts, Part{Name: name, Title: "Loads added to decide " + n.Part, Config: c})
			k++
		}
	}
	p, _, fskipped := e.decideFlows(p, js, k)
	return p, append(skipped, fskipped...)
}

// decideParts counts the decide parts already in e's records.
func (e *Support) decideParts() int {
	names := map[string]bool{}
	for _, r := range e.Records {
		if strings.Contains(r.Experiment, decideTag) {
			names[r.Experiment] = true
		}
	}
	return len(names)
}

// ErrNotDecidable is returned (wrapped) by Decide when the records cannot be added to: an
// unfinished reproduction, or loads of another pltlab version.
var ErrNotDecidable = errors.New("cannot add loads to decide")

// Decide returns the plan of the loads that would decide the inconclusive findings of the
// complete reproduction recs of st (DecidePlan of its evaluation), and the cells it leaves out.
// The rules it keeps: only a complete reproduction is decided (Complete), and loads of two pltlab
// versions are never pooled, so records made by another version than version cannot be added
// to. Errors wrap ErrNotDecidable and say what to do.
func Decide(st *Study, plan Plan, recs []*result.Record, version string) (Plan, []string, error) {
	if !Complete(plan, recs) {
		return Plan{}, nil, fmt.Errorf("%w: the records are not a complete reproduction of %s: finish it first (--resume)", ErrNotDecidable, st.Name)
	}
	for _, r := range recs {
		if r.IsLoad() && r.Env != nil && r.Env.Pltlab != version {
			return Plan{}, nil, fmt.Errorf("%w: they were measured with pltlab %s and this is pltlab %s: loads of two versions are never pooled, so the added loads could not decide anything; rerun the study with this pltlab",
				ErrNotDecidable, r.Env.Pltlab, version)
		}
	}
	dp, skipped := DecidePlan(Evaluate(st, FromRecords(plan, recs), recs))
	return dp, skipped, nil
}
