package plan

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/pltlab/pltlab/device"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// The cost model: the one estimate of wall time that `reproduce --list`, `run --dry-run`, the
// shard cut (experiment.Schedule.Shards, studies) and the cluster jobs' time limits all use. Its
// harness constants are fitted from records by FitCost, pooled over the validation runs of 2026-12-01 (every page-load
// study's smoke and quick scale on the 2-core development machine, pltlab 8ce0c5c, Chromium 156,
// load average 0.3-16 from other work; the records, trimmed to what the fit reads, are kept in
// testdata/costfit with their wall times in walls.tsv). TestCostFittedFromRecords re-derives the
// constants from those files, and studies' TestEstimateMatchesMeasured checks every run's
// estimate against its wall time (in-sample: the same runs). Each is a median over the records,
// so one stalled load does not move it; the values are rounded.
const (
	// LoadOverhead is the harness time of one cold load beyond its PLT: a new BrowserContext and
	// tab, closing the server's connections, reading the timings and writing the record (it also
	// ends a warm line's span in LineEnd). Fit: median of wall_ms - plt_ms over cold loads.
	LoadOverhead = 300 * time.Millisecond
	// WarmPriming is a warm load's time beyond twice its PLT (the priming load and the measured
	// one) and one LoadOverhead: the priming load's own context, browser.WarmSettle and closing
	// its connections. Fit: median of wall_ms - 2 x plt_ms over warm loads, minus LoadOverhead.
	WarmPriming = 320 * time.Millisecond
	// BrowserLaunchCost is the launch of one Chromium, made before the first load of each
	// protocol on every link a process brings up. Fit: median gap between the end of the
	// previous load and the start of a cold load that is the first of its (link, protocol).
	BrowserLaunchCost = 580 * time.Millisecond
	// BrowserCloseCost is the closing of one Chromium when its link is torn down (the browsers
	// close one after another). Fit: with LinkCheckBase, the Theil-Sen line of the link-change
	// samples (see LinkCheckBase) against the number of browsers the link before them closed.
	BrowserCloseCost = 150 * time.Millisecond
	// LinkCheckBase is a shaped link's bring-up beyond its self-check's probes (CheckProbeTime)
	// and the browsers' closes: the previous link's teardown (namespaces, TUN devices,
	// emulator, servers), the new one's set-up and the check's own set-up between its probes;
	// LinkCheckTime adds the probes. Fit: the intercept of the Theil-Sen line (theilSen) of the
	// link changes' samples, each the gap between the last load of one link and the first load
	// of the next less one BrowserLaunchCost and the next link's CheckProbeTime, against the
	// number of browsers the link before closed (BrowserCloseCost is its slope); the samples lie
	// within about 0.5 s of the line.
	LinkCheckBase = 1200 * time.Millisecond
	// LinkUpCost is the bring-up of a link without a self-check (a "none" link, or any link with
	// --no-link-check: the sharding counts LinkCheckTime for shaped ones all the same). Fit:
	// gap between the last load and the first flow run of a carlucci2015 quick run whose flow
	// link was brought up without a check (pltlab a9b0be5, 0.5 s).
	LinkUpCost = 500 * time.Millisecond
	// FlowOverhead is a bulk-flow run's set-up and teardown beyond its duration (with
	// flows.DefaultPause, 1 s, between runs). Fit: median spacing of consecutive flow runs minus
	// their duration (carlucci2015 quick: 21.0 s apart for 20 s runs).
	FlowOverhead = time.Second
	// StartCost is what a process's start (Chromium search, page generation, the output file)
	// and end (the last link's teardown, the report) add beyond its links: little, since the
	// first link's bring-up, which LinkCheckBase counts like the others', has no link to tear
	// down before it. Fit: the median over the validation runs of the wall time less the
	// records' span (Took) and the first link's LinkCheckTime (-0.35..1.55 s; studies'
	// TestEstimateMatchesMeasured re-derives it from testdata/costfit).
	StartCost = 250 * time.Millisecond
	// headerOverhead is the share of bytes added by TCP/IP or UDP/QUIC and TLS framing at MTU
	// 1500 (about 52-60 of 1500 bytes per packet, ~4 %).
	headerOverhead = 1.04
	// h1Connections is Chromium's HTTP/1.1 connection limit per host (6, unchanged since 2014).
	h1Connections = 6
	// tcpInitialWindow is TCP's initial congestion window: 10 segments (RFC 6928, Linux's
	// default) of 1448 bytes (MSS 1460 less the timestamp option) at MTU 1500.
	tcpInitialWindow = 10 * tcpMSS
	// tcpMSS is the TCP payload of a full segment at MTU 1500 with timestamps (1500 - 52).
	tcpMSS = 1448
	// quicInitialWindow is quic-go's initial congestion window: 32 packets of 1280 bytes (its
	// initialCongestionWindowPackets, above RFC 9002's recommended 10).
	quicInitialWindow = 32 * 1280
	// PLTFloor is the browser's own share of a PLT beyond the network (HTML parsing, layout,
	// image decoding, the load event): fitted as the median of the measured PLT less the rest
	// of EstimatePLT over the validation runs' loads (FitCost).
	PLTFloor = 70 * time.Millisecond
)

// EstimatePLT predicts a load's PLT for the cost model (not a result) of page over link with
// protocol proto (a protocol.Table name) in mode: the protocol's minimal round trips
// (MinRoundTrips with TLS version tls; one extra round trip per 6 objects for
// HTTP/1.1: six connections, one request each per round trip), the delivery of the page's bytes
// (plus ~4 % framing) from the initial congestion window (slowStart) at the link's down rate or,
// with loss on the down direction, at most the loss-limited rate of each connection
// (LossLimitedRate of the loss-event rate: the loss rate, over the mean burst length for the
// Gilbert model), and PLTFloor, the browser's own time (parsing, layout, the load event). An
// unshaped link (rate 0) counts round trips and the floor only. The estimate is capped at
// timeout (when > 0).
func EstimatePLT(page pages.Spec, link linkspec.Spec, proto string, mode result.Mode, tls string, timeout time.Duration) time.Duration {
	bytes := int64(float64(page.TotalBytes()) * headerOverhead)
	rounds := MinRoundTrips(proto, mode, tls)
	iw, conns := int64(tcpInitialWindow), int64(1)
	if p, err := protocol.Lookup(proto); err == nil {
		switch {
		case p.Transport == protocol.QUIC:
			iw = quicInitialWindow
		case p.Version == protocol.HTTP1:
			rounds += (page.Objects() - 1) / h1Connections
			conns = int64(min(page.Objects(), h1Connections)) // a window and a loss process each
		}
	}
	rate, events := int64(link.Down), link.DownImp.Loss
	if b := link.DownImp.Burst; b > 1 {
		events /= b // the Gilbert model's bursts: one window reduction each
	}
	if lim := LossLimitedRate(events, link.RTT) * float64(conns); rate > 0 && lim > 0 && lim < float64(rate) {
		rate = int64(lim)
	}
	d := time.Duration(rounds)*link.RTT + slowStart(bytes, rate, link.RTT, iw*conns) + PLTFloor
	if timeout > 0 && d > timeout {
		return timeout
	}
	return d
}

// LossLimitedRate is the steady-state rate in bit/s of one loss-based congestion controller
// under random loss p at round-trip time rtt: MSS/RTT x sqrt(3/(2p)) (M. Mathis, J. Semke,
// J. Mahdavi, T. Ott, "The Macroscopic Behavior of the TCP Congestion Avoidance Algorithm",
// ACM CCR 27(3), 1997, eq. 3, with MSS 1448 B). 0 (no limit) without loss or RTT. On the
// validation runs it predicts 10 MB over 10 Mbit/s at 36 ms and 0.5 % loss in 15 s against 16 s
// measured (h3), and overestimates 1 MB transfers, which end before the steady state.
func LossLimitedRate(p float64, rtt time.Duration) float64 {
	if p <= 0 || rtt <= 0 {
		return 0
	}
	return tcpMSS * 8 / rtt.Seconds() * math.Sqrt(3/(2*p))
}

// slowStart is the time to deliver bytes over a path of rateBps (bit/s) and rtt beyond the
// request's round trip, from an initial window of iw bytes that doubles every round trip (slow
// start, RFC 5681 section 3.1) until it covers the bandwidth-delay product, then at the rate:
// one more RTT per window sent before that, and the rest serialized (the slow-start phase of
// N. Cardwell, S. Savage, T. Anderson, "Modeling TCP Latency", IEEE INFOCOM 2000). A page that
// fits the first window, or a link whose BDP it covers, costs its serialization alone.
func slowStart(bytes, rateBps int64, rtt time.Duration, iw int64) time.Duration {
	if rateBps <= 0 {
		return 0
	}
	bdp := int64(float64(rateBps) / 8 * rtt.Seconds())
	var windows int64
	for w := iw; bytes > w && w < bdp; w *= 2 {
		bytes -= w
		windows++
	}
	return time.Duration(windows)*rtt + time.Duration(float64(bytes*8)/float64(rateBps)*float64(time.Second))
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

// EstimateFlows is the cost model's time of runs bulk-flow runs of duration each on the link
// spec link: one bring-up with its self-check (LinkCheckTime; LinkUpCost for an unshaped link)
// and per run its duration plus FlowOverhead. It fails on a link spec that does not parse.
func EstimateFlows(runs int, duration time.Duration, link string) (time.Duration, error) {
	if runs <= 0 {
		return 0, nil
	}
	l, err := linkspec.Parse(link)
	if err != nil {
		return 0, fmt.Errorf("bad link %q: %w", link, err)
	}
	up := LinkUpCost
	if l.Shaped() {
		up = LinkCheckTime(l)
	}
	return up + time.Duration(runs)*(duration+FlowOverhead), nil
}

// Durations of selfcheck.Run's quick probes, from its documentation (selfcheck.Options,
// selfcheck.Run): what CheckProbeTime sums.
const (
	// checkIdleProbes is the number of idle RTT probes, sent one after another below
	// checkSerialRTT (all at once above it).
	checkIdleProbes = 10
	checkSerialRTT  = 500 * time.Millisecond
	// checkTCIdleRTTs are a tc-shaped link's idle RTTs instead: 20 plain reference probes, a
	// warm-up pair and 40 probe pairs (selfcheck's paired idle rule).
	checkTCIdleRTTs = 61
	// checkBulkMin and checkBulkMax bound a bulk transfer (25 RTTs); checkBulkBigBDP is its
	// least length when the BDP exceeds checkBigBDP.
	checkBulkMin, checkBulkMax, checkBulkBigBDP = time.Second, 10 * time.Second, 3 * time.Second
	checkBigBDP                                 = 1 << 20
	// checkStreamMin is a sequenced stream's least length (300 packets within 0.6 s),
	// checkStreamMax its cap; checkLossEvents the loss events it must expect, checkDelayDraws
	// the delay-variation draws it must see; checkStreamGap the least packet spacing.
	checkStreamMin, checkStreamMax   = 600 * time.Millisecond, 10 * time.Second
	checkLossEvents, checkDelayDraws = 20, 40
	checkStreamGap                   = time.Millisecond
	// checkDrain is a stream's wait for its last packets beyond the one-way delay.
	checkDrain = 300 * time.Millisecond
	// checkTraceWindow is a trace direction's rate window; checkOutageMax caps the outage stream.
	checkTraceWindow, checkOutageMax = time.Second, 30 * time.Second
)

// CheckProbeTime is the time the probes of a quick self-check of link l take by selfcheck.Run's
// own rules: the idle RTT probes (10 RTTs; 61 on a shaper=netem link), a bulk TCP transfer per direction of 25 RTTs within
// 1..10 s (3 s at least when the BDP exceeds 1 MiB), per direction with random loss, delay
// variation or reordering a sequenced stream (long enough for 20 loss events (bursts for the
// Gilbert model) at 1 ms spacing, or 40 delay draws, within 0.6..10 s) and its drain, a trace
// direction's 1 s window, and an outage stream (two cycles and an outage, ten cycles when
// random, at most 30 s). An unshaped link has no check (0).
func CheckProbeTime(l linkspec.Spec) time.Duration {
	if !l.Shaped() {
		return 0
	}
	d := l.RTT
	if l.RTT < checkSerialRTT {
		d = checkIdleProbes * l.RTT
	}
	if l.Shaper == linkspec.ShaperNetem {
		d = checkTCIdleRTTs * l.RTT
	}
	bulk := min(max(checkBulkMin, 25*l.RTT), checkBulkMax)
	if linkspec.BDP(max(l.Down, l.Up), l.RTT) > checkBigBDP {
		bulk = max(bulk, checkBulkBigBDP)
	}
	d += 2 * bulk
	for _, im := range []linkspec.Impair{l.DownImp, l.UpImp} {
		if im.Trace != "" {
			d += checkTraceWindow
		}
		if im.Loss == 0 && im.DelayVar == 0 && im.ReorderProb == 0 && !(l.Jitter > 0 && l.Reorder) {
			continue
		}
		stream := checkStreamMin
		if ev := im.Loss; ev > 0 {
			if im.Burst > 1 {
				ev /= im.Burst // the Gilbert model: the bursts are the events
			}
			stream = max(stream, time.Duration(math.Ceil(checkLossEvents/ev))*checkStreamGap)
		}
		if im.DelayVar > 0 {
			every := im.DelayVarEvery
			every = cmp.Or(every, 100*time.Millisecond)
			stream = max(stream, checkDelayDraws*every+time.Second)
		}
		d += min(stream, checkStreamMax) + l.RTT/2 + checkDrain
	}
	if o := l.Outage; o.Off > 0 {
		cycle := o.On + o.Off
		if o.Random {
			d += min(10*cycle, checkOutageMax)
		} else {
			d += min(2*cycle+o.Off, checkOutageMax)
		}
	}
	return d
}

// LinkCheckTime is the cost model's time of bringing up shaped link l with its quick
// self-check: LinkCheckBase plus CheckProbeTime(l).
func LinkCheckTime(l linkspec.Spec) time.Duration { return LinkCheckBase + CheckProbeTime(l) }

// Ngtcp2Wait is what an h3 load served by the ngtcp2 stack adds to its wall time: the wait for
// the page's connection to idle out (idle, the server's idle timeout: server.Ngtcp2IdleTimeout,
// plus the poll and the qlog read, about 0.1 s), once for a cold load and twice for a warm one
// (the priming load's connection too). The PLT is not affected: the waits are outside the
// measured navigation.
func Ngtcp2Wait(mode result.Mode, idle time.Duration) time.Duration {
	once := idle + 100*time.Millisecond
	if mode == result.Warm {
		return 2 * once
	}
	return once
}

// Device costs (fit to a 10x50KB page over rate=10mbit,rtt=40ms on motog2013, slowdown 10, a
// 0.1-core budget: PLT 1.9-3.3 s against about 0.1 s on the desktop, wall_ms - plt_ms 3.9-5.5 s,
// each launch's calibration about 8 s).
const (
	// DeviceCPUBase and DeviceCPUPerObject are the browser tree's CPU time of one load on the
	// desktop: about 150 ms plus 15 ms per object (230-300 ms measured for 6-10 objects).
	DeviceCPUBase      = 150 * time.Millisecond
	DeviceCPUPerObject = 15 * time.Millisecond
)

// EstimateDeviceLoad is EstimateLoad on device d with slowdown s: the load takes the longer of
// its network PLT and its CPU time slowed s times, and the harness's work in the browser (tab
// set-up and teardown) is slowed s times under a budget, (1+s)/2 times with CDP throttling alone
// (which slows the renderer only):
//
//	plt' = max(plt, s x (DeviceCPUBase + objects x DeviceCPUPerObject))
//	cold: plt' + f x LoadOverhead      warm: 2 x plt' + f x (LoadOverhead + WarmPriming)
func EstimateDeviceLoad(plt time.Duration, objects int, mode result.Mode, d device.Device) time.Duration {
	s := d.ExpectedSlowdown()
	f := s
	if !d.Budgeted() {
		f = (1 + s) / 2
	}
	cpu := time.Duration(s * float64(DeviceCPUBase+time.Duration(objects)*DeviceCPUPerObject))
	plt = max(plt, cpu)
	if mode == result.Warm {
		return 2*plt + time.Duration(f*float64(LoadOverhead+WarmPriming))
	}
	return plt + time.Duration(f*float64(LoadOverhead))
}

// DeviceCalibrationCost is the launch-time check of device d (browser.WithDevice): the wait
// for an idle browser and six timings of a 110 ms script at desktop speed and six at the
// device's: 1 s + 0.66 s x (1 + slowdown).
func DeviceCalibrationCost(d device.Device) time.Duration {
	if d.IsDesktop() {
		return 0
	}
	return time.Second + time.Duration(0.66*(1+d.ExpectedSlowdown())*float64(time.Second))
}

// BrowserPerProtocol is the records' env.browser_per when one browser per protocol serves every
// page of a link (experiment's runner); FitCost counts browser launches by it.
const BrowserPerProtocol = "protocol"

// Model is the cost model of one configuration's loads: the parsed pages and links of an
// experiment, indexed as its schedule indexes them (plan.Job's Page and Link), and the settings
// that change a load's time.
type Model struct {
	// Pages and Links are the experiment's pages and links, in their schedule's order.
	Pages []pages.Spec
	Links []linkspec.Spec
	// Protocols is the number of distinct protocols the experiment loads with: one browser each
	// per link.
	Protocols int
	// TLS is the TLS version ("1.2", "1.3"); Timeout caps a load's PLT (0: no cap).
	TLS     string
	Timeout time.Duration
	// Device is the emulated client device (the zero Device, or a desktop one, costs nothing).
	Device device.Device
	// Ngtcp2Idle is the ngtcp2 server's idle timeout when h3 is served by the ngtcp2 stack
	// (Ngtcp2Wait per QUIC load); 0 for quic-go.
	Ngtcp2Idle time.Duration
}

// Load returns the estimated wall time of one load of page p over link l (indexes into Pages
// and Links) with protocol proto in mode: EstimateLoad of EstimatePLT on the desktop,
// EstimateDeviceLoad on a slow device, plus Ngtcp2Wait for a QUIC load of the ngtcp2 stack.
func (m *Model) Load(p, l int, proto string, mode result.Mode) time.Duration {
	plt := EstimatePLT(m.Pages[p], m.Links[l], proto, mode, m.TLS, m.Timeout)
	wait := time.Duration(0)
	if pr, err := protocol.Lookup(proto); err == nil && pr.Transport == protocol.QUIC && m.Ngtcp2Idle > 0 {
		wait = Ngtcp2Wait(mode, m.Ngtcp2Idle)
	}
	if m.Device.IsDesktop() {
		return EstimateLoad(plt, mode) + wait
	}
	return EstimateDeviceLoad(plt, m.Pages[p].Objects(), mode, m.Device) + wait
}

// Setup returns the estimated time to bring up link l in one process and tear it down:
// LinkCheckTime when shaped (counted whether or not the check is skipped, so that the shard cut
// depends only on the configuration), LinkUpCost otherwise, and per protocol one
// BrowserLaunchCost, one BrowserCloseCost and the device's DeviceCalibrationCost (one browser
// per protocol serves every page).
func (m *Model) Setup(l int) time.Duration {
	d := LinkUpCost
	if m.Links[l].Shaped() {
		d = LinkCheckTime(m.Links[l])
	}
	return d + time.Duration(m.Protocols)*(BrowserLaunchCost+BrowserCloseCost+DeviceCalibrationCost(m.Device))
}

// Fit is what FitCost derives from records: the harness constants of the cost model, and the
// counts each is a median of.
type Fit struct {
	// LoadOverhead, WarmPriming, BrowserLaunch, BrowserClose, LinkCheckBase, FlowOverhead and
	// PLTFloor are the fitted values of the constants of the same names (BrowserLaunchCost and
	// BrowserCloseCost for BrowserLaunch and BrowserClose).
	LoadOverhead, WarmPriming, BrowserLaunch, BrowserClose, LinkCheckBase, FlowOverhead, PLTFloor time.Duration
	// Cold, Warm, Launches, Links, Flows and PLTs count the samples of each median.
	Cold, Warm, Launches, Links, Flows, PLTs int
	// PLT is the sum of the loads' PLTs; Span is, summed over the runs, from a run's first
	// record's time to the end of its last record (its time plus its wall time or flow
	// duration).
	PLT, Span time.Duration
}

// FitCost fits the cost model's harness constants from the records of one or more unsharded
// runs, each in file order, pooling the samples of every run (see the constants for what each
// median is over; a link change's sample is its gap less the next link's CheckProbeTime).
// Loads that timed out are left out (their wall time is the deadline). It fails when the
// records hold neither a cold load nor two flow runs.
func FitCost(runs ...[]*result.Record) (Fit, error) {
	var f Fit
	var s fitSamples
	for _, recs := range runs {
		f.PLT += s.add(recs)
	}
	cold, warm, launch, link, flow := s.cold, s.warm, s.launch, s.link, s.flow
	f.Span = s.span
	if len(s.plt) > 0 {
		f.PLTFloor, f.PLTs = median(s.plt), len(s.plt)
	}
	if len(cold) == 0 && len(flow) == 0 {
		return f, fmt.Errorf("no cold load with a wall time and no two flow runs to fit the cost model from")
	}
	if len(cold) > 0 {
		f.LoadOverhead, f.Cold = median(cold), len(cold)
	}
	if len(warm) > 0 {
		f.WarmPriming, f.Warm = median(warm)-f.LoadOverhead, len(warm)
	}
	if len(launch) > 0 {
		f.BrowserLaunch, f.Launches = median(launch), len(launch)
	}
	if len(link) > 0 {
		// y = LinkCheckBase + BrowserCloseCost x (browsers of the link torn down), by Theil-Sen.
		ys := make([]time.Duration, len(link))
		for i := range link {
			ys[i] = link[i] - f.BrowserLaunch
		}
		f.LinkCheckBase, f.BrowserClose = theilSen(s.closed, ys)
		f.Links = len(link)
	}
	if len(flow) > 0 {
		f.FlowOverhead, f.Flows = median(flow), len(flow)
	}
	return f, nil
}

// fitSamples collects FitCost's samples over runs.
type fitSamples struct {
	cold, warm, launch, link, flow []time.Duration
	// closed is, per link sample, the browsers the link before it closed.
	closed []int
	// plt holds each load's PLT less EstimatePLT's network part (its PLTFloor taken out).
	plt  []time.Duration
	span time.Duration
}

// add adds the samples of one run's records and returns the sum of their PLTs.
func (s *fitSamples) add(recs []*result.Record) time.Duration {
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	var plts time.Duration
	var prevEnd time.Time
	var first, last time.Time
	prevKind := result.Kind("")
	seen := map[string]bool{}
	prevBrowsers := 0
	var lastFlow time.Time
	var flowDur time.Duration
	for _, r := range recs {
		kind := r.Kind
		kind = cmp.Or(kind, result.KindLoad)
		if first.IsZero() || r.Time.Before(first) {
			first = r.Time
		}
		switch kind {
		case result.KindLoad:
			plt, wall := ms(r.PLTMs), ms(r.WallMs)
			plts += plt
			start := r.Time
			if r.Mode == result.Warm {
				start = r.Time.Add(-(wall - plt - LoadOverhead)) // the record's time is the measured load's
			}
			if !r.TimedOut && r.Valid {
				page, perr := pages.ParseSpec(r.Page.Spec)
				link, lerr := linkspec.Parse(r.Link.Spec)
				if perr == nil && lerr == nil {
					net := EstimatePLT(page, link, r.Protocol, r.Mode, "", 0) - PLTFloor
					s.plt = append(s.plt, plt-net)
				}
			}
			if !r.TimedOut && r.WallMs > 0 {
				if r.Mode == result.Warm {
					s.warm = append(s.warm, wall-2*plt)
				} else {
					s.cold = append(s.cold, wall-plt)
					key := r.Link.Spec + "\x00" + r.Protocol // one browser per protocol on a link
					if r.Env == nil || r.Env.BrowserPer != BrowserPerProtocol {
						key += "\x00" + r.Page.Spec // older records: one browser per page and protocol
					}
					gap := start.Sub(prevEnd)
					switch {
					case prevKind == result.KindLinkCheck && !prevEnd.IsZero():
						probes := time.Duration(0)
						if l, err := linkspec.Parse(r.Link.Spec); err == nil {
							probes = CheckProbeTime(l)
						}
						s.link = append(s.link, gap-probes)
						s.closed = append(s.closed, prevBrowsers)
					case !seen[key] && !prevEnd.IsZero():
						s.launch = append(s.launch, gap)
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
				s.flow = append(s.flow, r.Time.Sub(lastFlow)-flowDur)
			}
			lastFlow = r.Time
			flowDur = time.Duration(r.DurationS * float64(time.Second))
			last = maxTime(last, r.Time.Add(flowDur))
		case result.KindLinkCheck:
			if len(seen) > 0 {
				prevBrowsers = len(seen) // one browser per protocol of the link torn down
			}
			seen = map[string]bool{}
		case result.KindHarnessError:
			prevEnd = time.Time{} // a load not made (a refused link, say): the next gap is no sample
		}
		if kind == result.KindLinkCheck || kind == result.KindLoad {
			prevKind = kind
		}
	}
	s.span += last.Sub(first)
	return plts
}

// theilSen fits y = a + b x robustly: b is the median of the slopes between every two samples
// with different x, a the median of y - b x (P. K. Sen, "Estimates of the Regression
// Coefficient Based on Kendall's Tau", JASA 63, 1968). Without two different x, b is 0 and a
// the median of y.
func theilSen(x []int, y []time.Duration) (a, b time.Duration) {
	var slopes []time.Duration
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			if x[i] != x[j] {
				slopes = append(slopes, (y[j]-y[i])/time.Duration(x[j]-x[i]))
			}
		}
	}
	if len(slopes) > 0 {
		b = median(slopes)
	}
	rest := make([]time.Duration, len(y))
	for i := range y {
		rest[i] = y[i] - b*time.Duration(x[i])
	}
	return median(rest), b
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

// Took returns the wall time the records show: per shard (the records' Shard, "" for an
// unsharded run) from its first line's start (a line's time; for a link_check line, which is
// written when its check ends, its time less the check's DurationMs) to the end of its last
// line (a load's time plus its wall time, less the priming part of a warm load, whose time is
// the measured load's; a flow's time plus its duration), and of those the longest, which is the
// run's time when the shards ran at once. It does not see the process start before the first
// link's check (about StartCost), nor, in records written before DurationMs was, the first
// check itself. 0 when no line has a time.
func Took(recs []*result.Record) time.Duration {
	first, last := map[string]time.Time{}, map[string]time.Time{}
	for _, r := range recs {
		if r.Time.IsZero() {
			continue
		}
		end, start := LineEnd(r), recordStart(r)
		if f, ok := first[r.Shard]; !ok || start.Before(f) {
			first[r.Shard] = start
		}
		last[r.Shard] = maxTime(last[r.Shard], end)
	}
	var d time.Duration
	for s, f := range first {
		d = max(d, last[s].Sub(f))
	}
	return d
}

// recordStart is when the line's work started (see Took): a link_check line's time less its
// check's duration, any other line's time.
func recordStart(r *result.Record) time.Time {
	if r.Kind == result.KindLinkCheck && r.Check != nil && r.Check.DurationMs > 0 {
		return r.Time.Add(-time.Duration(r.Check.DurationMs * float64(time.Millisecond)))
	}
	return r.Time
}

// MinRoundTrips is the least number of round trips a cold or warm (mode) load of an HTML page and
// its images needs over protocol proto (a protocol.Table name) before the last byte can arrive, ignoring serialization:
//   - TCP (h1, h2): 1 (TCP handshake) + 1 (TLS) + 1 (HTML request) + 1 (image requests, sent
//     once the HTML arrives) = 4, whatever the TLS version and mode. TLS 1.3 (RFC 8446 section 2)
//     needs one round trip before the client sends its request with its Finished. A full TLS 1.2
//     handshake (RFC 5246 section 7.3) takes two, but Chromium uses TLS False Start (RFC 7918)
//     with the forward-secret AEAD suites and ALPN our server negotiates: it sends the request
//     with its Finished, without waiting for the server's, so the second handshake round trip
//     carries the request (measured here: TTFB of a 2 KB page at 100 ms RTT 286-303 ms with
//     TLS 1.2, 311-330 ms with TLS 1.3, i.e. 3 round trips for both). A resumed TLS 1.2
//     handshake (warm) is one round trip too.
//   - h3 cold: 1 (QUIC + TLS 1.3 handshake, RFC 9000 section 7) + 1 (HTML) + 1 (images);
//     h3 warm with 0-RTT: the HTML request rides in the first flight (RFC 9001 section 4.6.1), so
//     1 (HTML) + 1 (images).
//
// Any QUIC row of protocol.Table counts as h3, any other as TCP.
//
// HTTP/1.1 opens up to six connections whose handshakes in practice add round trips; the bound
// assumes they were ready in time, so it is a true lower bound, not a prediction. tls is kept
// for callers: with False Start it no longer changes the bound.
func MinRoundTrips(proto string, mode result.Mode, tls string) int {
	if p, err := protocol.Lookup(proto); err == nil && p.Transport == protocol.QUIC {
		if mode == result.Warm {
			return 2
		}
		return 3
	}
	return 1 + 1 + 2 // TCP + TLS (1.3, or 1.2 with False Start, or resumed) + HTML + images
}

// IdealPLT is the lower bound of a load's PLT: the page's bytes serialized at the bottleneck rate
// plus the protocol's minimal round trips (MinRoundTrips) at the base RTT. bytes in bytes,
// rateBps in bit/s; it ignores headers and packet overhead, so real loads must take longer.
func IdealPLT(bytes int64, rateBps int64, rtt time.Duration, roundTrips int) time.Duration {
	if rateBps <= 0 {
		return time.Duration(roundTrips) * rtt
	}
	ser := time.Duration(float64(bytes*8) / float64(rateBps) * float64(time.Second))
	return ser + time.Duration(roundTrips)*rtt
}
