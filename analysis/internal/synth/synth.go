// Package synth generates seeded synthetic result records for analysis tests and demos.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/pltlab/pltlab/result"
)

// Link is one synthetic link: rate in bit/s, RTT in ms and loss in [0, 1].
type Link struct {
	Spec    string
	RateBps int64
	RTTMs   float64
	Loss    float64
}

// Options describes the synthetic matrix.
type Options struct {
	Seed      uint64
	Pages     []string // page specs; each page is 300 KB
	Links     []Link
	Protocols []string
	Modes     []result.Mode
	Runs      int     // loads per (page, link, mode, protocol)
	Timeout   float64 // probability of a timed-out load
	Invalid   float64 // probability of an invalid load
	Warmups   int     // warm-up loads per (page, link, mode)
	// Speedup maps a protocol to its PLT factor (default h1 1.0, h2 0.85, h3 0.75).
	Speedup map[string]float64
}

// Default returns a small matrix: one page, two links, h1-h3, cold, 12 runs.
func Default() Options {
	return Options{
		Seed:      42,
		Pages:     []string{"10x30KB"},
		Links:     []Link{{"carlucci2015", 3_000_000, 50, 0}, {"rate=10mbit,rtt=20ms", 10_000_000, 20, 0}},
		Protocols: []string{"h1", "h2", "h3"},
		Modes:     []result.Mode{result.Cold},
		Runs:      12,
		Timeout:   0.05,
		Invalid:   0.05,
		Warmups:   1,
	}
}

// Grid returns a rates x RTTs matrix (for heatmaps).
func Grid() Options {
	o := Default()
	o.Links = nil
	for _, rate := range []int64{1_000_000, 5_000_000, 20_000_000} {
		for _, rtt := range []float64{10, 50, 100} {
			o.Links = append(o.Links, Link{fmt.Sprintf("rate=%dmbit,rtt=%gms", rate/1_000_000, rtt), rate, rtt, 0})
		}
	}
	o.Runs, o.Timeout, o.Invalid = 20, 0, 0
	return o
}

// Records generates the records: a link-check line per link, then the loads in a seeded
// shuffled order. Metric values are rounded to 0.1 ms.
func Records(o Options) []*result.Record {
	rng := rand.New(rand.NewPCG(o.Seed, 7))
	start := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	var recs []*result.Record
	for _, l := range o.Links {
		recs = append(recs, linkCheck(l, start))
	}
	var loads []*result.Record
	for _, page := range o.Pages {
		for _, l := range o.Links {
			for _, mode := range o.Modes {
				for range o.Warmups {
					r := load(rng, o, page, l, mode, o.Protocols[0])
					r.Warmup = true
					loads = append(loads, r)
				}
				for _, p := range o.Protocols {
					for range o.Runs {
						loads = append(loads, load(rng, o, page, l, mode, p))
					}
				}
			}
		}
	}
	rng.Shuffle(len(loads), func(i, j int) { loads[i], loads[j] = loads[j], loads[i] })
	for i, r := range loads {
		r.Run = i
		r.Time = start.Add(time.Duration(i) * 3 * time.Second)
	}
	return append(recs, loads...)
}

func factor(o Options, p string) float64 {
	if f, ok := o.Speedup[p]; ok {
		return f
	}
	switch p {
	case "h2":
		return 0.85
	case "h3":
		return 0.75
	}
	return 1
}

func load(rng *rand.Rand, o Options, page string, l Link, mode result.Mode, proto string) *result.Record {
	const bytes = 300_000
	base := float64(bytes*8)/float64(l.RateBps)*1000 + 4*l.RTTMs
	plt := round(base * factor(o, proto) * math.Exp(rng.NormFloat64()*0.08))
	r := &result.Record{
		V: result.Version, Kind: result.KindLoad, Experiment: "synthetic", Mode: mode, Protocol: proto,
		ObservedProtocol: proto, Page: result.Page{Spec: page, TotalBytes: bytes, Objects: 10},
		Link: result.Link{Spec: l.Spec, DownBps: l.RateBps, UpBps: l.RateBps, RTTMs: l.RTTMs, Loss: l.Loss,
			QueueBytes: l.RateBps / 8 * int64(l.RTTMs) / 1000, Shaper: "emu"},
		PLTMs: plt, TTFBMs: round(2 * l.RTTMs * (1 + 0.1*rng.Float64())), DCLMs: round(plt * 0.6),
		FCPMs: round(plt * 0.5), Valid: true, DeadlineMs: 60000, Browser: "Chromium/156.0.0.0",
		TCPCC: "cubic", TLSVersion: "1.3",
		Env: &result.Env{Pltlab: "test", Kernel: "6.1.0-synthetic", Host: "synth", CPUs: 2, QUIC: "quic-go v0.65.0"},
	}
	switch u := rng.Float64(); {
	case u < o.Timeout:
		r.TimedOut, r.Valid, r.InvalidReason, r.PLTMs = true, false, "timeout", r.DeadlineMs
	case u < o.Timeout+o.Invalid:
		r.Valid, r.InvalidReason = false, "protocol mismatch: resource over h2"
	}
	return r
}

func linkCheck(l Link, t time.Time) *result.Record {
	return &result.Record{V: result.Version, Kind: result.KindLinkCheck, Experiment: "synthetic", Time: t,
		Link: result.Link{Spec: l.Spec, DownBps: l.RateBps, UpBps: l.RateBps, RTTMs: l.RTTMs, Shaper: "emu"},
		Check: &result.LinkCheck{Pass: true, RTTMinMs: l.RTTMs, RTTMedianMs: l.RTTMs + 0.4, RTTMaxMs: l.RTTMs + 1,
			DownBps: float64(l.RateBps) * 0.97, UpBps: float64(l.RateBps) * 0.97}}
}

func round(v float64) float64 { return math.Round(v*10) / 10 }
