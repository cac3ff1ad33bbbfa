package shaping

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os/exec"
	"strings"
	"sync"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// VethLink is an unshaped kernel path: a veth pair between the host namespace and a client
// namespace, with no emulator and no qdisc of pltlab's (the kernel's own forwarding, as a
// dedicated cable between two hosts). Its segmentation offloads (TSO, GSO, GRO) are on, as the
// kernel sets them, until SetOffloads turns them off. Its Spec is the unshaped spec
// (Shaper "veth").
type VethLink struct {
	ns, hostDev  string
	host, client netip.Addr
	closeOnce    sync.Once
	closeErr     error
	closed       chan struct{}
}

var _ Link = (*VethLink)(nil)

// vethClientDev names the client end inside its namespace.
const vethClientDev = "veth0"

// OpenVeth creates a client namespace joined to the host by a veth pair with MTU 1500 and the
// namespace's TCP buffers raised to tcpBufMax bytes (0: DefaultTCPBufMax). It needs root; on
// any error everything created so far is removed. The link is closed when ctx is cancelled.
func OpenVeth(ctx context.Context, tcpBufMax int) (*VethLink, error) {
	if err := checkPrivileges(); err != nil {
		return nil, err
	}
	if tcpBufMax <= 0 {
		tcpBufMax = DefaultTCPBufMax
	}
	cleanStale(slog.Default())
	ns, dev, n := linkNames()
	host, client := allocAddrs(n)
	l := &VethLink{ns: ns, hostDev: dev, host: host, client: client, closed: make(chan struct{})}
	if err := l.setup(tcpBufMax); err != nil {
		return nil, errors.Join(fmt.Errorf("open veth link: %w", err), l.Close())
	}
	closeOnDone(ctx, l.closed, l.Close)
	return l, nil
}

func (l *VethLink) setup(tcpBufMax int) error {
	if err := newNamedNS(l.ns, func() error { return setupClientNS(tcpBufMax) }); err != nil {
		return err
	}
	h, err := netns.GetFromName(l.ns)
	if err != nil {
		return fmt.Errorf("open namespace %s: %w", l.ns, err)
	}
	defer h.Close()
	// The peer is created inside the namespace, so its name never meets the host's devices.
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: l.hostDev, MTU: linkspec.DefaultMTU}, PeerName: vethClientDev,
		PeerNamespace: netlink.NsFd(h)}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("add veth %s: %w", l.hostDev, err)
	}
	if err := writeSysctl("net/ipv6/conf/"+l.hostDev+"/disable_ipv6", "1"); err != nil {
		return err
	}
	if err := configureDev(l.hostDev, linkspec.DefaultMTU, l.host, l.client); err != nil {
		return err
	}
	return inNamespace(l.ns, func() error { return configureDev(vethClientDev, linkspec.DefaultMTU, l.client, l.host) })
}

// SetOffloads turns TSO, GSO and GRO on or off on both veth ends (`ethtool -K DEV tso X gso X
// gro X`); the error names the ethtool output when ethtool is missing or refuses.
func (l *VethLink) SetOffloads(ctx context.Context, on bool) error {
	v := "off"
	if on {
		v = "on"
	}
	for _, argv := range [][]string{
		{"ethtool", "-K", l.hostDev, "tso", v, "gso", v, "gro", v},
		{"ip", "netns", "exec", l.ns, "ethtool", "-K", vethClientDev, "tso", v, "gso", v, "gro", v},
	} {
		if out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// Namespace is the client namespace's name.
func (l *VethLink) Namespace() string { return l.ns }

// HostAddr is the host end's address (100.64.x.1).
func (l *VethLink) HostAddr() netip.Addr { return l.host }

// ClientAddr is the client end's address in the namespace.
func (l *VethLink) ClientAddr() netip.Addr { return l.client }

// Spec is the unshaped spec with Shaper ShaperVeth and MTU 1500.
func (l *VethLink) Spec() linkspec.Spec {
	return linkspec.Spec{Input: ShaperVeth, Shaper: ShaperVeth, MTU: linkspec.DefaultMTU}
}

// TakeCounters returns nil: the kernel path has no emulator counters.
func (l *VethLink) TakeCounters() *result.Emulator { return nil }

// Close deletes the veth pair and the namespace. It is idempotent.
func (l *VethLink) Close() error {
	l.closeOnce.Do(func() {
		var errs []error
		if link, err := netlink.LinkByName(l.hostDev); err == nil {
			errs = append(errs, netlink.LinkDel(link))
		}
		errs = append(errs, deleteNamedNS(l.ns))
		l.closeErr = errors.Join(errs...)
		close(l.closed)
	})
	return l.closeErr
}
