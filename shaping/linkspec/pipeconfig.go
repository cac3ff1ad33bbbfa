package linkspec

import (
	"cmp"

	"github.com/pltlab/pltlab/shaping/emu"
)

// PipeConfigs derives the emulator configuration of each direction from s: rate (or trace),
// RTT/2 one-way delay, jitter, loss, queue (UpQueueBytes for the up direction), the
// direction's impairments, the outages (one seed for both directions, so they go down
// together) and distinct seeds. It reads trace files; errors name the file.
func PipeConfigs(s Spec) (down, up emu.Config, err error) {
	seed := s.Seed
	seed = cmp.Or(seed, 1)
	base := emu.Config{Delay: s.RTT / 2, Jitter: s.Jitter, JitterDist: s.JitterDist, Reorder: s.Reorder, QueuePackets: s.QueuePackets,
		Outage: s.Outage}
	if s.Outage.Off > 0 {
		base.Outage.Seed = seed
	}
	down, up = base, base
	down.Rate, down.QueueBytes, down.Seed = int64(s.Down), int64(s.QueueBytes), seed
	up.Rate, up.QueueBytes, up.Seed = int64(s.Up), int64(s.UpQueueBytes()), seed+1
	if err := s.DownImp.apply(&down); err != nil {
		return down, up, err
	}
	if err := s.UpImp.apply(&up); err != nil {
		return down, up, err
	}
	return down, up, nil
}
