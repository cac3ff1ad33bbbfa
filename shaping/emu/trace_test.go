package emu

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestTraceFirstBrute compares Trace.first with a linear scan on random traces and times.
func TestTraceFirstBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(20)
		ms := make([]int64, n)
		v := int64(rng.IntN(3))
		for i := range ms {
			v += int64(rng.IntN(4))
			ms[i] = v
		}
		if ms[n-1] == 0 {
			ms[n-1] = 1
		}
		tr, err := NewTrace(ms)
		if err != nil {
			continue
		}
		for q := 0; q < 200; q++ {
			ns := rng.Int64N(int64(5 * tr.Period()))
			from := int64(0)
			want := int64(0)
			for tr.at(want) < ns {
				want++
			}
			if got := tr.first(ns, from); got != want {
				t.Fatalf("ms %v ns %v: first %d (at %v), want %d (at %v)", ms, time.Duration(ns), got, tr.at(got), want, tr.at(want))
			}
		}
	}
}
