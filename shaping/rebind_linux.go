package shaping

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/pltlab/pltlab/shaping/capture"
	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/vishvananda/netlink"
)

// natOut (up forwarder) rewrites a packet read from the client by the link's NAT, if it has
// one, before the pipe and the capture see it, and counts each rebinding.
func (f *forwarder) natOut(now time.Duration, pkt []byte) {
	if f.natOutbound != nil && f.natOutbound.Outbound(now, pkt) {
		f.pipe.CountRebind()
	}
}

// natIn (every forwarder, as it releases pkt) shows the capture the packet as it left the
// link and, with a NAT on the down direction, gives it back the client's address and port; a
// packet to a binding no longer in force is captured as dropped, counted (Counters.Unbound),
// recycled, and natIn reports false: not to be written.
func (f *forwarder) natIn(now time.Duration, pkt []byte) bool {
	if f.natInbound == nil {
		f.tapped(now, pkt, capture.TapExit)
		return true
	}
	b, pass := f.natInbound.Inbound(pkt)
	if !pass && !b.Bound() {
		f.tapped(now, pkt, capture.TapDropUnbound)
		f.pipe.CountUnbound()
		f.pipe.Recycle(pkt)
		return false
	}
	f.tapped(now, pkt, capture.TapExit)
	if !pass {
		f.natInbound.Restore(pkt, b)
	}
	return true
}

// natAddrs are the two addresses rebind=addr alternates over for the client address client:
// the other two addresses of its /30 block (allocAddrs reserves the whole block for one link,
// host .1, client .2), so no other link uses them.
func natAddrs(client netip.Addr) [2]netip.Addr {
	a := client.As4()
	lo, hi := a, a
	lo[3], hi[3] = a[3]&^3, a[3]|3
	return [2]netip.Addr{netip.AddrFrom4(hi), netip.AddrFrom4(lo)}
}

// setupNAT routes the two NAT addresses of rebind=addr (natAddrs) through the host-side TUN
// device, so the server's answers to them enter the link; the routes go with the device. The
// NAT itself (newNAT) lives with the forwarders.
func (l *EmuLink) setupNAT() error {
	if l.spec.Rebind.Mode != emu.RebindAddr {
		return nil
	}
	dev, err := netlink.LinkByName(l.dev)
	if err != nil {
		return fmt.Errorf("rebind=addr: find device %s: %w", l.dev, err)
	}
	for _, a := range natAddrs(l.client) {
		rt := &netlink.Route{LinkIndex: dev.Attrs().Index, Dst: prefixNet(a), Scope: netlink.SCOPE_LINK}
		if err := netlink.RouteAdd(rt); err != nil {
			return fmt.Errorf("rebind=addr: route %s to %s: %w", a, l.dev, err)
		}
	}
	return nil
}

// newNAT is the link's NAT when r asks for one (rebind=), nil otherwise: one emu.NAT shared by
// the up forwarder (Outbound) and the down forwarder (Inbound, Restore), for the client address
// client and the alternatives alt, seeded with seed (natSeed).
func newNAT(r emu.Rebind, client netip.Addr, alt [2]netip.Addr, seed int64) *emu.NAT {
	if !r.Enabled() {
		return nil
	}
	return emu.NewNAT(r, client, alt, seed)
}

// natSeed is the NAT's seed for the link seed s (1 when the link has none).
func natSeed(s int64) int64 {
	if s == 0 {
		return 1
	}
	return s
}
