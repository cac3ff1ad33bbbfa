package studies

import (
	"math"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
)

// Cost model of a plan on one 2-core machine, fitted to smoke runs on the shared development
// machine (2026-12-01, other CPU-heavy work running): kakhki2017 smoke, 24 loads of ~0.3 s PLT
// (8 warm), took 58 s; carlucci2015 smoke, 12 loads of ~1.3 s (2 warm), 42 s. On an idle machine
// loads start ~1 s after the previous PLT ended, so the estimates are on the safe side.
const (
	// LoadOverhead is the harness time of one load beyond its PLT (browser context, connection
	// teardown, verification, record).
	LoadOverhead = 1800 * time.Millisecond
	// LinkOverhead is the time to bring up one link (namespace, TUN devices, emulator, server,
	// browser) and run its self-check (idle RTT probes and a rate probe per direction).
	LinkOverhead = 12 * time.Second
	// FlowOverhead is the set-up and teardown time of one bulk-flow run beyond its duration.
	FlowOverhead = 5 * time.Second
	// headerOverhead is the share of bytes added by TCP/IP or UDP/QUIC and TLS framing at MTU
	// 1500 (about 52-60 of 1500 bytes per packet, ~4 %).
	headerOverhead = 1.04
	// warmPriming is the harness time of a warm load's priming load beyond its PLT.
	warmPriming = 500 * time.Millisecond
	// h1Connections is Chromium's HTTP/1.1 connection limit per host (6, unchanged since 2014).
	h1Connections = 6
)

// EstimatePLT predicts a load's PLT for the cost model (not a result): the page's bytes (plus
// ~4 % framing) serialized at the link's down rate, the protocol's minimal round trips
// (experiment.MinRoundTrips, TLS 1.3 on TCP), one extra round trip per 6 objects for HTTP/1.1
// (six connections, one request each per round trip), and with loss p per direction the
// serialization stretched by 1 + 30 p (retransmissions and recovery stalls, a rough fit). An
// unshaped link (rate 0) counts round trips only. The estimate is capped at timeout.
func EstimatePLT(page pages.Spec, link shaping.Spec, arm experiment.Arm, timeout time.Duration) time.Duration {
	bytes := int64(float64(page.TotalBytes()) * headerOverhead)
	rounds := experiment.MinRoundTrips(arm, "1.3")
	if p, err := protocol.Lookup(arm.Protocol); err == nil && p.Version == protocol.HTTP1 {
		rounds += (page.Objects() - 1) / h1Connections
	}
	d := experiment.IdealPLT(bytes, int64(link.Down), link.RTT, rounds)
	d = time.Duration(float64(d) * (1 + 30*link.Loss))
	if timeout > 0 && d > timeout {
		return timeout
	}
	return d
}

// Estimate predicts the wall time of an experiment: per link LinkOverhead, per load its
// EstimatePLT plus LoadOverhead, and a warm load its priming load too. Specs that do not parse
// count as zero (they are refused before running anyway).
func Estimate(c experiment.Config) time.Duration {
	var total time.Duration
	links := make([]shaping.Spec, len(c.Links))
	for i, s := range c.Links {
		links[i], _ = shaping.ParseSpec(s)
		total += LinkOverhead
	}
	pgs := make([]pages.Spec, len(c.Pages))
	for i, s := range c.Pages {
		pgs[i], _ = pages.ParseSpec(s)
	}
	timeout := c.Timeout
	if timeout == 0 {
		timeout = experiment.DefaultTimeout
	}
	for _, j := range experiment.Schedule(c) {
		plt := EstimatePLT(pgs[j.Page], links[j.Link], j.Arm, timeout)
		total += plt + LoadOverhead
		if j.Arm.Mode == result.Warm {
			total += plt + warmPriming // the priming load
		}
	}
	return total
}

// Loads returns the number of page loads of the plan, warm-ups included.
func (p Plan) Loads() int {
	n := 0
	for _, part := range p.Parts {
		n += len(experiment.Schedule(part.Config))
	}
	return n
}

// FlowRuns returns the number of bulk-flow runs of the plan.
func (p Plan) FlowRuns() int {
	n := 0
	for _, f := range p.Flows {
		n += len(f.Mixes) * f.Runs
	}
	return n + p.CustomRuns
}

// Estimate predicts the plan's wall time on one 2-core machine: the page-load parts (Estimate)
// plus every flow run's duration and FlowOverhead, rounded up to the minute.
func (p Plan) Estimate() time.Duration {
	var d time.Duration
	for _, part := range p.Parts {
		d += Estimate(part.Config)
	}
	for _, f := range p.Flows {
		d += time.Duration(len(f.Mixes)*f.Runs) * (f.Duration + FlowOverhead)
		d += LinkOverhead
	}
	d += p.CustomEstimate
	return time.Duration(math.Ceil(d.Minutes())) * time.Minute
}
