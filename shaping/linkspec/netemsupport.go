package linkspec

import (
	"errors"
	"fmt"

	"github.com/pltlab/pltlab/shaping/emu"
)

// ErrNetemCannot means a LINK spec asks for something tc netem cannot emulate exactly; the
// wrapped message names it.
var ErrNetemCannot = errors.New("shaper=netem cannot emulate it: accepted shaper=emu (the default)")

// NetemSupported refuses, in one line naming the feature, what tc cannot reproduce exactly:
// delay variation redrawn per interval, trace-driven rates, outages, reordering on a link with
// a base delay (netem's "reorder P%" sends P% of the packets undelayed instead of holding some
// back), and a queue in bytes under an AQM or drop-head queue (the kernel's codel, pie,
// fq_codel and pfifo_head_drop limit packets), corruption (netem's differs: see emu's
// corruptPayload) and ECN bleaching. Everything else maps: rate and byte or packet
// droptail queue (tbf), delay, jitter in any of netem's distributions with or without
// reordering, Bernoulli and Gilbert-Elliott loss (netem), drophead (pfifo_head_drop), codel,
// pie and fq_codel with their target, interval and ECN, and cake (Parse refuses its queue and
// parameters on both backends). It returns nil for a spec that maps, else an error wrapping
// ErrNetemCannot; Parse calls it for shaper=netem and shaping.NetemConfig again.
func NetemSupported(s Spec) error {
	for _, d := range []struct {
		name  string
		im    Impair
		bytes ByteSize
	}{{"down", s.DownImp, s.QueueBytes}, {"up", s.UpImp, s.UpQueueBytes()}} {
		im := d.im
		switch {
		case im.Corrupt > 0:
			return fmt.Errorf("%s.corrupt=%g%% (netem's corrupt flips a bit anywhere in the packet and leaves the checksums, so most corrupted packets die in the receiver's checksum check as loss; the emulator flips a payload bit and fixes the transport checksum): %w", d.name, im.Corrupt*100, ErrNetemCannot)
		case im.BleachECN:
			return fmt.Errorf("%s.bleach=ecn (clearing the IP ECN field is the emulator's): %w", d.name, ErrNetemCannot)
		case im.DelayVar > 0:
			return fmt.Errorf("%s.delayvar (a delay redrawn every interval): %w", d.name, ErrNetemCannot)
		case im.Trace != "":
			return fmt.Errorf("%s=trace:%s (delivery opportunities): %w", d.name, im.Trace, ErrNetemCannot)
		case im.ReorderProb > 0 && s.RTT > 0:
			return fmt.Errorf("%s.reorder=%g%% with rtt>0 (netem reorders by sending packets undelayed, not by holding them back): %w", d.name, im.ReorderProb*100, ErrNetemCannot)
		case im.AQM != emu.DropTail && s.QueuePackets == 0 && d.bytes > 0:
			return fmt.Errorf("%s.aqm=%s with queue=%s (the kernel's %s limits packets, not bytes; accepted queue=Npkt or no queue): %w", d.name, im.AQM, d.bytes, im.AQM, ErrNetemCannot)
		}
	}
	if s.Outage.Off > 0 {
		return fmt.Errorf("outage: %w", ErrNetemCannot)
	}
	if s.Rebind.Enabled() {
		return fmt.Errorf("rebind=%s (a NAT that rewrites the client's datagrams is the emulator's): %w", s.Rebind.Mode, ErrNetemCannot)
	}
	return nil
}
