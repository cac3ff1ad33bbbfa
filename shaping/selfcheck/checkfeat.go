package selfcheck

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// sleepCtx sleeps d or until ctx ends; it reports whether the full d passed.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// imp is a direction's impairments.
func (c *checker) imp(down bool) linkspec.Impair {
	if down {
		return c.spec.DownImp
	}
	return c.spec.UpImp
}

// rate is a direction's rate (a trace's mean rate).
func (c *checker) rate(down bool) linkspec.Rate {
	if down {
		return c.spec.Down
	}
	return c.spec.Up
}

// aqm is a direction's queue discipline.
func (c *checker) aqm(down bool) emu.AQM { return c.imp(down).AQM }

// ge is the Gilbert-Elliott model a direction's emulator uses (zero for Bernoulli loss).
func (c *checker) ge(down bool) emu.GilbertElliott {
	im := c.imp(down)
	if im.GE.Enabled() {
		return im.GE
	}
	if im.Burst > 0 {
		ge, _ := emu.Simple(im.Loss, im.Burst)
		return ge
	}
	return emu.GilbertElliott{}
}

// slackOneWay is how much later than RTT/2 (plus serialization and queueing) a packet of the
// direction may arrive: per-packet jitter, delay variation, the reordering hold and the rest
// of a trace's longest gap between opportunities (half of it is in expectedRTT). Jitter and
// delay variation are at most RTT/2 (linkspec.Parse refuses more), so the tolerances built on this
// stay finite and the lines can fail.
func (c *checker) slackOneWay(down bool) time.Duration {
	im := c.imp(down)
	s := c.jitterAbove() + im.DelayVar + c.traceMaxGap(down)/2
	if im.ReorderProb > 0 {
		s += cmpOr(im.ReorderDelay, linkspec.DefaultReorderDelay)
	}
	return s
}

// jitterAbove and jitterBelow are the most per-packet jitter adds to or takes from a one-way
// delay: the jitter times its distribution's range ends (emu.JitterRange: 1 and 1 for the
// uniform; for normal 3.52 and 4, Pareto 4 and 2/3, paretonormal 3.88 and 1.50).
func (c *checker) jitterAbove() time.Duration {
	_, hi := emu.JitterRange(c.spec.JitterDist)
	return time.Duration(math.Ceil(hi * float64(c.spec.Jitter)))
}

func (c *checker) jitterBelow() time.Duration {
	lo, _ := emu.JitterRange(c.spec.JitterDist)
	return time.Duration(math.Ceil(-lo * float64(c.spec.Jitter)))
}

// goodputUnjudged says why a direction's TCP goodput is reported but not judged ("" when it is
// judged): random loss, delay variation, reordering, a trace, outages, or a queue below one
// BDP (TCP cannot keep the link full: a valid experiment, not a faulty link).
func (c *checker) goodputUnjudged(down bool) string {
	im := c.imp(down)
	other := c.imp(!down)
	switch {
	case im.Loss > 0 || other.Loss > 0:
		return "random loss configured"
	case c.spec.Jitter > 0 || im.DelayVar > 0 || other.DelayVar > 0:
		return "jitter or delay variation configured"
	case im.ReorderProb > 0 || other.ReorderProb > 0:
		return "reordering configured"
	case im.Trace != "":
		return "trace-driven rate: see the trace rate line"
	case c.spec.Outage.Off > 0:
		return "outages configured"
	}
	bdp := linkspec.BDP(c.rate(down), c.spec.RTT)
	if q := c.queueBytes(down); q > 0 && q < bdp {
		return fmt.Sprintf("queue %s below 1 BDP %s: TCP cannot keep the link full", q, bdp)
	}
	return ""
}

// queueBytes is a direction's queue limit in bytes (packets counted at the MTU).
func (c *checker) queueBytes(down bool) linkspec.ByteSize {
	if c.spec.QueuePackets > 0 {
		return linkspec.ByteSize(c.spec.QueuePackets * c.spec.MTU)
	}
	if down {
		return c.spec.QueueBytes
	}
	return c.spec.UpQueueBytes()
}

// unmeasurableExpected reports whether the link is so lossy or slow that TCP may fail to
// connect: then "not measurable at this setting" is the expected outcome, not a failure.
func (c *checker) unmeasurableExpected() bool {
	slow := func(r linkspec.Rate) bool { return r > 0 && r < 64*linkspec.Kbit }
	return c.spec.Loss >= 0.3 || slow(c.spec.Down) || slow(c.spec.Up) || c.spec.Outage.Off > 0
}

// notMeasurable adds a direction's goodput line when TCP could not be measured.
func (c *checker) notMeasurable(down bool, why string, expected bool) {
	tol := "FAIL: expected measurable"
	if expected {
		tol = "informational"
	}
	c.add(fmt.Sprintf("TCP goodput %s", dirName(down)), fmtRate(float64(c.rate(down))),
		"not measurable at this setting: "+why, tol, expected)
}

// aqmLine checks CoDel's, PIE's or CAKE's (COBALT: CoDel's 5 ms target) standing queue under the saturating TCP flow: the median
// RTT under load minus the idle RTT (the queueing delay the probes met, measured independently
// of the emulator) must stay near the AQM's target: at most 2 x target + 2 ms, well under the
// buffer's own delay. The emulator's median queueing delay is shown alongside.
func (c *checker) aqmLine(down bool, loaded []time.Duration, e *result.Emulator) {
	a := c.aqm(down)
	if a != emu.CoDel && a != emu.PIE && a != emu.FQCoDel && a != emu.CAKE {
		return
	}
	target := cmpOr(c.imp(down).Target, emu.DefaultCoDelTarget)
	if a == emu.PIE {
		target = cmpOr(c.imp(down).Target, emu.DefaultPIETarget)
	}
	name := fmt.Sprintf("%s standing queue %s (TCP load)", a, dirName(down))
	if len(loaded) == 0 {
		c.add(name, "~"+quantity.FormatMsUnit(quantity.Ms(target), 2), "no probe answered", "", false)
		return
	}
	med := median(loaded) - c.expectedRTT()
	emuMed := ""
	if _, tc := c.l.(overheadProber); e != nil && !tc { // the kernel's qdiscs export no sojourn distribution
		d := e.Down
		if !down {
			d = e.Up
		}
		emuMed = fmt.Sprintf(" (emulator median %.2f ms)", d.QueueDelayP50Ms)
	}
	bound := 2*target + 2*time.Millisecond + 2*c.rate(down).Transmit(linkspec.ByteSize(c.spec.MTU)) + c.traceMaxGap(down)
	tol := "<= 2 x target + 2 ms + 2 MTU times = " + quantity.FormatMsUnit(quantity.Ms(bound), 2)
	if c.imp(down).Trace != "" {
		// Over a varying trace the queue swells for up to an interval after each fall in rate;
		// what must hold is that the AQM, not the buffer, sets the queue.
		bound = max(bound, c.qDelay(down)/4)
		tol = "<= 1/4 of the buffer's delay (" + quantity.FormatMsUnit(quantity.Ms(c.qDelay(down)), 2) + ") at the trace's mean rate"
	}
	c.add(name, "~"+quantity.FormatMsUnit(quantity.Ms(target), 2), quantity.FormatMsUnit(quantity.Ms(med), 2)+emuMed, tol, med <= bound)
}

// traceMaxGap is the longest time between two delivery opportunities of a direction's trace
// (0 without a trace): a packet may wait that long for the link at an idle moment.
func (c *checker) traceMaxGap(down bool) time.Duration {
	im := c.imp(down)
	if im.Trace == "" {
		return 0
	}
	tr, err := linkspec.LoadTrace(im.Trace)
	if err != nil {
		return 0
	}
	return tr.MaxGap()
}

// lostSpans measures the longest run of lost packets of a stream by the sender's send times:
// inner is the time between the sends of its first and last lost packets, outer between the
// sends of the received packets around it (0 when nothing was lost in the middle).
func lostSpans(sent []time.Time, got []arrival) (inner, outer time.Duration) {
	best := 0
	for _, r := range lostRuns(len(sent), got) {
		if i, j := r[0], r[1]; j-i > best {
			best = j - i
			outer = sent[j].Sub(sent[i-1])
			inner = sent[j-1].Sub(sent[i])
		}
	}
	return inner, outer
}

// lostRuns returns every run of lost packets of a stream of n packets that lies between two
// received ones, as the run's first sequence number and the next received one, in stream order.
func lostRuns(n int, got []arrival) [][2]int {
	seen := make([]bool, n)
	for _, a := range got {
		if a.seq >= 0 && a.seq < n {
			seen[a.seq] = true
		}
	}
	var out [][2]int
	for i := 0; i < n; {
		if seen[i] {
			i++
			continue
		}
		j := i
		for j < n && !seen[j] {
			j++
		}
		if i > 0 && j < n {
			out = append(out, [2]int{i, j})
		}
		i = j
	}
	return out
}

// median is the median of d (the upper middle one of an even count); d is left as it is.
func median(d []time.Duration) time.Duration {
	return slices.Sorted(slices.Values(d))[len(d)/2]
}

// traceRate checks each trace-driven direction's mean rate: a paced UDP flood at 2 x the
// mean rate for whole periods (at least 2 s; quick 1 s; at most 10 s) saturates the link; the
// IP bytes received over whole periods from the first arrival must be within 1 % of the trace's
// mean rate.
func (c *checker) traceRate(ctx context.Context) error {
	for _, down := range []bool{true, false} {
		im := c.imp(down)
		if im.Trace == "" {
			continue
		}
		tr, err := linkspec.LoadTrace(im.Trace)
		if err != nil {
			return err
		}
		want := tr.MeanRate()
		dur := 2 * time.Second
		if c.quick {
			dur = time.Second
		}
		periods := max(int(math.Ceil(float64(dur)/float64(tr.Period()))), 1)
		if time.Duration(periods)*tr.Period() > 10*time.Second {
			periods = max(int(10*time.Second/tr.Period()), 1)
		}
		window := time.Duration(periods) * tr.Period()
		const size = 1200
		gap := time.Duration(float64(size+28) * 8 / (2 * want) * float64(time.Second))
		n := int((window + window/4) / gap)
		got, _, err := c.stream(ctx, down, n, gap, size)
		if err != nil {
			return err
		}
		name := fmt.Sprintf("trace mean rate %s (%d periods of %s)", dirName(down), periods, tr.Period())
		if len(got) < 2 {
			c.add(name, fmtRate(want), "nothing arrived", "+-1%", false)
			continue
		}
		start, bytes := got[0].recv, 0
		for _, a := range got {
			if a.recv.Sub(start) < window {
				bytes += size + 28
			}
		}
		bps := float64(bytes) * 8 / window.Seconds()
		c.add(name, fmtRate(want), fmtRate(bps), "+-1%", math.Abs(bps-want) <= 0.01*want)
	}
	return nil
}

// outages checks the link's outages with a paced UDP stream towards the client (one packet
// every 5 ms) over two periods (periodic; at most 30 s) or 6 mean cycles (random; at most 30
// s). Mode drop, periodic: in the longest run of lost packets, the first and last were sent at
// most Off apart and the packets received around it at least Off apart (send times, so a late
// sender does not matter; 2 ms slack plus a probe's serialization); random: at least one gap.
// Mode hold: nothing is lost and the largest one-way delay includes at least half an outage.
func (c *checker) outages(ctx context.Context) error {
	o := c.spec.Outage
	if o.Off == 0 {
		return nil
	}
	cycle := o.On + o.Off
	dur := min(2*cycle+o.Off, 30*time.Second)
	if o.Random {
		dur = min(10*cycle, 30*time.Second)
	}
	gap := max(5*time.Millisecond, 2*c.spec.Down.Transmit(probeIPSize))
	n := int(dur / gap)
	c.take()
	got, sends, err := c.stream(ctx, true, n, gap, streamPacket)
	if err != nil {
		return err
	}
	st := analyse(n, got)
	inner, outer := lostSpans(sends, got)
	emuDrops := ""
	if e := c.take(); e != nil {
		emuDrops = fmt.Sprintf("; emulator: %d outage drops, %d held, %d other drops", e.Down.DropsOutage, e.Down.HeldOutage, e.Down.DropsQueue+e.Down.DropsAQM+e.Down.DropsLoss+e.Down.DropsOther)
	}
	gapMeasured := time.Duration(st.longestRun) * gap
	slack := 2*time.Millisecond + c.spec.Down.Transmit(probeIPSize)
	name := fmt.Sprintf("outage gaps down (%s, %d packets %s apart)", map[bool]string{false: "drop", true: "hold"}[o.Hold], n, gap)
	conf := fmt.Sprintf("up %s, down %s", o.On, o.Off)
	if o.Random {
		conf = "exponential, means " + conf
	}
	switch {
	case o.Hold:
		extra := st.maxDelay - c.spec.RTT/2
		c.add(name, conf, fmt.Sprintf("%d lost, largest extra delay %s%s", st.lost, quantity.FormatMsUnit(quantity.Ms(extra), 2), emuDrops),
			"0 lost, extra delay >= "+quantity.FormatMsUnit(quantity.Ms(o.Off/2), 2), st.lost == 0 && (o.Random || extra >= o.Off/2) && extra > 0)
	case o.Random:
		gs := gapLengths(n, got, gap)
		if len(gs) < minOutageGaps {
			c.add(name, conf, fmt.Sprintf("%d gaps%s", len(gs), emuDrops),
				fmt.Sprintf("sample too small: need %d gaps to judge their mean: run a longer check", minOutageGaps), false)
			break
		}
		var sum time.Duration
		for _, g := range gs {
			sum += g
		}
		mean := sum / time.Duration(len(gs))
		lo, hi := expMeanInterval(o.Off, len(gs))
		lo, hi = lo-gap, hi+gap // a gap is seen to within one packet
		c.add(name, conf, fmt.Sprintf("%d gaps, mean %s, longest %s%s", len(gs), quantity.FormatMsUnit(quantity.Ms(mean), 2), quantity.FormatMsUnit(quantity.Ms(gapMeasured), 2), emuDrops),
			fmt.Sprintf("mean %s..%s (exponential, chi-square 99%%)", quantity.FormatMsUnit(quantity.Ms(lo), 2), quantity.FormatMsUnit(quantity.Ms(hi), 2)), mean >= lo && mean <= hi)
	default:
		c.add(name, conf, fmt.Sprintf("%d gaps, longest %s..%s%s", st.bursts, quantity.FormatMsUnit(quantity.Ms(inner), 2), quantity.FormatMsUnit(quantity.Ms(outer), 2), emuDrops),
			fmt.Sprintf("lost packets sent within %s + %s, received ones %s - %s apart", quantity.FormatMsUnit(quantity.Ms(o.Off), 2), quantity.FormatMsUnit(quantity.Ms(slack), 2), quantity.FormatMsUnit(quantity.Ms(o.Off), 2), quantity.FormatMsUnit(quantity.Ms(slack), 2)),
			st.bursts >= 1 && inner <= o.Off+slack && outer >= o.Off-slack)
	}
	return nil
}

// minOutageGaps is the fewest outage gaps whose mean length is judged.
const minOutageGaps = 3

// gapLengths returns the length of every run of lost packets between two received ones of a
// stream of n packets gap apart: (lost packets + 1) x gap, the time between the received
// packets around it less one gap, to within one gap of the outage.
func gapLengths(n int, got []arrival, gap time.Duration) []time.Duration {
	var out []time.Duration
	for _, r := range lostRuns(n, got) {
		out = append(out, time.Duration(r[1]-r[0]+1)*gap-gap/2)
	}
	return out
}

// expMeanInterval is the 99 % interval of the mean of k exponential durations of mean m:
// m chi2(2k; q) / (2k) for q = 0.005 and 0.995, the quantiles by the Wilson-Hilferty
// approximation chi2(v; q) = v (1 - 2/(9v) + z_q sqrt(2/(9v)))^3 (E. B. Wilson, M. M.
// Hilferty, PNAS 17, 1931).
func expMeanInterval(m time.Duration, k int) (lo, hi time.Duration) {
	v := float64(2 * k)
	q := func(z float64) float64 {
		a := 1 - 2/(9*v) + z*math.Sqrt(2/(9*v))
		return v * a * a * a
	}
	return time.Duration(float64(m) * q(-2.5758) / v), time.Duration(float64(m) * q(2.5758) / v)
}
