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

// netemSupported refuses, in one line, the features netem cannot reproduce exactly: delay
// variation redrawn per interval, trace-driven rates, queue disciplines other than droptail,
// ECN marking, outages, and reordering on a link with a base delay (netem's "reorder P%"
// sends P% of the packets undelayed instead of holding some back).
// clientDev is the name of a link's client-side device, inside the link's namespace (the same
// name in every namespace).
const clientDev = "pltlab0"

func netemSupported(s Spec) error {
	for _, d := range []struct {
		name string
		im   Impair
	}{{"down", s.DownImp}, {"up", s.UpImp}} {
		im := d.im
		switch {
		case im.DelayVar > 0:
			return fmt.Errorf("%s.delayvar (a delay redrawn every interval): %w", d.name, ErrNetemCannot)
		case im.Trace != "":
			return fmt.Errorf("%s=trace:%s (delivery opportunities): %w", d.name, im.Trace, ErrNetemCannot)
		case im.AQM != emu.DropTail:
			return fmt.Errorf("%s.aqm=%s (this kernel has no codel, pie or fq_codel qdisc, and netem has no AQM): %w", d.name, im.AQM, ErrNetemCannot)
		case im.ReorderProb > 0 && s.RTT > 0:
			return fmt.Errorf("%s.reorder=%g%% with rtt>0 (netem reorders by sending packets undelayed, not by holding them back): %w", d.name, im.ReorderProb*100, ErrNetemCannot)
		}
	}
	if s.Outage.Off > 0 {
		return fmt.Errorf("outage: %w", ErrNetemCannot)
	}
	return nil
}

// NetemConfig derives the netem configuration of a link from s (the same per-direction values
// as the emulator's, see PipeConfigs): rate, delay, jitter, Bernoulli or Gilbert-Elliott loss,
// reordering (only without base delay: the held-back packets get netem's delay, the others
// none), and limit. Errors (wrapping ErrNetemCannot) name what netem cannot do.
func NetemConfig(s Spec, ns, hostDev string, host, client netip.Addr) (netem.Config, error) {
	if err := netemSupported(s); err != nil {
		return netem.Config{}, err
	}
	down, up, err := PipeConfigs(s)
	if err != nil {
		return netem.Config{}, err
	}
	dir := func(c emu.Config) netem.Direction {
		d := netem.Direction{Rate: c.Rate, Delay: c.Delay, Jitter: c.Jitter, Loss: c.Loss,
			QueueBytes: c.QueueBytes, QueuePackets: c.QueuePackets}
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
