package shaping

import (
	"time"

	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/emu"
)

// direction converts one direction's emulator counters to the record's form; base is the
// instant the pipe's clock counts from (the late releases' times are offsets from it).
func direction(c emu.Counters, base time.Time) result.Direction {
	d := result.Direction{
		PacketsIn:        c.PacketsIn,
		BytesIn:          c.BytesIn,
		PacketsOut:       c.PacketsOut,
		BytesOut:         c.BytesOut,
		DropsLoss:        c.DropsLoss,
		DropsQueue:       c.DropsQueue,
		DropsOther:       c.DropsOther,
		DropsAQM:         c.DropsAQM,
		DropsOutage:      c.DropsOutage,
		HeldOutage:       c.HeldOutage,
		LossBursts:       c.LossBursts,
		MarksCE:          c.MarksCE,
		Corrupted:        c.Corrupted,
		Bleached:         c.Bleached,
		Rebinds:          c.Rebinds,
		Unbound:          c.Unbound,
		Reordered:        c.Reordered,
		ReorderExtentMax: c.ReorderExtentMax,
		QueueDelayP50Ms:  quantity.Ms(c.QueueDelayP50),
		QueueDelayP99Ms:  quantity.Ms(c.QueueDelayP99),
		QueueDelayMaxMs:  quantity.Ms(c.QueueDelayMax),
		TimingErrP50Ms:   quantity.Ms(c.TimingErrP50),
		TimingErrP99Ms:   quantity.Ms(c.TimingErrP99),
		TimingErrMaxMs:   quantity.Ms(c.TimingErrMax),
	}
	hostFreezes(&d, c, base)
	d.Stalls, d.StalledReleases = c.Stalls, c.StalledReleases
	for _, sp := range c.StallSpans {
		d.StallSpans = append(d.StallSpans, result.StallSpan{From: base.Add(sp.From), To: base.Add(sp.To), LateMs: quantity.Ms(sp.Late),
			OwnLateMs: quantity.Ms(stallOwn(sp, c, base)), Releases: sp.Releases})
	}
	if c.LossBursts > 0 {
		d.LossBurstMean = float64(c.DropsLoss) / float64(c.LossBursts)
	}
	if c.PacketsOut > 0 {
		d.ReorderRatio = float64(c.Reordered) / float64(c.PacketsOut)
	}
	if c.Reordered > 0 {
		d.ReorderExtentMean = float64(c.ReorderExtentSum) / float64(c.Reordered)
	}
	return d
}

// hostFreezes takes off each late release's lateness what a freeze of the host explains: the
// time the hypervisor held the CPU the release was made on, or the CPU the forwarder slept on
// before it (the larger), while the packet waited, from its scheduled time to its release
// (idlepoll.Stolen), at most result.HostFreezeAllowanceMs per release. It fills d's HostFreezeMs, HostFreezeReleases and TimingErrOwnMaxMs when it took
// anything off. Nothing is taken off when the late releases were too many to list (the
// lateness then counts whole), and releases not listed were at most emu.LateRecordThreshold
// late.
func hostFreezes(d *result.Direction, c emu.Counters, base time.Time) {
	if len(c.Late) == 0 || c.LateOverflow {
		return
	}
	allow := time.Duration(result.HostFreezeAllowanceMs * float64(time.Millisecond))
	own := min(c.TimingErrMax, emu.LateRecordThreshold)
	var most time.Duration
	var n int64
	for _, l := range c.Late {
		var ex time.Duration
		for _, cpu := range []int{l.CPU, l.WaitCPU} {
			if cpu >= 0 {
				ex = max(ex, min(idlepoll.Stolen(cpu, base.Add(l.Due), base.Add(l.Due+l.Late)), l.Late, allow))
			}
		}
		if ex > 0 {
			n++
			most = max(most, ex)
		}
		own = max(own, l.Late-ex)
	}
	if n == 0 {
		return
	}
	d.HostFreezeMs, d.HostFreezeReleases, d.TimingErrOwnMaxMs = quantity.Ms(most), n, quantity.Ms(own)
}

// stallOwn is the largest lateness of stall sp's releases that no host freeze explains, as
// hostFreezes takes it off a load's: each release listed in c.Late less the time the
// hypervisor held its CPU or the CPU its forwarder slept on while it waited, at most
// result.HostFreezeAllowanceMs. When some of the stall's late releases are not listed (more than
// emu.MaxLateReleases in the interval), nothing is taken off: the stall's whole lateness.
func stallOwn(sp emu.StallSpan, c emu.Counters, base time.Time) time.Duration {
	allow := time.Duration(result.HostFreezeAllowanceMs * float64(time.Millisecond))
	var own time.Duration
	var listed int64
	for _, l := range c.Late {
		if l.Late <= emu.StallLateness || l.Due < sp.From || l.Due > sp.To {
			continue
		}
		listed++
		var ex time.Duration
		for _, cpu := range []int{l.CPU, l.WaitCPU} {
			if cpu >= 0 {
				ex = max(ex, min(idlepoll.Stolen(cpu, base.Add(l.Due), base.Add(l.Due+l.Late)), l.Late, allow))
			}
		}
		own = max(own, l.Late-ex)
	}
	if listed < sp.Releases {
		return sp.Late
	}
	return own
}
