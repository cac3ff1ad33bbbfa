package emu

import (
	"testing"
	"time"
)

// TestStallsCounted: a caller that stops for 30 ms twice (fake clock) makes two stall events,
// each of the packets due while it was stopped; packets popped 1 ms late belong to none.
func TestStallsCounted(t *testing.T) {
	// 12 Mbit/s: a 1500-byte packet every 1 ms.
	p := NewPipe(Config{Rate: 12e6})
	for i := 0; i < 200; i++ {
		offer(p, 0, 1500)
	}
	stalled := func(due time.Duration) (time.Duration, bool) {
		switch {
		case due > 20*ms1 && due <= 50*ms1: // the caller stopped from 20 to 50 ms
			return 50 * ms1, true
		case due > 120*ms1 && due <= 160*ms1: // and from 120 to 160 ms
			return 160 * ms1, true
		}
		return due + ms1, false
	}
	for p.Len() > 0 {
		due, _ := p.Next()
		now, _ := stalled(due)
		b, _ := p.Pop(now)
		p.Recycle(b)
	}
	d := p.Take()
	if d.Stalls != 2 {
		t.Fatalf("stalls %d, want 2 (spans %+v)", d.Stalls, d.StallSpans)
	}
	// Packets due at 21..44 ms are later than 5 ms at 50 ms (24 of them); at 121..154 ms at
	// 160 ms (34).
	if d.StalledReleases != 24+34 || len(d.StallSpans) != 2 {
		t.Fatalf("stalled releases %d, spans %+v", d.StalledReleases, d.StallSpans)
	}
	first := d.StallSpans[0]
	if first.From != 21*ms1 || first.To != 50*ms1 || first.Late != 29*ms1 || first.Releases != 24 {
		t.Fatalf("first stall %+v", first)
	}
	if second := d.StallSpans[1]; second.From != 121*ms1 || second.To != 160*ms1 || second.Releases != 34 {
		t.Fatalf("second stall %+v", second)
	}
	if d2 := p.Take(); d2.Stalls != 0 || d2.StalledReleases != 0 || d2.StallSpans != nil {
		t.Fatalf("after Take: %+v", d2)
	}
}

// TestStallSpansCapped: stalls beyond MaxStallSpans are counted but not listed.
func TestStallSpansCapped(t *testing.T) {
	var c counters
	for i := range MaxStallSpans + 10 {
		c.recordLate(time.Duration(i)*time.Second, 6*ms1)
	}
	s := c.snapshot()
	if s.Stalls != MaxStallSpans+10 || len(s.StallSpans) != MaxStallSpans || s.StalledReleases != MaxStallSpans+10 {
		t.Fatalf("stalls %d, listed %d, releases %d", s.Stalls, len(s.StallSpans), s.StalledReleases)
	}
}
