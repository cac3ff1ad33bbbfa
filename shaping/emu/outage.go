package emu

import (
	"math/rand/v2"
	"time"
)

// Outage switches a link off and on. Periodic: up for On, then down for Off, repeating from
// time 0 (like the QUIC Interop Runner's `blackhole --on=5s --off=2s`). Random: up and down
// durations drawn from exponential distributions with means On and Off (like Mahimahi's
// mm-onoff), starting up, from a generator seeded with Seed (give both directions the same seed
// so that they go down together). The zero value never goes down.
type Outage struct {
	// On and Off are the up and down durations (means when Random).
	On, Off time.Duration
	// Random draws exponential durations instead of fixed ones.
	Random bool
	// Hold keeps packets during an outage: the server stops, arrivals queue (queue limits
	// apply) and are served when the link is up again. Otherwise (drop) every packet that
	// arrives during an outage is dropped on arrival; packets already queued are still served.
	Hold bool
	// Seed seeds the random durations.
	Seed int64
}

func (o Outage) enabled() bool { return o.Off > 0 }

// outageState answers "is the link down at t" for non-decreasing t.
type outageState struct {
	cfg    Outage
	rng    *rand.Rand
	isDown bool
	segEnd int64 // end of the current random segment
}

func newOutageState(o Outage) outageState {
	s := outageState{cfg: o}
	if o.Random && o.enabled() {
		s.rng = rand.New(rand.NewPCG(uint64(o.Seed), 0x6f6e6f6666))
		s.segEnd = s.exp(o.On)
	}
	return s
}

func (s *outageState) exp(mean time.Duration) int64 {
	return max(int64(s.rng.ExpFloat64()*float64(mean)), 1)
}

// down reports whether the link is down at t.
func (s *outageState) down(t int64) bool {
	if !s.cfg.enabled() {
		return false
	}
	if !s.cfg.Random {
		period := int64(s.cfg.On + s.cfg.Off)
		return t%period >= int64(s.cfg.On)
	}
	for t >= s.segEnd {
		s.isDown = !s.isDown
		if s.isDown {
			s.segEnd += s.exp(s.cfg.Off)
		} else {
			s.segEnd += s.exp(s.cfg.On)
		}
	}
	return s.isDown
}

// upAt returns the first time >= t at which the link is up.
func (s *outageState) upAt(t int64) int64 {
	for s.down(t) {
		if s.cfg.Random {
			t = s.segEnd
			continue
		}
		period := int64(s.cfg.On + s.cfg.Off)
		t = t - t%period + period
	}
	return t
}
