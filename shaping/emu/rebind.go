package emu

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"sync/atomic"
	"time"
)

// NAT rebinding (the QUIC Interop Runner's rebind-port and rebind-addr scenarios): a NAT at
// the client's edge of the link maps each client UDP port to an outside binding and, at the
// rebind times, moves every binding to a fresh port (RebindPort), or to a fresh port on another
// address (RebindAddr), as a NAT that lost its state would. The client's datagrams leave with
// the binding's source; the server's datagrams to a binding in force are given back the
// client's address and port, and those to a binding no longer in force are dropped (the old
// mapping is gone). Only IPv4 UDP from or to the client's address is touched.
//
// A rebinding takes effect with the client's first datagram at or after its time: until then
// the old bindings stay in force. A NAT that forgot them at the time itself (the Interop
// Runner's ns-3 model) also drops the server's datagrams between that time and the client's
// next datagram; a client that only acknowledges then receives nothing to acknowledge, sends
// nothing, and both ends wait for the idle timeout. Seen here with that model: gtlsclient
// 0.12.1 fetching from quic-go v0.65.0 stopped at 0.9 of 10 MiB (ERR_IDLE_CLOSE) with no
// datagram sent after the rebinding time.

// RebindMode is what a NAT rebinding changes.
type RebindMode uint8

// Rebind modes.
const (
	RebindOff  RebindMode = iota // no NAT
	RebindPort                   // the client's UDP source port
	RebindAddr                   // the client's IPv4 source address and UDP source port
)

// String is the mode's name in a link spec: "off", "port" or "addr".
func (m RebindMode) String() string {
	switch m {
	case RebindPort:
		return "port"
	case RebindAddr:
		return "addr"
	}
	return "off"
}

// Rebind configures a link's NAT rebinding. The zero value is off.
type Rebind struct {
	// Mode is what each rebinding changes (RebindOff: no NAT).
	Mode RebindMode
	// First is the time of the first rebinding from the link's start (> 0).
	First time.Duration
	// Every is the interval between later rebindings; 0 rebinds once, at First.
	Every time.Duration
}

// Enabled reports whether r rebinds at all.
func (r Rebind) Enabled() bool { return r.Mode != RebindOff }

// Epoch is the number of rebindings due by now (0 before First).
func (r Rebind) Epoch(now time.Duration) uint32 {
	switch {
	case !r.Enabled() || now < r.First:
		return 0
	case r.Every <= 0:
		return 1
	}
	return 1 + uint32((now-r.First)/r.Every)
}

// MaxBindings is how many client UDP ports a NAT maps; datagrams of further ports pass
// unchanged (the Interop Runner's cases use one or two).
const MaxBindings = 64

// NAT rewrites the client's datagrams on the way up and restores the server's on the way down
// (see Rebind). Outbound must be called from one goroutine (the up direction's) and
// Inbound/Restore from one other (the down direction's): the bindings are shared through
// atomic words, so neither direction waits for the other, and neither allocates.
type NAT struct {
	cfg    Rebind
	addrs  [3][4]byte // 0: the client's address; 1, 2: the addresses RebindAddr alternates over
	tab    [MaxBindings]atomic.Uint64
	n      atomic.Int32  // entries in use
	live   atomic.Uint32 // the epoch of the bindings in force (0: the identity; written by Outbound)
	epoch  uint32        // the epoch the entries were drawn for (Outbound's goroutine)
	addr   uint8         // the index in addrs of the bindings' address (Outbound's goroutine)
	rng    *rand.Rand    // Outbound's goroutine
	rebind int64         // rebindings made (Outbound's goroutine)
}

// NewNAT returns a NAT for the IPv4 client address client; alt are the two other addresses
// RebindAddr alternates over (unused for RebindPort: they must be routed to the link's host
// side by the caller). seed seeds the choice of ports.
func NewNAT(cfg Rebind, client netip.Addr, alt [2]netip.Addr, seed int64) *NAT {
	n := &NAT{cfg: cfg, rng: rand.New(rand.NewPCG(uint64(seed), 0x6e617400))}
	n.addrs[0] = client.As4()
	n.addrs[1], n.addrs[2] = alt[0].As4(), alt[1].As4()
	return n
}

// Rebinds is the number of rebindings the NAT has made (read by Outbound's goroutine only).
func (n *NAT) Rebinds() int64 { return n.rebind }

// natEntry packs one binding in a word, so the down direction reads it whole: the client's
// port at bit 0, the outside port at 16 and its address index at 32, and the binding it
// replaced (prevOut at 40, its address index at 56; prevAddr 3: none).
func natEntry(addr uint8, outside, inside uint16, prevAddr uint8, prevOut uint16) uint64 {
	return uint64(prevAddr&3)<<56 | uint64(prevOut)<<40 | uint64(addr&3)<<32 | uint64(outside)<<16 | uint64(inside)
}

func unpack(e uint64) (addr uint8, outside, inside uint16) {
	return uint8(e>>32) & 3, uint16(e >> 16), uint16(e)
}

// replaced is the binding e replaced (ok false: none).
func replaced(e uint64) (addr uint8, outside uint16, ok bool) {
	addr = uint8(e>>56) & 3
	return addr, uint16(e >> 40), addr != noAddr
}

// noAddr marks an entry that replaced no binding.
const noAddr = 3

// udp4 locates the UDP header of an unfragmented IPv4 packet b; ok is false for anything else.
func udp4(b []byte) (l4 int, ok bool) {
	l4, _, _, proto, ok := transport(b)
	return l4, ok && proto == 17 && b[0]>>4 == 4
}

// Outbound applies the NAT to a datagram leaving the client at now (the link's clock): when a
// rebinding is due it first moves every binding (reported by rebound), then rewrites pkt's
// source to its port's binding, the IPv4 header checksum and the UDP checksum updated (RFC 1624
// section 3; a UDP checksum of 0, none, stays 0). Packets that are not IPv4 UDP from the
// client's address pass unchanged.
func (n *NAT) Outbound(now time.Duration, pkt []byte) (rebound bool) {
	l4, ok := udp4(pkt)
	if !ok || [4]byte(pkt[12:16]) != n.addrs[0] {
		return false
	}
	if e := n.cfg.Epoch(now); e != n.epoch {
		n.rebindAll(e)
		rebound = true
	}
	port := binary.BigEndian.Uint16(pkt[l4:])
	cnt := int(n.n.Load())
	i := 0
	for ; i < cnt; i++ {
		if _, _, in := unpack(n.tab[i].Load()); in == port {
			break
		}
	}
	if i == cnt {
		if cnt == MaxBindings {
			return rebound
		}
		out := port
		if n.epoch > 0 {
			out = n.freshPort(port)
		}
		n.tab[i].Store(natEntry(n.addr, out, port, noAddr, 0))
		n.n.Store(int32(cnt + 1))
	}
	a, out, _ := unpack(n.tab[i].Load())
	rewrite(pkt, l4, 12, n.addrs[a], l4, out)
	return rebound
}

// rebindAll moves every binding to a fresh port (and, for RebindAddr, to the next address) for
// epoch e.
func (n *NAT) rebindAll(e uint32) {
	n.epoch = e
	n.rebind++
	if n.cfg.Mode == RebindAddr {
		n.addr = n.addr%2 + 1
	}
	for i := range int(n.n.Load()) {
		a, old, in := unpack(n.tab[i].Load())
		n.tab[i].Store(natEntry(n.addr, n.freshPort(old), in, a, old))
	}
	n.live.Store(e)
}

// freshPort draws an outside port in 1024..65535 other than not and than every port a binding
// holds (inside or outside).
func (n *NAT) freshPort(not uint16) uint16 {
	for {
		p := uint16(1024 + n.rng.IntN(65536-1024))
		if p != not && !n.holds(p) {
			return p
		}
	}
}

func (n *NAT) holds(p uint16) bool {
	for i := range int(n.n.Load()) {
		if _, out, in := unpack(n.tab[i].Load()); out == p || in == p {
			return true
		}
	}
	return false
}

// Binding is what Inbound found for a datagram: the client port to restore.
type Binding struct {
	inside uint16
	bound  bool
}

// Inbound looks up the binding of a datagram arriving for the client: b is its binding and
// pass false when it is addressed to a binding in force; b's bound is false (drop it: the NAT
// has forgotten that binding) when it is addressed to the binding a rebinding replaced, or to
// the client's own port of a binding that moved; pass is true for anything else, which the
// NAT leaves alone (not IPv4 UDP, no rebinding made yet, another address, a port of no
// binding: a flow the client never sent on, such as a probe stream from the host). Inbound
// does not change pkt: Restore does.
func (n *NAT) Inbound(pkt []byte) (b Binding, pass bool) {
	l4, ok := udp4(pkt)
	if !ok || n.live.Load() == 0 {
		return Binding{}, true
	}
	dst := [4]byte(pkt[16:20])
	port := binary.BigEndian.Uint16(pkt[l4+2:])
	cnt := int(n.n.Load())
	for i := range cnt {
		if a, out, in := unpack(n.tab[i].Load()); out == port && n.addrs[a] == dst {
			return Binding{inside: in, bound: true}, false
		}
	}
	for i := range cnt {
		e := n.tab[i].Load()
		_, _, in := unpack(e)
		if pa, pout, ok := replaced(e); ok && pout == port && n.addrs[pa] == dst || in == port && dst == n.addrs[0] {
			return Binding{}, false
		}
	}
	return Binding{}, true
}

// Bound reports whether b is a binding in force (false: the datagram is to be dropped).
func (b Binding) Bound() bool { return b.bound }

// Restore gives pkt, found bound by Inbound, the client's address and port as its destination,
// checksums updated as in Outbound.
func (n *NAT) Restore(pkt []byte, b Binding) {
	l4, ok := udp4(pkt)
	if !ok || !b.bound {
		return
	}
	rewrite(pkt, l4, 16, n.addrs[0], l4+2, b.inside)
}

// rewrite sets the IPv4 address at offset aoff (12 source, 16 destination) of pkt to addr and
// the port at offset poff to port, updating the IPv4 header checksum (the address) and the UDP
// checksum at l4+6 (address, part of its pseudo-header, and port) incrementally (RFC 1624).
func rewrite(pkt []byte, l4, aoff int, addr [4]byte, poff int, port uint16) {
	usum := pkt[l4+6 : l4+8]
	noSum := binary.BigEndian.Uint16(usum) == 0
	for w := 0; w < 4; w += 2 {
		old, nw := binary.BigEndian.Uint16(pkt[aoff+w:]), binary.BigEndian.Uint16(addr[w:])
		if old == nw {
			continue
		}
		binary.BigEndian.PutUint16(pkt[aoff+w:], nw)
		updateChecksum(pkt[10:12], old, nw)
		if !noSum {
			updateChecksum(usum, old, nw)
		}
	}
	if old := binary.BigEndian.Uint16(pkt[poff:]); old != port {
		binary.BigEndian.PutUint16(pkt[poff:], port)
		if !noSum {
			updateChecksum(usum, old, port)
		}
	}
	if !noSum && binary.BigEndian.Uint16(usum) == 0 {
		binary.BigEndian.PutUint16(usum, 0xffff) // RFC 768: a computed 0 is sent as all ones
	}
}
