package shaping

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/netem"
)

// ErrNetemCannot means a LINK spec asks for something tc netem cannot emulate exactly; the
// wrapped message names it.
var ErrNetemCannot = errors.New("shaper=netem cannot emulate it: accepted shaper=emu (the default)")

// clientDev is the name of a link's client-side device, inside the link's namespace (the same
// name in every namespace).
const clientDev = "pltlab0"

// netemSupported refuses, in one line naming the feature, what tc cannot reproduce exactly:
// delay variation redrawn per interval, trace-driven rates, outages, reordering on a link with
// a base delay (netem's "reorder P%" sends P% of the packets undelayed instead of holding some
// back), and a queue in bytes under an AQM or drop-head queue (the kernel's codel, pie,
// fq_codel and pfifo_head_drop limit packets). Everything else maps: rate and byte or packet
// droptail queue (tbf), delay, jitter in any of netem's distributions with or without
// reordering, Bernoulli and Gilbert-Elliott loss (netem), drophead (pfifo_head_drop), codel,
// pie and fq_codel with their target, interval and ECN, and cake (ParseSpec refuses its queue
// and parameters on both backends).
func netemSupported(s Spec) error {
	for _, d := range []struct {
		name  string
		im    Impair
		bytes ByteSize
	}{{"down", s.DownImp, s.QueueBytes}, {"up", s.UpImp, s.UpQueueBytes()}} {
		im := d.im
		switch {
		case im.DelayVar > 0:
			return fmt.Errorf("%s.delayvar (a delay redrawn every interval): %w", d.name, ErrNetemCannot)
		case im.Trace != "":
			return fmt.Errorf("%s=trace:%s (delivery opportunities): %w", d.name, im.Trace, ErrNetemCannot)
		case im.ReorderProb > 0 && s.RTT > 0:
			return fmt.Errorf("%s.reorder=%g%% with rtt>0 (netem reorders by sending packets undelayed, not by holding them back): %w", d.name, im.ReorderProb*100, ErrNetemCannot)
		case im.AQM != emu.DropTail && s.QueuePackets == 0 && d.bytes > 0:
			return fmt.Errorf("%s.aqm=%s with queue=%s (the kernel's %s limits packets, not bytes; accepted queue=Npkt or no queue): %w", d.name, im.AQM, d.bytes, netemAQM[im.AQM], ErrNetemCannot)
		}
	}
	if s.Outage.Off > 0 {
		return fmt.Errorf("outage: %w", ErrNetemCannot)
	}
	return nil
}

// netemAQM maps the spec's queue disciplines to the netem package's (kernel qdisc names).
var netemAQM = map[emu.AQM]string{emu.DropTail: netem.DropTail, emu.DropHead: netem.DropHead,
	emu.CoDel: netem.CoDel, emu.PIE: netem.PIE, emu.FQCoDel: netem.FQCoDel, emu.CAKE: netem.CAKE}

// NetemConfig derives the tc configuration of a link from s (the same per-direction values as
// the emulator's, see PipeConfigs): rate, queue, delay, jitter and its distribution (order kept
// unless reorder=true), Bernoulli or Gilbert-Elliott loss, reordering (only without base delay: the
// held-back packets get netem's delay, the others none), queue discipline with its target,
// interval and ECN, or cake. Errors (wrapping ErrNetemCannot) name what tc cannot do.
func NetemConfig(s Spec, ns, hostDev string, host, client netip.Addr) (netem.Config, error) {
	if err := netemSupported(s); err != nil {
		return netem.Config{}, err
	}
	down, up, err := PipeConfigs(s)
	if err != nil {
		return netem.Config{}, err
	}
	dir := func(c emu.Config) netem.Direction {
		d := netem.Direction{Rate: c.Rate, Delay: c.Delay, Jitter: c.Jitter, JitterDist: c.JitterDist.String(), Ordered: !c.Reorder, Loss: c.Loss,
			QueueBytes: c.QueueBytes, QueuePackets: c.QueuePackets, AQM: netemAQM[c.AQM], ECN: c.ECN}
		switch c.AQM {
		case emu.CoDel, emu.FQCoDel:
			d.Target, d.Interval = c.CoDel.Target, c.CoDel.Interval
		case emu.PIE:
			d.Target, d.Interval = c.PIE.Target, c.PIE.TUpdate
		}
		if c.GE.Enabled() {
			d.GE = [4]float64{c.GE.P, c.GE.R, c.GE.H1, c.GE.K1}
		}
		if c.ReorderProb > 0 { // base delay 0: held-back packets are delayed, the rest sent at once
			d.Delay, d.ReorderProb = c.ReorderDelay, 1-c.ReorderProb
		}
		return d
	}
	return netem.Config{Namespace: ns, HostDev: hostDev, ClientDev: clientDev, HostAddr: host,
		ClientAddr: client, MTU: s.MTU, Down: dir(down), Up: dir(up)}, nil
}
