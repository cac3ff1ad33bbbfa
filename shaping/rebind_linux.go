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

// setupNAT gives the link its NAT when the spec asks for one (rebind=): one emu.NAT shared by
// the up forwarder (Outbound) and the down forwarder (Inbound, Restore), seeded from the link's
// seed. For rebind=addr the host routes the two NAT addresses (natAddrs) through the host-side
// TUN device, so the server's answers to them enter the link; the routes go with the device.
func (l *EmuLink) setupNAT() error {
	r := l.spec.Rebind
	if !r.Enabled() {
		return nil
	}
	alt := natAddrs(l.client)
	if r.Mode == emu.RebindAddr {
		dev, err := netlink.LinkByName(l.dev)
		if err != nil {
			return fmt.Errorf("rebind=addr: find device %s: %w", l.dev, err)
		}
		for _, a := range alt {
			rt := &netlink.Route{LinkIndex: dev.Attrs().Index, Dst: prefixNet(a), Scope: netlink.SCOPE_LINK}
			if err := netlink.RouteAdd(rt); err != nil {
				return fmt.Errorf("rebind=addr: route %s to %s: %w", a, l.dev, err)
			}
		}
	}
	seed := l.spec.Seed
	if seed == 0 {
		seed = 1
	}
	nat := emu.NewNAT(r, l.client, alt, seed)
	l.up.natOutbound, l.down.natInbound = nat, nat
	return nil
}
