package shaping

import (
	"testing"
	"time"
)

// TestReleaseLag checks the fast path's batching lag: 16 packet times at high rates, none
// below 960 Mbit/s (1500-byte packets), a fixed 50 us on an unlimited direction.
func TestReleaseLag(t *testing.T) {
	for _, c := range []struct {
		rate int64
		want time.Duration
	}{
		{1e9, 192 * time.Microsecond},
		{10e9, 19200 * time.Nanosecond},
		{960e6, 200 * time.Microsecond},
		{900e6, 0},
		{3e6, 0},
		{0, 50 * time.Microsecond},
	} {
		if got := releaseLag(c.rate, 1500); got != c.want {
			t.Errorf("releaseLag(%d, 1500) = %v, want %v", c.rate, got, c.want)
		}
	}
}
