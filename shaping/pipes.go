package shaping

import (
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/emu"
)

// PipeConfigs derives the emulator configuration of each direction from s: rate, RTT/2 one-way
// delay, jitter, loss, droptail queue (UpQueueBytes for the up direction) and distinct seeds.
func PipeConfigs(s Spec) (down, up emu.Config) {
	seed := s.Seed
	if seed == 0 {
		seed = 1
	}
	base := emu.Config{Delay: s.RTT / 2, Jitter: s.Jitter, Reorder: s.Reorder, Loss: s.Loss,
		QueuePackets: s.QueuePackets}
	down, up = base, base
	down.Rate, down.QueueBytes, down.Seed = int64(s.Down), int64(s.QueueBytes), seed
	up.Rate, up.QueueBytes, up.Seed = int64(s.Up), int64(s.UpQueueBytes()), seed+1
	return down, up
}

// direction converts one direction's emulator counters to the record's form.
func direction(c emu.Counters) result.Direction {
	return result.Direction{
		PacketsIn:       c.PacketsIn,
		BytesIn:         c.BytesIn,
		PacketsOut:      c.PacketsOut,
		BytesOut:        c.BytesOut,
		DropsLoss:       c.DropsLoss,
		DropsQueue:      c.DropsQueue,
		DropsOther:      c.DropsOther,
		QueueDelayP50Ms: ms(c.QueueDelayP50),
		QueueDelayP99Ms: ms(c.QueueDelayP99),
		QueueDelayMaxMs: ms(c.QueueDelayMax),
		TimingErrP50Ms:  ms(c.TimingErrP50),
		TimingErrP99Ms:  ms(c.TimingErrP99),
		TimingErrMaxMs:  ms(c.TimingErrMax),
	}
}
