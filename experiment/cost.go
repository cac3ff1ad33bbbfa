package experiment

import (
	"fmt"
	"time"

	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
)

// The cost model's constants: what the harness spends beyond the network. They were taken from
// runs on the development machine (2 cores, Chromium 156) and only need to be right in
// proportion, since they balance shards and size sweeps; README, "Running on a cluster".
const (
	// LoadOverhead is the harness time of one load beyond its PLT: a new BrowserContext and tab,
	// closing the server's connections, reading the timings (about 0.2 s per load; a record's
	// wall_ms minus plt_ms).
	LoadOverhead = 200 * time.Millisecond
	// LinkCheckCost is the time of a shaped link's bring-up with its quick self-check (about 10 s:
	// idle RTT probes and a short rate probe per direction, shaping.Check).
	LinkCheckCost = 10 * time.Second
	// BrowserLaunchCost is the launch of one Chromium (about 1.3 s), one per (page, protocol) on
	// every link a process brings up.
	BrowserLaunchCost = 1300 * time.Millisecond
)

// cost holds the parsed facts the cost model needs of an experiment.
type cost struct {
	c     Config
	pages []pages.Spec
	links []shaping.Spec
}

// newCost parses c's page and link specs for the cost model.
func newCost(c Config) (*cost, error) {
	m := &cost{c: c.withDefaults()}
	for _, s := range c.Pages {
		p, err := pages.ParseSpec(s)
		if err != nil {
			return nil, fmt.Errorf("bad page %q: %w", s, err)
		}
		m.pages = append(m.pages, p)
	}
	for _, s := range c.Links {
		l, err := shaping.ParseSpec(s)
		if err != nil {
			return nil, fmt.Errorf("bad link %q: %w", s, err)
		}
		m.links = append(m.links, l)
	}
	return m, nil
}

// EstimateLoad is the cost model's time for one load of a page of pageBytes bytes over link with
// arm a (TCP listeners using TLS version tls, "1.2" or "1.3"), capped by the deadline timeout:
//
//	load = pageBytes x 8 / down rate  +  MinRoundTrips(a, tls) x RTT  +  LoadOverhead
//
// (IdealPLT plus the harness overhead; an unshaped link has no serialization term). A warm load
// makes a priming load first, so it costs two loads plus browser.WarmSettle. Loss, queueing and
// slow start are not modelled: the figure is a lower bound of the network time, good for
// proportions (serialization alone: a 10 MB page takes 16 s at 5 Mbit/s, a 5 KB one 0.4 ms at
// 100 Mbit/s).
func EstimateLoad(pageBytes int64, link shaping.Spec, a Arm, tls string, timeout time.Duration) time.Duration {
	one := IdealPLT(pageBytes, int64(link.Down), link.RTT, MinRoundTrips(a, tls))
	if timeout > 0 && one > timeout {
		one = timeout
	}
	one += LoadOverhead
	if a.Mode == result.Warm {
		return 2*one + browser.WarmSettle
	}
	return one
}

// load returns the estimated time of one load of page p over link l with arm a.
func (m *cost) load(p, l int, a Arm) time.Duration {
	return EstimateLoad(m.pages[p].TotalBytes(), m.links[l], a, m.c.TLS, m.c.Timeout)
}

// block returns the estimated time of one randomized complete block of link l: every (page, arm)
// cell once.
func (m *cost) block(l int) time.Duration {
	var d time.Duration
	for p := range m.pages {
		for _, a := range m.c.Arms {
			d += m.load(p, l, a)
		}
	}
	return d
}

// setup returns the estimated time to bring up link l in one process: its self-check when shaped
// (counted whether or not the check is skipped, so that the shard plan depends only on the
// configuration) and one browser launch per (page, protocol).
func (m *cost) setup(l int) time.Duration {
	var d time.Duration
	if m.links[l].Shaped() {
		d += LinkCheckCost
	}
	protos := map[string]bool{}
	for _, a := range m.c.Arms {
		protos[a.Protocol] = true
	}
	return d + time.Duration(len(m.pages)*len(protos))*BrowserLaunchCost
}

// Estimate returns the cost model's time for every load of c (see EstimateLoad), plus one
// bring-up per link (LinkCheckCost when shaped, BrowserLaunchCost per page and protocol). It
// fails on a page or link spec that does not parse.
func Estimate(c Config) (time.Duration, error) {
	m, err := newCost(c)
	if err != nil {
		return 0, err
	}
	var d time.Duration
	for l := range m.links {
		d += m.setup(l) + time.Duration(m.c.Warmup+m.c.Runs)*m.block(l)
	}
	return d, nil
}

// Shaped reports whether any link of c is shaped: such a link needs network namespaces and TUN
// devices, hence CAP_NET_ADMIN and CAP_SYS_ADMIN (root) today, where "none" needs no privilege.
// It fails on a link spec that does not parse.
func Shaped(c Config) (bool, error) {
	m, err := newCost(c)
	if err != nil {
		return false, err
	}
	for _, l := range m.links {
		if l.Shaped() {
			return true, nil
		}
	}
	return false, nil
}
