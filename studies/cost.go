package studies

import (
	"fmt"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/plan"
)

// Loads returns the number of page loads of the plan, warm-ups included, counted without
// deriving a schedule (experiment.Config.Loads).
func (p Plan) Loads() int {
	n := 0
	for _, part := range p.Parts {
		n += part.Config.Loads()
	}
	return n
}

// FlowRuns returns the number of bulk-flow runs of the plan.
func (p Plan) FlowRuns() int {
	return p.flowPartRuns() + customRuns(p.Custom)
}

// customRuns is the runs of a Custom schedule (0 for none).
func customRuns(c *CustomPart) int {
	if c == nil {
		return 0
	}
	return c.Runs()
}

// flowPartRuns is the runs of the plan's flow parts.
func (p Plan) flowPartRuns() int {
	n := 0
	for _, f := range p.Flows {
		n += len(f.Mixes) * f.Runs
	}
	return n
}

// Estimate predicts the plan's wall time in one process on one 2-core machine with the one
// cost model of package plan (its constants fitted from records; see plan.LoadOverhead):
// plan.StartCost, every page-load part's experiment.Estimate and every flow part's
// plan.EstimateFlows, priced without deriving a schedule; a run's Prepared.Estimate sums the
// unit list it derived (plan.Units.Total), to the same nanosecond. It fails, naming the part,
// on a spec that does not parse.
func (p Plan) Estimate() (time.Duration, error) {
	d := plan.StartCost
	for i, c := range p.Configs(RunOptions{}) {
		t, err := experiment.Estimate(c)
		if err != nil {
			return 0, fmt.Errorf("part %s: %w", p.Parts[i].Name, err)
		}
		d += t
	}
	for _, f := range p.Flows {
		e, err := plan.EstimateFlows(len(f.Mixes)*f.Runs, f.Duration, f.Link)
		if err != nil {
			return 0, fmt.Errorf("part %s: %w", f.Name, err)
		}
		d += e
	}
	if p.Custom != nil {
		d += p.Custom.Estimate()
	}
	return d, nil
}

// Footprint returns the modelled peak memory of one process running the plan (or any shard of
// it): the largest footprint of its page-load parts (experiment.PlanFootprint), because parts
// run one after another; a plan of flow parts alone is pltlab's own (experiment.FootprintBaseMiB).
// It fails on a page spec that does not parse.
func (p Plan) Footprint() (experiment.Footprint, error) {
	out := experiment.Footprint{MiB: experiment.FootprintBaseMiB}
	for _, part := range p.Parts {
		f, err := experiment.PlanFootprint(part.Config)
		if err != nil {
			return out, fmt.Errorf("part %s: %w", part.Name, err)
		}
		if f.MiB > out.MiB {
			out = f
		}
	}
	return out, nil
}
