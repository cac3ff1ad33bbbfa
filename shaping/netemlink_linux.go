package shaping

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/netem"
	"github.com/vishvananda/netlink"
)

// NetemLink is the netem backend's Link: a veth pair whose two ends carry netem qdiscs.
type NetemLink struct {
	spec      linkspec.Spec
	cfg       netem.Config
	runner    netem.Runner
	log       *slog.Logger
	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
	base      [2]netlink.LinkStatistics
	qdiscs    []string
}

var _ Link = (*NetemLink)(nil)

// netemMissing reports whether the kernel has no sch_netem (netem.Available).
func netemMissing() bool { return netem.Available() != nil }

// needNetem fails with ErrNetemUnavailable (wrapped, naming the link) when the commands would
// run on this kernel (runner nil) and available (netem.Available) says it has no sch_netem; a
// recording runner needs no kernel module.
func needNetem(spec linkspec.Spec, runner netem.Runner, available func() error) error {
	if runner == nil && available() != nil {
		return fmt.Errorf("open link %s: %w", spec.Input, ErrNetemUnavailable)
	}
	return nil
}

// openNetem checks for sch_netem first (needNetem: failing at once with ErrNetemUnavailable),
// then builds the namespace and runs netem.Build; on error everything is removed.
func openNetem(ctx context.Context, spec linkspec.Spec, o options) (Link, error) {
	if err := needNetem(spec, o.runner, netem.Available); err != nil {
		return nil, err
	}
	if o.runner == nil {
		o.runner = netem.ExecRunner{}
	}
	if err := checkPrivileges(); err != nil {
		return nil, err
	}
	cleanStale(o.logger)
	ns, dev, n := linkNames()
	host, client := allocAddrs(n)
	cfg, err := NetemConfig(spec, ns, dev, host, client)
	if err != nil {
		return nil, fmt.Errorf("open link %s: %w", spec.Input, err)
	}
	l := &NetemLink{spec: spec, cfg: cfg, runner: o.runner, log: o.logger, closed: make(chan struct{})}
	if err := newNamedNS(ns, func() error { return setupClientNS(o.tcpBufMax) }); err != nil {
		return nil, errors.Join(fmt.Errorf("open link %s: %w", spec.Input, err), deleteNamedNS(ns))
	}
	for _, argv := range netem.Build(l.cfg) {
		err := l.runner.Run(ctx, argv)
		if err != nil && slices.Contains(argv, "ethtool") {
			l.log.Warn("could not turn offloads off; netem may see merged packets", "err", err)
			continue
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("open link %s: %w", spec.Input, err), l.Close())
		}
	}
	if out, ok := l.runner.(netem.Outputter); ok {
		for _, argv := range netem.Show(l.cfg) {
			b, err := out.Output(ctx, argv)
			if err != nil {
				return nil, errors.Join(fmt.Errorf("open link %s: %w", spec.Input, err), l.Close())
			}
			end := "host " + l.cfg.HostDev + " (down): "
			if slices.Contains(argv, "-n") {
				end = "client " + l.cfg.ClientDev + " (up): "
			}
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				l.qdiscs = append(l.qdiscs, end+strings.TrimSpace(line))
			}
		}
	}
	l.base = l.stats()
	closeOnDone(ctx, l.closed, l.Close)
	return l, nil
}

// Qdiscs is the kernel's view of the link's qdisc trees once built ("tc qdisc show" of each
// end, one line per qdisc prefixed with the end), for the record; nil when the runner does not
// return output (tests).
func (l *NetemLink) Qdiscs() []string { return l.qdiscs }

// OpenReference opens a reference pair for the link check: a second veth pair between the
// host and the link's namespace with no qdisc, its host end named like a link's (so that a
// later start removes it after a crash), its client end "pltlab1", with permanent neighbour
// entries and no IPv6 link-local address as on the link (netem.Build), so neither pair resolves a
// neighbour during the check; Close removes it.
func (l *NetemLink) OpenReference(ctx context.Context) (Reference, error) {
	_, dev, k := linkNames()
	host, client := allocAddrs(k)
	r := &netemRef{ns: l.cfg.Namespace, dev: dev, host: host}
	hostMAC, clientMAC := netem.EndMAC(host), netem.EndMAC(client)
	for _, argv := range [][]string{
		{"ip", "link", "add", dev, "address", hostMAC, "type", "veth", "peer", "name", refClientDev, "address", clientMAC, "netns", r.ns},
		{"ip", "link", "set", dev, "addrgenmode", "none"},
		{"ip", "addr", "add", host.String() + "/32", "peer", client.String() + "/32", "dev", dev},
		{"ip", "link", "set", dev, "up"},
		{"ip", "neigh", "replace", client.String(), "lladdr", clientMAC, "dev", dev, "nud", "permanent"},
		{"ip", "-n", r.ns, "addr", "add", client.String() + "/32", "peer", host.String() + "/32", "dev", refClientDev},
		{"ip", "-n", r.ns, "link", "set", refClientDev, "up"},
		{"ip", "-n", r.ns, "neigh", "replace", host.String(), "lladdr", hostMAC, "dev", refClientDev, "nud", "permanent"},
	} {
		if err := (netem.ExecRunner{}).Run(ctx, argv); err != nil {
			return nil, errors.Join(fmt.Errorf("reference pair: %w", err), r.Close())
		}
	}
	return r, nil
}

// refClientDev is the reference pair's client end, in the link's namespace.
const refClientDev = "pltlab1"

// netemRef is a reference veth pair (see OpenReference).
type netemRef struct {
	ns, dev string
	host    netip.Addr
}

func (r *netemRef) HostAddr() netip.Addr { return r.host }

func (r *netemRef) Delay(ctx context.Context, d time.Duration) error {
	us := strconv.FormatInt(d.Microseconds(), 10) + "us"
	for _, argv := range [][]string{
		{"tc", "qdisc", "replace", "dev", r.dev, "root", "netem", "delay", us},
		{"tc", "-n", r.ns, "qdisc", "replace", "dev", refClientDev, "root", "netem", "delay", us},
	} {
		if err := (netem.ExecRunner{}).Run(ctx, argv); err != nil {
			return fmt.Errorf("reference pair: %w", err)
		}
	}
	return nil
}

func (r *netemRef) Close() error {
	link, err := netlink.LinkByName(r.dev)
	if err != nil {
		return nil // never created, or already gone
	}
	return netlink.LinkDel(link)
}

// Namespace is the client namespace's name.
func (l *NetemLink) Namespace() string { return l.cfg.Namespace }

// HostDev is the host end of the veth pair.
func (l *NetemLink) HostDev() string { return l.cfg.HostDev }

// ClientDev is the client end's device name (in Namespace).
func (l *NetemLink) ClientDev() string { return l.cfg.ClientDev }

// HostAddr is the host end's address.
func (l *NetemLink) HostAddr() netip.Addr { return l.cfg.HostAddr }

// ClientAddr is the client end's address.
func (l *NetemLink) ClientAddr() netip.Addr { return l.cfg.ClientAddr }

// Spec is the link's spec.
func (l *NetemLink) Spec() linkspec.Spec { return l.spec }

// stats reads the host end's interface counters (down = its transmit side, up = its receive).
func (l *NetemLink) stats() [2]netlink.LinkStatistics {
	var s [2]netlink.LinkStatistics
	if link, err := netlink.LinkByName(l.cfg.HostDev); err == nil && link.Attrs().Statistics != nil {
		s[0] = *link.Attrs().Statistics
	}
	return s
}

// TakeCounters returns packet and byte counts and drops from the host end's interface counters
// since the previous call (netem's queueing delays are not observable: those fields stay 0).
func (l *NetemLink) TakeCounters() *result.Emulator {
	now := l.stats()
	prev := l.base[0]
	l.base = now
	cur := now[0]
	return &result.Emulator{
		Down: result.Direction{PacketsOut: int64(cur.TxPackets - prev.TxPackets), BytesOut: int64(cur.TxBytes - prev.TxBytes),
			DropsQueue: int64(cur.TxDropped - prev.TxDropped)},
		Up: result.Direction{PacketsOut: int64(cur.RxPackets - prev.RxPackets), BytesOut: int64(cur.RxBytes - prev.RxBytes)},
	}
}

// Close removes the veth pair and the namespace. It is idempotent.
func (l *NetemLink) Close() error {
	l.closeOnce.Do(func() {
		var errs []error
		for _, argv := range netem.Teardown(l.cfg) {
			errs = append(errs, l.runner.Run(context.Background(), argv))
		}
		errs = append(errs, deleteNamedNS(l.cfg.Namespace))
		l.closeErr = errors.Join(errs...)
		close(l.closed)
	})
	return l.closeErr
}

// QdiscStats reads the counters of both ends' qdiscs (netem.Stats, host end first); it fails
// when the runner returns no output (tests) or tc's output cannot be parsed.
func (l *NetemLink) QdiscStats(ctx context.Context) ([]netem.QdiscStats, error) {
	out, ok := l.runner.(netem.Outputter)
	if !ok {
		return nil, fmt.Errorf("qdisc counters: the runner returns no output")
	}
	var all []netem.QdiscStats
	for i, argv := range netem.Stats(l.cfg) {
		b, err := out.Output(ctx, argv)
		if err != nil {
			return nil, fmt.Errorf("qdisc counters: %w", err)
		}
		qs, err := netem.ParseStats(b)
		if err != nil {
			return nil, fmt.Errorf("qdisc counters: %w", err)
		}
		for j := range qs {
			qs[j].Dev = []string{l.cfg.HostDev, l.cfg.ClientDev}[i]
		}
		all = append(all, qs...)
	}
	return all, nil
}
