package experiment

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
)

// The cost model: the one estimate of wall time that `reproduce --list`, `run --dry-run`, the
// shard plan (PlanShards) and the cluster jobs' time limits all use. Its harness constants are
// fitted from records by FitCost; the values below are FitCost of the carlucci2015 quick run of
// 2026-12-01 (pltlab a9b0be5, 2 cores, Chromium 156, load average about 2; 165 loads whose PLTs
// sum to 201 s, 4 link bring-ups, 4 flow runs of 20 s; 6 min 18 s in all), the records kept in
// the repository as experiment/testdata/carlucci2015-quick.jsonl; TestCostFittedFromRecords
// re-derives them from that file. Each is a median over the records, so one stalled load does
// not move it.
const (
	// LoadOverhead is the harness time of one cold load beyond its PLT: a new BrowserContext and
	// tab, closing the server's connections, reading the timings and writing the record. Fit:
	// median of wall_ms - plt_ms over cold loads (0.22 s; mean 0.23 s).
	LoadOverhead = 220 * time.Millisecond
	// WarmPriming is a warm load's time beyond twice its PLT (the priming load and the measured
	// one) and one LoadOverhead: the priming load's own context, browser.WarmSettle and closing
	// its connections. Fit: median of wall_ms - 2 x plt_ms over warm loads (0.46 s) minus
	// LoadOverhead.
	WarmPriming = 240 * time.Millisecond
	// BrowserLaunchCost is the launch of one Chromium, made before the first load of each
	// (page, protocol) on every link a process brings up. Fit: median gap between the end of
	// the previous load and the start of a cold load that is the first of its (link, page,
	// protocol) on its link (0.4 s).
	BrowserLaunchCost = 400 * time.Millisecond
	// LinkCheckCost is a shaped link's bring-up with its self-check (namespaces, TUN devices,
	// emulator, server; idle RTT probes and a rate probe per direction, shaping.Check). Fit:
	// median gap between the last load of one link and the first load of the next, minus one
	// BrowserLaunchCost (5.7 s - 0.4 s).
	LinkCheckCost = 5300 * time.Millisecond
	// LinkUpCost is the bring-up of a link without a self-check (a "none" link, or the flows'
	// link). Fit: gap between the last load and the first flow run of the fixture, whose flow
	// link is brought up without a check (0.5 s).
	LinkUpCost = 500 * time.Millisecond
	// FlowOverhead is a bulk-flow run's set-up and teardown beyond its duration. Fit: median
	// spacing of consecutive flow runs minus their duration (22.0 s - 20 s).
	FlowOverhead = 2 * time.Second
	// StartCost is a process's start before its first link: Chromium search, page generation,
	// the output file. Fit: the measured total (6 min 18 s) minus the span of the records and
	// the first link's bring-up (0.6 s); rounded up to 1 s.
	StartCost = time.Second
	// headerOverhead is the share of bytes added by TCP/IP or UDP/QUIC and TLS framing at MTU
	// 1500 (about 52-60 of 1500 bytes per packet, ~4 %).
	headerOverhead = 1.04
	// h1Connections is Chromium's HTTP/1.1 connection limit per host (6, unchanged since 2014).
	h1Connections = 6
	// lossStretch is how much loss p stretches serialization (1 + lossStretch x p): the
	// retransmissions plus the recovery stalls, a rough fit to the fixture's lossy series.
	lossStretch = 30
)

// EstimatePLT predicts a load's PLT for the cost model (not a result): the page's bytes (plus
// ~4 % framing) serialized at the link's down rate, the protocol's minimal round trips
// (MinRoundTrips with TLS version tls), one extra round trip per 6 objects for HTTP/1.1 (six
// connections, one request each per round trip), and with loss p per direction the
// serialization and round trips stretched by 1 + 30 p. An unshaped link (rate 0) counts round
// trips only. The estimate is capped at timeout (when > 0). On the fixture's links (3 Mbit/s,
// 50 ms, 0-2 % loss, 30 x 10 KB) it predicts 1.00-1.12 s against measured medians of 1.04-1.43 s.
func EstimatePLT(page pages.Spec, link shaping.Spec, arm Arm, tls string, timeout time.Duration) time.Duration {
	bytes := int64(float64(page.TotalBytes()) * headerOverhead)
	rounds := MinRoundTrips(arm, tls)
	if p, err := protocol.Lookup(arm.Protocol); err == nil && p.Version == protocol.HTTP1 {
		rounds += (page.Objects() - 1) / h1Connections
	}
	d := IdealPLT(bytes, int64(link.Down), link.RTT, rounds)
	d = time.Duration(float64(d) * (1 + lossStretch*link.Loss))
	if timeout > 0 && d > timeout {
		return timeout
	}
	return d
}

// EstimateLoad is the cost model's time of one load, given its predicted PLT:
//
//	cold: plt + LoadOverhead      warm: 2 x plt + LoadOverhead + WarmPriming
func EstimateLoad(plt time.Duration, mode result.Mode) time.Duration {
	if mode == result.Warm {
		return 2*plt + LoadOverhead + WarmPriming
	}
	return plt + LoadOverhead
}

// EstimateFlows is the cost model's time of runs bulk-flow runs of duration each on one link:
// one link bring-up with its self-check (LinkCheckCost) and per run its duration plus
// FlowOverhead.
func EstimateFlows(runs int, duration time.Duration) time.Duration {
	if runs <= 0 {
		return 0
	}
	return LinkCheckCost + time.Duration(runs)*(duration+FlowOverhead)
}

// cost holds the parsed facts the cost model needs of an experiment.
type cost struct {
	c     Config
	pages []pages.Spec
	links []shaping.Spec
}

// newCost parses c's page and link specs for the cost model.
func newCost(c Config) (*cost, error) {
	m := &cost{c: c.withDefaults()}
	for _, s := range c.Pages {
		p, err := pages.ParseSpec(s)
		if err != nil {
			return nil, fmt.Errorf("bad page %q: %w", s, err)
		}
		m.pages = append(m.pages, p)
	}
	for _, s := range c.Links {
		l, err := shaping.ParseSpec(s)
		if err != nil {
			return nil, fmt.Errorf("bad link %q: %w", s, err)
		}
		m.links = append(m.links, l)
	}
	return m, nil
}

// load returns the estimated time of one load of page p over link l with arm a.
func (m *cost) load(p, l int, a Arm) time.Duration {
	return EstimateLoad(EstimatePLT(m.pages[p], m.links[l], a, m.c.TLS, m.c.Timeout), a.Mode)
}

// setup returns the estimated time to bring up link l in one process: LinkCheckCost when shaped
// (counted whether or not the check is skipped, so that the shard plan depends only on the
// configuration), LinkUpCost otherwise, and one BrowserLaunchCost per (page, protocol).
func (m *cost) setup(l int) time.Duration {
	d := LinkUpCost
	if m.links[l].Shaped() {
		d = LinkCheckCost
	}
	protos := map[string]bool{}
	for _, a := range m.c.Arms {
		protos[a.Protocol] = true
	}
	return d + time.Duration(len(m.pages)*len(protos))*BrowserLaunchCost
}

// Estimate returns the cost model's wall time of every load of c run in one process: per link
// its bring-up (LinkCheckTime or LinkUpCost, BrowserLaunchCost per page and protocol) and its
// warm-up and measured blocks (EstimateLoad of EstimatePLT), without StartCost: Plan.Total of
// NewPlan(c) without c's shard. It fails on a page or link spec that does not parse.
func Estimate(c Config) (time.Duration, error) {
	p, err := NewPlan(unsharded(c))
	if err != nil {
		return 0, err
	}
	return p.Total(), nil
}

// EstimateJobs returns the cost model's time of the loads of c with the given indexes into
// Schedule(c) (the loads a verdict still lacks, say), plus one bring-up per link they touch
// (Plan.Estimate). It fails on a spec that does not parse or an index outside the schedule.
func EstimateJobs(c Config, idx []int) (time.Duration, error) {
	p, err := NewPlan(unsharded(c))
	if err != nil {
		return 0, err
	}
	return p.Estimate(idx)
}

// Fit is what FitCost derives from records: the harness constants of the cost model, and the
// counts each is a median of.
type Fit struct {
	// LoadOverhead, WarmPriming, BrowserLaunch, LinkCheck and FlowOverhead are the fitted values
	// of the constants of the same names.
	LoadOverhead, WarmPriming, BrowserLaunch, LinkCheck, FlowOverhead time.Duration
	// Cold, Warm, Launches, Links and Flows count the samples of each median.
	Cold, Warm, Launches, Links, Flows int
	// PLT is the sum of the loads' PLTs; Span is from the first record's time to the end of
	// the last record (its time plus its wall time or flow duration).
	PLT, Span time.Duration
}

// FitCost fits the cost model's harness constants from the records of one unsharded run, in
// file order (see the constants for what each median is over). Loads that timed out are left
// out (their wall time is the deadline). It fails when the records hold no cold load.
func FitCost(recs []*result.Record) (Fit, error) {
	var f Fit
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	var cold, warm, launch, link, flow []time.Duration
	var prevEnd time.Time
	var first, last time.Time
	prevKind := result.Kind("")
	seen := map[string]bool{}
	var lastFlow time.Time
	var flowDur time.Duration
	for _, r := range recs {
		kind := r.Kind
		if kind == "" {
			kind = result.KindLoad
		}
		if first.IsZero() || r.Time.Before(first) {
			first = r.Time
		}
		switch kind {
		case result.KindLoad:
			plt, wall := ms(r.PLTMs), ms(r.WallMs)
			f.PLT += plt
			start := r.Time
			if r.Mode == result.Warm {
				start = r.Time.Add(-(wall - plt - LoadOverhead)) // the record's time is the measured load's
			}
			if !r.TimedOut && r.WallMs > 0 {
				if r.Mode == result.Warm {
					warm = append(warm, wall-2*plt)
				} else {
					cold = append(cold, wall-plt)
					key := r.Link.Spec + "\x00" + r.Page.Spec + "\x00" + r.Protocol
					gap := start.Sub(prevEnd)
					switch {
					case prevKind == result.KindLinkCheck && !prevEnd.IsZero():
						link = append(link, gap)
					case !seen[key] && !prevEnd.IsZero():
						launch = append(launch, gap)
					}
					seen[key] = true
				}
			}
			prevEnd = start.Add(wall)
			last = maxTime(last, prevEnd)
		case result.KindFlow:
			if r.Flow == nil {
				continue
			}
			if !lastFlow.IsZero() && r.Time.After(lastFlow) {
				flow = append(flow, r.Time.Sub(lastFlow)-flowDur)
			}
			lastFlow = r.Time
			flowDur = time.Duration(r.DurationS * float64(time.Second))
			last = maxTime(last, r.Time.Add(flowDur))
		case result.KindLinkCheck:
			seen = map[string]bool{}
		}
		if kind == result.KindLinkCheck || kind == result.KindLoad {
			prevKind = kind
		}
	}
	if len(cold) == 0 {
		return f, fmt.Errorf("no cold load with a wall time to fit the cost model from")
	}
	f.LoadOverhead, f.Cold = median(cold), len(cold)
	if len(warm) > 0 {
		f.WarmPriming, f.Warm = median(warm)-f.LoadOverhead, len(warm)
	}
	if len(launch) > 0 {
		f.BrowserLaunch, f.Launches = median(launch), len(launch)
	}
	if len(link) > 0 {
		f.LinkCheck, f.Links = median(link)-f.BrowserLaunch, len(link)
	}
	if len(flow) > 0 {
		f.FlowOverhead, f.Flows = median(flow), len(flow)
	}
	f.Span = last.Sub(first)
	return f, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// median returns the median of ds (the mean of the middle two for an even count).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return time.Duration(math.Round(float64(s[n/2-1]+s[n/2]) / 2))
}

// Shaped reports whether any link of c is shaped: such a link needs network namespaces and TUN
// devices, hence CAP_NET_ADMIN and CAP_SYS_ADMIN (root, or pltlab's rootless mode in user
// namespaces), where "none" needs no privilege. It fails on a link spec that does not parse.
func Shaped(c Config) (bool, error) {
	m, err := newCost(c)
	if err != nil {
		return false, err
	}
	for _, l := range m.links {
		if l.Shaped() {
			return true, nil
		}
	}
	return false, nil
}

// Took returns the wall time the records show: per shard (the records' Shard, "" for an
// unsharded run) from its first line's time to the end of its last line (a load's time plus its
// wall time, less the priming part of a warm load, whose time is the measured load's; a flow's
// time plus its duration), and of those the longest, which is the run's time when the shards ran
// at once. It does not see the process start before the first line (about StartCost). 0 when no
// line has a time.
func Took(recs []*result.Record) time.Duration {
	first, last := map[string]time.Time{}, map[string]time.Time{}
	for _, r := range recs {
		if r.Time.IsZero() {
			continue
		}
		end := recordEnd(r)
		if f, ok := first[r.Shard]; !ok || r.Time.Before(f) {
			first[r.Shard] = r.Time
		}
		last[r.Shard] = maxTime(last[r.Shard], end)
	}
	var d time.Duration
	for s, f := range first {
		d = max(d, last[s].Sub(f))
	}
	return d
}
