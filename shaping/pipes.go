package shaping

import "github.com/pltlab/pltlab/shaping/emu"

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
