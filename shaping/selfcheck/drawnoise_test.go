package selfcheck

import (
	"testing"
	"time"
)

// TestDelayDrawNoise: the noise of the measured delay draws is the sum over intervals of the
// spread of the delays of the packets sent in each (the last tenth of an interval left out, where
// a delay fall's overtaking lands); a stream with one exact delay per interval has none, so the
// reordering line's bound is then exactly the draws' prediction and can still fail.
func TestDelayDrawNoise(t *testing.T) {
	t0 := time.Unix(0, 0)
	every, gap := 10*time.Millisecond, time.Millisecond
	mk := func(jitter func(i int) time.Duration) []arrival {
		var got []arrival
		for i := range 30 { // three intervals of ten packets
			sent := t0.Add(time.Duration(i) * gap)
			d := time.Duration(20+10*(i/10))*time.Millisecond + jitter(i)
			got = append(got, arrival{seq: i, sent: sent, recv: sent.Add(d)})
		}
		return got
	}
	if n := delayDrawNoise(mk(func(int) time.Duration { return 0 }), every); n != 0 {
		t.Errorf("exact draws: noise %v, want 0", n)
	}
	// 0.3 ms more on the third packet of each interval: 0.3 ms of spread per interval.
	late := func(i int) time.Duration {
		if i%10 == 2 {
			return 300 * time.Microsecond
		}
		return 0
	}
	if n := delayDrawNoise(mk(late), every); n != 900*time.Microsecond {
		t.Errorf("noisy draws: noise %v, want 900us", n)
	}
	// A late packet in an interval's last tenth (where overtaking lands) is not noise.
	last := func(i int) time.Duration {
		if i%10 == 9 {
			return 5 * time.Millisecond
		}
		return 0
	}
	if n := delayDrawNoise(mk(last), every); n != 0 {
		t.Errorf("overtaken tail: noise %v, want 0", n)
	}
	if n := delayDrawNoise(nil, every); n != 0 {
		t.Errorf("no arrivals: noise %v", n)
	}
}
