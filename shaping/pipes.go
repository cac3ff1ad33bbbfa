package shaping

import (
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/emu"
)

// direction converts one direction's emulator counters to the record's form.
func direction(c emu.Counters) result.Direction {
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
		Reordered:        c.Reordered,
		ReorderExtentMax: c.ReorderExtentMax,
		QueueDelayP50Ms:  ms(c.QueueDelayP50),
		QueueDelayP99Ms:  ms(c.QueueDelayP99),
		QueueDelayMaxMs:  ms(c.QueueDelayMax),
		TimingErrP50Ms:   ms(c.TimingErrP50),
		TimingErrP99Ms:   ms(c.TimingErrP99),
		TimingErrMaxMs:   ms(c.TimingErrMax),
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

// ms is d in milliseconds, as the record's *_ms fields hold it.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
