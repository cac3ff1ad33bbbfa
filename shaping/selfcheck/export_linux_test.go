package selfcheck

import (
	"context"
	"time"
)

// probeRTT sends UDP echo probes from the namespace to the host: n probes, or (n == 0) until
// stop is closed, gap apart. Lost probes are left out of the result.
func (c *checker) probeRTT(ctx context.Context, n int, gap time.Duration, stop <-chan struct{}) ([]time.Duration, error) {
	t, err := c.probeRTTAt(ctx, c.l.HostAddr(), n, gap, stop)
	return rttsOf(t), err
}
