package shaping

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/emu"
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
func (c *checker) imp(down bool) Impair {
	if down {
		return c.spec.DownImp
	}
	return c.spec.UpImp
}

// rate is a direction's rate (a trace's mean rate).
func (c *checker) rate(down bool) Rate {
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
// direction may arrive: per-packet jitter, delay variation and the reordering hold. Jitter and
// delay variation are at most RTT/2 (ParseSpec refuses more), so the tolerances built on this
// stay finite and the lines can fail.
func (c *checker) slackOneWay(down bool) time.Duration {
	im := c.imp(down)
	s := c.spec.Jitter + im.DelayVar
	if im.ReorderProb > 0 {
		s += cmpOr(im.ReorderDelay, DefaultReorderDelay)
	}
	return s
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
	bdp := BDP(c.rate(down), c.spec.RTT)
	if q := c.queueBytes(down); q > 0 && q < bdp {
		return fmt.Sprintf("queue %s below 1 BDP %s: TCP cannot keep the link full", q, bdp)
	}
	return ""
}

// queueBytes is a direction's queue limit in bytes (packets counted at the MTU).
func (c *checker) queueBytes(down bool) ByteSize {
	if c.spec.QueuePackets > 0 {
		return ByteSize(c.spec.QueuePackets * c.spec.MTU)
	}
	if down {
		return c.spec.QueueBytes
	}
	return c.spec.UpQueueBytes()
}

// unmeasurableExpected reports whether the link is so lossy or slow that TCP may fail to
// connect: then "not measurable at this setting" is the expected outcome, not a failure.
func (c *checker) unmeasurableExpected() bool {
	slow := func(r Rate) bool { return r > 0 && r < 64*Kbit }
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

// aqmLine checks CoDel's or PIE's standing queue under the saturating TCP flow: the median
// RTT under load minus the idle RTT (the queueing delay the probes met, measured independently
// of the emulator) must stay near the AQM's target: at most 2 x target + 2 ms, well under the
// buffer's own delay. The emulator's median queueing delay is shown alongside.
func (c *checker) aqmLine(down bool, loaded []time.Duration, e *result.Emulator) {
	a := c.aqm(down)
	if a != emu.CoDel && a != emu.PIE && a != emu.FQCoDel {
		return
	}
	target := cmpOr(c.imp(down).Target, emu.DefaultCoDelTarget)
	if a == emu.PIE {
		target = cmpOr(c.imp(down).Target, emu.DefaultPIETarget)
	}
	name := fmt.Sprintf("%s standing queue %s (TCP load)", a, dirName(down))
	if len(loaded) == 0 {
		c.add(name, "~"+fmtMs(target), "no probe answered", "", false)
		return
	}
	med := median(loaded) - c.expectedRTT()
	emuMed := ""
	if e != nil {
		d := e.Down
		if !down {
			d = e.Up
		}
		emuMed = fmt.Sprintf(" (emulator median %.2f ms)", d.QueueDelayP50Ms)
	}
	bound := 2*target + 2*time.Millisecond
	c.add(name, "~"+fmtMs(target), fmtMs(med)+emuMed, "<= 2 x target + 2 ms = "+fmtMs(bound), med <= bound)
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

// traceRate checks each trace-driven direction's mean rate: a paced UDP flood at 1.5 x the
// mean rate for whole periods (at least 2 s; quick 1 s; at most 10 s) saturates the link; the
// IP bytes received over whole periods from the first arrival must be within 1 % of the trace's
// mean rate.
func (c *checker) traceRate(ctx context.Context) error {
	for _, down := range []bool{true, false} {
		im := c.imp(down)
		if im.Trace == "" {
			continue
		}
		tr, err := loadTrace(im.Trace)
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
		gap := time.Duration(float64(size+28) * 8 / (1.5 * want) * float64(time.Second))
		n := int((window + window/4) / gap)
		got, err := c.stream(ctx, down, n, gap, size)
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
// s). Mode drop: the longest run of lost packets must match the outage (periodic: Off +- 2
// packets and 5 ms) or at least one gap must be seen (random). Mode hold: nothing is lost and
// the largest one-way delay must include the outage.
func (c *checker) outages(ctx context.Context) error {
	o := c.spec.Outage
	if o.Off == 0 {
		return nil
	}
	cycle := o.On + o.Off
	dur := min(2*cycle+o.Off, 30*time.Second)
	if o.Random {
		dur = min(6*cycle, 30*time.Second)
	}
	gap := max(5*time.Millisecond, 2*c.spec.Down.Transmit(probeIPSize))
	n := int(dur / gap)
	got, err := c.stream(ctx, true, n, gap, streamPacket)
	if err != nil {
		return err
	}
	st := analyse(n, got)
	gapMeasured := time.Duration(st.longestRun) * gap
	name := fmt.Sprintf("outage gaps down (%s, %d packets %s apart)", map[bool]string{false: "drop", true: "hold"}[o.Hold], n, gap)
	conf := fmt.Sprintf("up %s, down %s", o.On, o.Off)
	if o.Random {
		conf = "exponential, means " + conf
	}
	slack := 2*gap + 5*time.Millisecond
	switch {
	case o.Hold:
		extra := st.maxDelay - c.spec.RTT/2
		c.add(name, conf, fmt.Sprintf("%d lost, largest extra delay %s", st.lost, fmtMs(extra)),
			"0 lost, extra delay >= "+fmtMs(o.Off/2), st.lost == 0 && (o.Random || extra >= o.Off/2) && extra > 0)
	case o.Random:
		c.add(name, conf, fmt.Sprintf("%d gaps, longest %s", st.bursts, fmtMs(gapMeasured)), ">= 1 gap", st.bursts >= 1)
	default:
		c.add(name, conf, fmt.Sprintf("%d gaps, longest %s", st.bursts, fmtMs(gapMeasured)),
			fmt.Sprintf("longest %s +- %s", fmtMs(o.Off), fmtMs(slack)), st.bursts >= 1 && (gapMeasured-o.Off).Abs() <= slack)
	}
	return nil
}
