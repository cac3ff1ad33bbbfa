package experiment

import (
	"fmt"

	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// CheckComplete compares the records of a sharded experiment (one configuration, as plan.Merge
// leaves them) with its plan: which shards and which cells are missing or short
// (plan.Completeness). Shards that record their units (plan.CheckRecorded) are judged by them;
// shards of an older pltlab, whose plan lines list none, by the cut this pltlab's cost model
// gives their plan line's configuration, each plan line checked to list as many loads as that
// cut gives its shard. It returns nil when no record is sharded. Errors: plan.CheckRecorded's,
// and for the older shards a cut that differs from theirs.
func CheckComplete(recs []*result.Record) (*plan.Completeness, error) {
	line, count, err := plan.PlanLineOf(recs) // refuses a study's shards: 'pltlab reproduce --merge'
	if err != nil || line == nil {
		return nil, err
	}
	c, recorded, err := plan.CheckRecorded(recs)
	if err != nil || recorded {
		return c, err
	}
	whole := FromPlan(line.Plan)
	whole.Shard = plan.Shard{Count: count} // shard 0's schedule holds the one cut of every shard
	sched, err := NewSchedule(whole)
	if err == nil && sched.Sharding == nil { // no line names its shard count
		err = fmt.Errorf("bad shard count %d: accepted 1..%d", count, plan.MaxShards)
	}
	if err != nil {
		return nil, fmt.Errorf("plan of %d shards: %w", count, err)
	}
	p := sched.Sharding
	if err := plan.Miscut(recs, count, func(r *result.Record, sh plan.Shard) (int, bool) {
		return len(p.Slices[sh.Index].Jobs), r.ConfigHash == line.ConfigHash
	}); err != nil {
		return nil, err
	}
	owed := make([][]int, len(p.Slices))
	for k, part := range p.Slices {
		owed[k] = part.Jobs
	}
	return plan.Owed(recs, line, owed), nil
}
