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
	whole, err := NewSchedule(FromPlan(line.Plan))
	if err != nil {
		return nil, fmt.Errorf("plan of %d shards: %w", count, err)
	}
	p, err := whole.Shards(count)
	if err != nil {
		return nil, fmt.Errorf("plan of %d shards: %w", count, err)
	}
	if err := samePlan(recs, line.ConfigHash, p); err != nil {
		return nil, err
	}
	owed := make([][]int, len(p.Slices))
	for k, part := range p.Slices {
		owed[k] = part.Jobs
	}
	return plan.Owed(recs, line, owed), nil
}

// samePlan checks that every plan line of the configuration hash lists as many loads as this
// pltlab's plan gives its shard (plan.Miscut): the shards are cut by the cost model, so shards
// cut by another version's model would be judged against shares they never had.
func samePlan(recs []*result.Record, hash string, p Sharding) error {
	r, want := plan.Miscut(recs, len(p.Slices), func(r *result.Record, sh plan.Shard) (int, bool) {
		return len(p.Slices[sh.Index].Jobs), r.ConfigHash == hash
	})
	if r == nil {
		return nil
	}
	version := "another version"
	if r.Env != nil && r.Env.Pltlab != "" {
		version = "pltlab " + r.Env.Pltlab
	}
	return fmt.Errorf("shard %s's plan line lists %d loads, and this pltlab's plan gives it %d: the shards were cut by the cost model of %s; merge them with that version", r.Shard, r.Plan.Loads, want, version)
}
