package experiment

import (
	"context"

	"github.com/pltlab/pltlab/result"
)

// ResumeFrom is Schedule.Resume of c's schedule, returning c continued: its name and Done.
func ResumeFrom(c Config, recs []*result.Record) (Config, error) {
	return resumeFrom(c, Order(c), recs)
}

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
