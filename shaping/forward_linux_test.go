package shaping

import (
	"testing"
	"time"
)

// TestReleaseLag checks the fast path's batching lag: one 64 KiB GRO group's link time, at most
// 200 us, at high rates; none below 960 Mbit/s (1500-byte packets); a fixed 50 us on an
// unlimited direction.
func TestReleaseLag(t *testing.T) {
	for _, c := range []struct {
		rate int64
		want time.Duration
	}{
		{1e9, 200 * time.Microsecond},
		{10e9, 52428 * time.Nanosecond},
		{5e9, 104856 * time.Nanosecond},
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
