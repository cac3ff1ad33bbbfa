package shaping

import (
	"net/netip"

	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/netem"
)

// clientDev is the name of a link's client-side device, inside the link's namespace (the same
// name in every namespace).
const clientDev = "pltlab0"

// netemAQM maps the spec's queue disciplines to the netem package's (kernel qdisc names).
var netemAQM = map[emu.AQM]string{emu.DropTail: netem.DropTail, emu.DropHead: netem.DropHead,
	emu.CoDel: netem.CoDel, emu.PIE: netem.PIE, emu.FQCoDel: netem.FQCoDel, emu.CAKE: netem.CAKE}

// NetemConfig derives the tc configuration of a link from s (the same per-direction values as
// the emulator's, see linkspec.PipeConfigs): rate, queue, delay, jitter and its distribution
// (order kept unless reorder=true), Bernoulli or Gilbert-Elliott loss, reordering (only without base delay: the
// held-back packets get netem's delay, the others none), queue discipline with its target,
// interval and ECN, or cake. Errors (wrapping ErrNetemCannot) name what tc cannot do.
func NetemConfig(s linkspec.Spec, ns, hostDev string, host, client netip.Addr) (netem.Config, error) {
	if err := linkspec.NetemSupported(s); err != nil {
		return netem.Config{}, err
	}
	down, up, err := linkspec.PipeConfigs(s)
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
