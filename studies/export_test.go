package studies

import (
	"context"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// Measured returns the shard's measured loads.
func (s ShardSlice) Measured() int {
	n := 0
	for _, p := range s.Parts {
		n += p.Measured
	}
	return n
}

// Run runs the plan's parts one after another, then its flow parts, writing every record to w:
// RunPrepared of p.Prepare(o).
func Run(ctx context.Context, p Plan, o RunOptions, w *result.Writer) (experiment.Summary, error) {
	pr, err := p.Prepare(o)
	if err != nil {
		return experiment.Summary{}, err
	}
	return RunPrepared(ctx, pr, w)
}
