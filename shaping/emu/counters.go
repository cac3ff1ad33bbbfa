package emu

import (
	"time"

	"github.com/pltlab/pltlab/result"
)

// counters accumulate one direction's statistics between two Take calls.
type counters struct {
	packetsIn, bytesIn, packetsOut, bytesOut int64
	dropsLoss, dropsQueue, dropsOther        int64
	queueDelay, timingErr                    hist
}

func (c *counters) reset() {
	c.packetsIn, c.bytesIn, c.packetsOut, c.bytesOut = 0, 0, 0, 0
	c.dropsLoss, c.dropsQueue, c.dropsOther = 0, 0, 0
	c.queueDelay.reset()
	c.timingErr.reset()
}

func ms(ns int64) float64 { return float64(ns) / float64(time.Millisecond) }

func (c *counters) direction() result.Direction {
	return result.Direction{
		PacketsIn:       c.packetsIn,
		BytesIn:         c.bytesIn,
		PacketsOut:      c.packetsOut,
		BytesOut:        c.bytesOut,
		DropsLoss:       c.dropsLoss,
		DropsQueue:      c.dropsQueue,
		DropsOther:      c.dropsOther,
		QueueDelayP50Ms: ms(c.queueDelay.quantile(0.50)),
		QueueDelayP99Ms: ms(c.queueDelay.quantile(0.99)),
		QueueDelayMaxMs: ms(c.queueDelay.max),
		TimingErrP50Ms:  ms(c.timingErr.quantile(0.50)),
		TimingErrP99Ms:  ms(c.timingErr.quantile(0.99)),
		TimingErrMaxMs:  ms(c.timingErr.max),
	}
}
