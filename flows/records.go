package flows

import (
	"fmt"
	"math"
	"time"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
)

// runMetrics are the link-level measurements shared by every flow of a run.
type runMetrics struct {
	utilization, ipUtilization float64
	run                        Window
	jain                       float64
	jainWin                    Window
	converge                   *float64
}

// records turns a finished run into one record per flow.
func (c Config) records(l shaping.Link, epoch time.Time, frs []*flowRun, ls linkSeries) []*result.Record {
	spec := l.Spec()
	series := make([][]float64, len(frs))
	steady := make([]Window, len(frs))
	for i, fr := range frs {
		series[i] = Rates(fr.bins.Bytes(), c.Bin)
		steady[i] = SteadyWindow(fr.spec.Start, fr.spec.Start+fr.spec.Duration, spec.RTT, c.Bin)
	}
	m := c.runMetrics(float64(spec.Down), series, steady, ls)
	link := spec.Result()
	out := make([]*result.Record, len(frs))
	for i, fr := range frs {
		f := &result.Flow{FlowIndex: i, Flows: len(frs), Mix: Mix(c.Flows),
			StartS: fr.spec.Start.Seconds(), DurationS: fr.spec.Duration.Seconds(),
			GoodputBps: finite(MeanRate(series[i], steady[i])), Bytes: fr.bytes,
			MeanGoodputBps: float64(fr.bytes) * 8 / fr.spec.Duration.Seconds(),
			BinMs:          quantity.Ms(c.Bin), Series: series[i],
			Utilization: m.utilization, IPUtilization: m.ipUtilization, Jain: m.jain, ConvergeS: m.converge}
		f.SteadyFromS, f.SteadyToS = steady[i].Seconds(c.Bin)
		f.GoodputFromS, f.GoodputToS = f.SteadyFromS, f.SteadyToS
		if fr.edges != nil {
			bps, from, to, held := fr.edges.Goodput()
			f.GoodputBps, f.GoodputHeldBytes = finite(bps), held
			f.GoodputFromS, f.GoodputToS = from.Sub(epoch).Seconds(), to.Sub(epoch).Seconds()
		}
		f.RunFromS, f.RunToS = m.run.Seconds(c.Bin)
		f.JainFromS, f.JainToS = m.jainWin.Seconds(c.Bin)
		if spec.Shaped() {
			f.QueueDelayMs, f.QueueDelayMaxMs, f.LinkBps = ls.queueP50, ls.queueMax, ls.bps
		}
		rec := &result.Record{Kind: result.KindFlow, Experiment: c.Experiment, Run: c.Run, Time: epoch.UTC(),
			Protocol: fr.spec.Protocol, CC: fr.spec.CC, Link: link, Env: c.Env, Valid: true, Flow: f,
			Emulator: ls.total, Settings: c.Settings}
		fr.fill(rec)
		out[i] = rec
	}
	return out
}

// fill copies the flow's connection facts and validity into rec.
func (fr *flowRun) fill(rec *result.Record) {
	f := rec.Flow
	if fr.tr == nil {
		rec.Valid, rec.InvalidReason = false, "no connection: "+errString(fr.err)
		return
	}
	f.ALPN, f.QUICVersion = fr.tr.alpn, fr.tr.quicVersion
	if fr.tr.cc != "" {
		rec.CC = fr.tr.cc // what the server read back from the socket
	}
	rec.TCPCC = rec.CC // TCPCC holds the same value as CC (result.Record)
	f.Retransmits, f.SegmentsOut = fr.stats.Retransmits, fr.stats.SegmentsOut
	f.SRTTMs = quantity.Ms(fr.stats.SRTT)
	f.CountersCPUS = fr.countersCPU.Seconds()
	f.SenderBusyS, f.RwndLimitedS = fr.stats.Busy.Seconds(), fr.stats.RwndLimited.Seconds()
	f.SndbufLimitedS = fr.stats.SndbufLimited.Seconds()
	f.Packets, f.Drops = fr.counts.Packets, fr.counts.Drops
	switch {
	case fr.counted && fr.counts.Packets > 0:
		f.LossRatio, f.LossSource = float64(fr.counts.Drops)/float64(fr.counts.Packets), "emulator"
	case fr.stats.SegmentsOut > 0:
		f.LossRatio, f.LossSource = float64(fr.stats.Retransmits)/float64(fr.stats.SegmentsOut), "sender"
	}
	rec.TLSVersion = fr.tr.tlsVersion
	if fr.tr.validErr == nil {
		rec.ObservedProtocol = fr.spec.Protocol // ALPN (and QUIC version) checked in dial
	}
	switch {
	case fr.tr.validErr != nil:
		rec.Valid, rec.InvalidReason = false, fr.tr.validErr.Error()
	case fr.tr.cc != fr.spec.CC:
		rec.Valid, rec.InvalidReason = false, "congestion control "+fr.tr.cc+", requested "+fr.spec.CC
	case fr.endEarly:
		rec.Valid, rec.InvalidReason = false, errString(fr.err)
	case fr.statsErr != nil:
		rec.Valid, rec.InvalidReason = false, "sender counters unread: "+fr.statsErr.Error()
	case fr.bytes == 0:
		rec.ObservedProtocol = "" // the protocol never carried a byte of the body
		f.Starved = true
		rec.Valid, rec.InvalidReason = false, fmt.Sprintf("starved: the flow connected but read no body byte in %v", fr.spec.Duration)
	case rec.ObservedProtocol == "" || rec.TLSVersion == "":
		rec.Valid, rec.InvalidReason = false, "protocol never observed: no ALPN or TLS version on the connection"
	}
}

// runMetrics computes utilization, Jain's index and convergence (see result.Flow).
func (c Config) runMetrics(rate float64, series [][]float64, steady []Window, ls linkSeries) runMetrics {
	var m runMetrics
	m.run = Window{From: math.MaxInt, To: 0}
	for _, w := range steady {
		m.run.From, m.run.To = min(m.run.From, w.From), max(m.run.To, w.To)
	}
	if rate > 0 && m.run.Len() > 0 {
		sum := 0.0
		for _, s := range series {
			sum += finite(MeanRate(s, m.run))
		}
		m.utilization = sum / rate
		m.ipUtilization = finite(MeanRate(ls.bps, m.run)) / rate
	}
	m.jainWin = Intersect(steady)
	xs := make([]float64, len(series))
	for i, s := range series {
		if m.jainWin.Len() > 0 {
			xs[i] = MeanRate(s, m.jainWin)
		} else {
			xs[i] = finite(MeanRate(s, steady[i]))
		}
	}
	if m.jainWin.Len() == 0 {
		m.jainWin = Window{}
	}
	m.jain = finite(Jain(xs))
	if len(series) >= 2 {
		start, end := 0, math.MaxInt
		for i, f := range c.Flows {
			start = max(start, int((f.Start+c.Bin-1)/c.Bin))
			end = min(end, int((f.Start+f.Duration)/c.Bin), len(series[i]))
		}
		perBin := func(d time.Duration) int { return int(d / c.Bin) }
		v := -1.0
		if bins, ok := Converge(series, start, end, perBin(ConvergeSmooth), perBin(ConvergeHold), ConvergeJain); ok {
			v = float64(bins) * c.Bin.Seconds()
		}
		m.converge = &v
	}
	return m
}

// finite maps NaN and infinities to 0 (JSON has no NaN).
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

func errString(err error) string {
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}
