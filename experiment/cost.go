package experiment

import (
	"cmp"
	"fmt"
	"time"

	"github.com/pltlab/pltlab/device"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// newCost returns the cost model (plan.Model) of c's loads: its pages and links parsed, in
// schedule order, and the settings that change a load's time (TLS, timeout, device, the number
// of protocols, the ngtcp2 stack's idle timeout when it serves h3). It fails on a page or link
// spec that does not parse.
func newCost(c Config) (*plan.Model, error) {
	d := c.withDefaults()
	m := &plan.Model{TLS: d.TLS, Timeout: d.Timeout}
	m.Device, _ = device.Parse(c.Device) // Validate refuses a bad one
	for _, s := range c.Pages {
		p, err := c.PageSpec(s)
		if err != nil {
			return nil, fmt.Errorf("bad page %q: %w", s, err)
		}
		m.Pages = append(m.Pages, p)
	}
	for _, s := range c.Links {
		l, err := linkspec.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("bad link %q: %w", s, err)
		}
		m.Links = append(m.Links, l)
	}
	protos := map[string]bool{}
	for _, a := range d.Arms {
		protos[a.Protocol] = true
	}
	m.Protocols = len(protos)
	if h3Stack(d) == server.StackNgtcp2 {
		m.Ngtcp2Idle = server.Ngtcp2IdleTimeout
	}
	return m, nil
}

// Estimate returns the cost model's time of every load of c run in one process, every link
// brought up once, without plan.StartCost: NewSchedule(c).Total, priced cell by cell (a load's
// cost depends on its page, link and arm, never on its place) without deriving the schedule.
// It fails on a page or link spec that does not parse.
func Estimate(c Config) (time.Duration, error) {
	m, err := newCost(c)
	if err != nil {
		return 0, err
	}
	reps := time.Duration(cmp.Or(c.Runs, DefaultRuns) + c.Warmup)
	var d time.Duration
	for l := range m.Links {
		d += m.Setup(l)
		for p := range m.Pages {
			for _, a := range c.Arms {
				d += reps * m.Load(p, l, a.Protocol, a.Mode)
			}
		}
	}
	return d, nil
}

// Shaped reports whether any link of c is shaped: such a link needs network namespaces and TUN
// devices, hence CAP_NET_ADMIN and CAP_SYS_ADMIN (root, or pltlab's rootless mode in user
// namespaces), where "none" needs no privilege. It fails on a link spec that does not parse.
func Shaped(c Config) (bool, error) {
	m, err := newCost(c)
	if err != nil {
		return false, err
	}
	for _, l := range m.Links {
		if l.Shaped() {
			return true, nil
		}
	}
	return false, nil
}
