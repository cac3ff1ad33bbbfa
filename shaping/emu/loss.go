package emu

import (
	"fmt"
	"math/rand/v2"
)

// GilbertElliott is the two-state Markov loss model with netem's four parameters, as in
// `tc netem loss gemodel p r 1-h 1-k` (tc-netem(8); Linux net/sched/sch_netem.c, loss_gilb_ell):
// the chain is in state Good or Bad; in Good a packet is lost with probability K1 (= 1-k), in
// Bad with probability H1 (= 1-h). After each packet the chain moves from Good to Bad with
// probability P and from Bad to Good with probability R. All four are probabilities in [0, 1].
// The zero value is disabled (see Enabled).
type GilbertElliott struct {
	P, R, H1, K1 float64
}

// Enabled reports whether the model is configured (any parameter non-zero).
func (g GilbertElliott) Enabled() bool { return g.P != 0 || g.R != 0 || g.H1 != 0 || g.K1 != 0 }

// Simple returns the Gilbert model (no loss in Good, every packet lost in Bad) with stationary
// loss rate loss and mean loss-burst length burst packets: r = 1/burst (a Bad run lasts 1/r
// packets on average), p = loss*r/(1-loss) (the stationary probability of Bad is p/(p+r)).
// Errors when loss is not in [0, 1) or burst < 1 or the p needed exceeds 1.
func Simple(loss, burst float64) (GilbertElliott, error) {
	if !(loss >= 0 && loss < 1) || !(burst >= 1) {
		return GilbertElliott{}, fmt.Errorf("gilbert model needs 0 <= loss < 1 and burst >= 1, got loss %v, burst %v", loss, burst)
	}
	r := 1 / burst
	p := loss * r / (1 - loss)
	if p > 1 {
		return GilbertElliott{}, fmt.Errorf("mean loss %v%% with mean bursts of %v packets needs p = %.3g > 1: accepted loss <= burst/(burst+1)", loss*100, burst, p)
	}
	return GilbertElliott{P: p, R: r, H1: 1, K1: 0}, nil
}

// MeanLoss is the stationary loss rate of the model: (R*K1 + P*H1) / (P + R) (0 when P+R is 0
// and the chain never leaves Good: then K1).
func (g GilbertElliott) MeanLoss() float64 {
	if g.P+g.R == 0 {
		return g.K1
	}
	return (g.R*g.K1 + g.P*g.H1) / (g.P + g.R)
}

// geState is the Markov chain's state (false = Good, the initial state).
type geState struct{ bad bool }

// lose decides one packet, drawing like netem: first the transition for the next packet, then
// the loss in the state the packet met.
func (s *geState) lose(g *GilbertElliott, rng *rand.Rand) bool {
	if !s.bad {
		if rng.Float64() < g.P {
			s.bad = true
		}
		return rng.Float64() < g.K1
	}
	if rng.Float64() < g.R {
		s.bad = false
	}
	return rng.Float64() < g.H1
}
