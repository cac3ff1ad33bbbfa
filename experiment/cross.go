package experiment

import (
	"context"
	"fmt"

	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/shaping"
)

// startCross starts c.Cross through l (nil, nil when c has no cross traffic). It runs from its
// own page-less server, so closing the page server's connections between loads leaves it alone.
func startCross(ctx context.Context, c Config, l shaping.Link) (*flows.Cross, error) {
	if c.Cross == "" {
		return nil, nil
	}
	spec, err := flows.ParseSpec(c.Cross)
	if err != nil {
		return nil, fmt.Errorf("cross traffic: %w", err)
	}
	cross, err := flows.StartCross(ctx, l, spec, c.Logger)
	if err != nil {
		return nil, fmt.Errorf("start cross traffic %s: %w", spec, err)
	}
	c.Logger.Info("cross traffic running", "flow", spec.String(), "link", l.Spec().Input)
	return cross, nil
}
