package experiment

import (
	"context"

	"github.com/pltlab/pltlab/result"
)

// Run makes every load of c not in c.Done as RunSchedule does: RunSchedule of NewSchedule(c).
func Run(ctx context.Context, c Config, w *result.Writer) (Summary, error) {
	if err := c.withDefaults().Validate(); err != nil {
		return Summary{}, err
	}
	p, err := NewSchedule(c)
	if err != nil {
		return Summary{}, err
	}
	return RunSchedule(ctx, p, w)
}
