//go:build linux

package shaping

import (
	"bytes"
	"encoding/binary"
)

// Generic receive offload (GRO) on the fast path's write side. The packets one release makes
// due are grouped per flow into super-packets that a TUN device opened with the virtio-net
// header accepts whole, so the receiving stack handles one large segment per flow and write
// instead of one per wire packet. The rules are the kernel's (net/ipv4/tcp_offload.c
// tcp_gro_receive, net/ipv4/udp_offload.c udp_gro_receive; the same ones wireguard-go's
// tun/offload_linux.go follows, checked against tools/testing/selftests/net/gro.c): same flow,
// same IP header fields apart from the length, identifier and checksum, TCP segments in
// sequence with equal options and acknowledgment number, flags ACK (PSH only on the last one),
// every segment of the group's size except a shorter last one, 64 KiB at most.
//
// The coalescer neither copies nor checksums payloads: a group is a list of the emulator's own
// packet buffers, written with one writev(2) as [virtio-net header][first packet][payload of
// each next packet], and the group's transport checksum is left to the kernel
// (VIRTIO_NET_HDR_F_NEEDS_CSUM, i.e. CHECKSUM_PARTIAL, which the receiving stack does not
// verify). That is safe only for packets whose checksums are known to be valid, so every packet
// carries a checksum state (csumState): a packet whose checksum was computed by the read side
// (split from a super-packet, or completed for the kernel) or verified there coalesces; one
// whose checksum is wrong or unknown is always written alone, with its checksum as it came, so
// the receiver still verifies and drops it.

// virtio-net header fields (struct virtio_net_hdr, include/uapi/linux/virtio_net.h).
const (
	vnetFlagNeedsCsum = 1 // VIRTIO_NET_HDR_F_NEEDS_CSUM
	vnetGSOTCPv4      = 1 // VIRTIO_NET_HDR_GSO_TCPV4
	vnetGSOUDPL4      = 5 // VIRTIO_NET_HDR_GSO_UDP_L4
	vnetGSOTCPv6      = 4 // VIRTIO_NET_HDR_GSO_TCPV6
)

// groMaxSegs bounds the packets in one group: UDP_MAX_SEGMENTS was 64 before Linux 6.2
// (include/linux/udp.h), and 64 full-size TCP segments exceed the 64 KiB limit anyway.
const groMaxSegs = 64

// groMaxLen is the largest coalesced packet: the IPv4 total length and IPv6 payload length
// fields are 16 bits.
const groMaxLen = 65535

// groOpenMax bounds the groups still accepting packets at one time; when a packet opens one
// more, the oldest is closed (written as it is, in order).
const groOpenMax = 8

// csumState is what the fast path knows about a packet's transport checksum. It rides in the
// byte just past the packet in its pipe buffer (buffers are one byte longer than the MTU).
type csumState byte

const (
	csumValid   csumState = 0 // computed or verified by the read side: may coalesce
	csumUnknown csumState = 1 // not verified (or verified wrong): written alone, as it came
)

// groKind is a packet's GRO class; groNone packets are written alone.
type groKind uint8

const (
	groNone groKind = iota
	groTCP4
	groTCP6
	groUDP4
	groUDP6
)

// groFlow identifies a transport flow: protocol, addresses and ports.
type groFlow struct {
	v6       bool
	proto    uint8
	src, dst [16]byte
	ports    uint32
}

// groGroup is one write: pkts[0] whole, then the payloads of pkts[1:] appended.
type groGroup struct {
	pkts    [][]byte
	kind    groKind
	flow    groFlow
	iphLen  int
	l4Len   int    // transport header length
	gsoSize int    // payload size of the first packet
	size    int    // IP length of the coalesced packet
	nextSeq uint32 // TCP: sequence number the next segment must carry
	psh     bool   // TCP: PSH seen on the last segment
	closed  bool   // no packet may be appended (short or PSH segment, limit, or a non-candidate of the flow)
}

// coalescer groups the packets of one release; reset between releases. It allocates nothing
// once its slices have grown to the batch size.
type coalescer struct {
	udp    bool // the device accepts UDP GSO (USO, Linux >= 6.2): UDP groups allowed
	groups []groGroup
	open   []int // indices of the groups still accepting packets, oldest first
	hdrs   [][vnetHdrLen]byte
}

// reset empties the coalescer for the next release, keeping its storage.
func (c *coalescer) reset() {
	for i := range c.groups {
		c.groups[i].pkts = c.groups[i].pkts[:0]
	}
	c.groups = c.groups[:0]
	c.open = c.open[:0]
}

// add puts pkt (an IP packet) into a group: appended to the open group of its flow when the GRO
// rules allow, else into a new group. A packet that is no candidate closes its flow's group, so
// nothing of that flow is written ahead of it.
func (c *coalescer) add(pkt []byte, cs csumState) {
	kind, flow, iphLen, l4Len := groParse(pkt, c.udp)
	if kind == groNone || cs != csumValid {
		if flow.proto != 0 {
			c.closeFlow(flow)
		} else {
			c.closeAll()
		}
		c.newGroup(pkt, groNone, flow, iphLen, l4Len)
		return
	}
	for k := len(c.open) - 1; k >= 0; k-- {
		g := &c.groups[c.open[k]]
		if g.flow != flow {
			continue
		}
		if g.append(pkt) {
			if g.closed {
				c.open = append(c.open[:k], c.open[k+1:]...)
			}
			return
		}
		c.open = append(c.open[:k], c.open[k+1:]...)
		break
	}
	c.newGroup(pkt, kind, flow, iphLen, l4Len)
	if g := &c.groups[len(c.groups)-1]; !g.closed {
		if len(c.open) == groOpenMax {
			c.open = append(c.open[:0], c.open[1:]...)
		}
		c.open = append(c.open, len(c.groups)-1)
	}
}

// newGroup starts a group with pkt as its first packet.
func (c *coalescer) newGroup(pkt []byte, kind groKind, flow groFlow, iphLen, l4Len int) {
	if len(c.groups) < cap(c.groups) {
		c.groups = c.groups[:len(c.groups)+1]
	} else {
		c.groups = append(c.groups, groGroup{})
	}
	g := &c.groups[len(c.groups)-1]
	*g = groGroup{pkts: append(g.pkts[:0], pkt), kind: kind, flow: flow, iphLen: iphLen, l4Len: l4Len,
		size: len(pkt), closed: kind == groNone}
	g.gsoSize = len(pkt) - iphLen - l4Len
	if kind == groTCP4 || kind == groTCP6 {
		tcp := pkt[iphLen:]
		g.nextSeq = binary.BigEndian.Uint32(tcp[4:]) + uint32(g.gsoSize)
		g.psh = tcp[13]&tcpFlagPSH != 0
		g.closed = g.psh
	}
}

// closeFlow closes the open group of flow, if any.
func (c *coalescer) closeFlow(flow groFlow) {
	for k, i := range c.open {
		if c.groups[i].flow == flow {
			c.open = append(c.open[:k], c.open[k+1:]...)
			return
		}
	}
}

// closeAll closes every open group.
func (c *coalescer) closeAll() { c.open = c.open[:0] }

// TCP flags (RFC 9293 section 3.1).
const (
	tcpFlagFIN = 0x01
	tcpFlagPSH = 0x08
	tcpFlagACK = 0x10
)

// append adds pkt (of the group's flow and kind) to g if the GRO rules allow; it closes g when
// pkt must be its last packet.
func (g *groGroup) append(pkt []byte) bool {
	head := g.pkts[0]
	payload := len(pkt) - g.iphLen - g.l4Len
	if g.closed || len(g.pkts) >= groMaxSegs || payload <= 0 || payload > g.gsoSize || g.size+payload > groMaxLen {
		return false
	}
	if !ipHeadersMatch(head, pkt, g.flow.v6) {
		return false
	}
	if g.kind == groTCP4 || g.kind == groTCP6 {
		th, tp := head[g.iphLen:], pkt[g.iphLen:]
		if int(tp[12]>>4)*4 != g.l4Len || !bytes.Equal(th[20:g.l4Len], tp[20:g.l4Len]) {
			return false // options differ
		}
		if binary.BigEndian.Uint32(tp[4:]) != g.nextSeq || !bytes.Equal(th[8:12], tp[8:12]) {
			return false // out of sequence, or another acknowledgment number
		}
		g.nextSeq += uint32(payload)
		if tp[13]&tcpFlagPSH != 0 {
			g.psh, g.closed = true, true
		}
	}
	g.pkts = append(g.pkts, pkt)
	g.size += payload
	if payload < g.gsoSize || len(g.pkts) == groMaxSegs {
		g.closed = true
	}
	return true
}

// ipHeadersMatch reports whether the IP headers of a and b may be merged: equal ToS (ECN
// included: a CE mark is never spread or lost), DF and reserved bits and TTL (IPv4); equal
// traffic class and hop limit (IPv6). Addresses and protocol are part of the flow.
func ipHeadersMatch(a, b []byte, v6 bool) bool {
	if v6 {
		return a[0] == b[0] && a[1]>>4 == b[1]>>4 && a[7] == b[7]
	}
	return a[1] == b[1] && a[6]>>5 == b[6]>>5 && a[8] == b[8]
}

// groParse classifies pkt. flow.proto is set for every well-formed TCP or UDP packet (also
// non-candidates, so they can close their flow's group); kind is groNone unless pkt may
// coalesce: IPv4 without options or fragments or IPv6 without extension headers, lengths
// consistent, TCP with flags ACK or ACK|PSH and a payload, UDP (only when udp) with a payload
// and, over IPv4, a checksum (a zero one means none).
func groParse(pkt []byte, udp bool) (kind groKind, flow groFlow, iphLen, l4Len int) {
	if len(pkt) < 20 {
		return
	}
	var proto uint8
	switch pkt[0] >> 4 {
	case 4:
		iphLen = int(pkt[0]&0x0f) * 4
		if iphLen < 20 || len(pkt) < iphLen+8 || int(binary.BigEndian.Uint16(pkt[2:])) != len(pkt) {
			return groNone, groFlow{}, 0, 0
		}
		proto = pkt[9]
		copy(flow.src[:], pkt[12:16])
		copy(flow.dst[:], pkt[16:20])
	case 6:
		iphLen = 40
		if len(pkt) < iphLen+8 || int(binary.BigEndian.Uint16(pkt[4:]))+40 != len(pkt) {
			return groNone, groFlow{}, 0, 0
		}
		proto = pkt[6]
		flow.v6 = true
		copy(flow.src[:], pkt[8:24])
		copy(flow.dst[:], pkt[24:40])
	default:
		return groNone, groFlow{}, 0, 0
	}
	if proto != 6 && proto != 17 {
		return groNone, groFlow{}, 0, 0
	}
	flow.proto = proto
	flow.ports = binary.BigEndian.Uint32(pkt[iphLen:])
	fragment := !flow.v6 && (pkt[6]&0x3f != 0 || pkt[7] != 0)
	if fragment || (!flow.v6 && iphLen != 20) {
		return groNone, flow, iphLen, 0
	}
	if proto == 6 {
		if len(pkt) < iphLen+20 {
			return groNone, flow, iphLen, 0
		}
		l4Len = int(pkt[iphLen+12]>>4) * 4
		flags := pkt[iphLen+13]
		if l4Len < 20 || len(pkt) <= iphLen+l4Len || (flags != tcpFlagACK && flags != tcpFlagACK|tcpFlagPSH) {
			return groNone, flow, iphLen, l4Len
		}
		if flow.v6 {
			return groTCP6, flow, iphLen, l4Len
		}
		return groTCP4, flow, iphLen, l4Len
	}
	l4Len = 8
	if !udp || len(pkt) <= iphLen+8 || int(binary.BigEndian.Uint16(pkt[iphLen+4:])) != len(pkt)-iphLen {
		return groNone, flow, iphLen, l4Len
	}
	if flow.v6 {
		return groUDP6, flow, iphLen, l4Len
	}
	if binary.BigEndian.Uint16(pkt[iphLen+6:]) == 0 {
		return groNone, flow, iphLen, l4Len
	}
	return groUDP4, flow, iphLen, l4Len
}

// finish completes every group for writing: a lone packet gets an all-zero virtio-net header
// (the receiver verifies its checksum); a coalesced group's first packet gets the group's IP
// length (and IPv4 header checksum), UDP length, PSH flag and, in its transport checksum field,
// the pseudo-header sum the kernel completes (CHECKSUM_PARTIAL), and a header with
// NEEDS_CSUM, the GSO type and the segment size. It returns the groups in write order and
// their headers. The first packets are modified in place: call it after the capture has
// copied them.
func (c *coalescer) finish() ([]groGroup, [][vnetHdrLen]byte) {
	for len(c.hdrs) < len(c.groups) {
		c.hdrs = append(c.hdrs, [vnetHdrLen]byte{})
	}
	for i := range c.groups {
		c.hdrs[i] = c.groups[i].finish()
	}
	return c.groups, c.hdrs[:len(c.groups)]
}

// finish rewrites g's first packet for a coalesced write and returns its virtio-net header.
func (g *groGroup) finish() (h [vnetHdrLen]byte) {
	if len(g.pkts) < 2 {
		return h
	}
	p := g.pkts[0]
	iph := g.iphLen
	if g.flow.v6 {
		binary.BigEndian.PutUint16(p[4:], uint16(g.size-iph))
	} else {
		binary.BigEndian.PutUint16(p[2:], uint16(g.size))
		p[10], p[11] = 0, 0
		binary.BigEndian.PutUint16(p[10:], ^csumFold(csumAdd(p[:iph], 0)))
	}
	var gso uint8
	csumOff := 16
	switch g.kind {
	case groTCP4:
		gso = vnetGSOTCPv4
	case groTCP6:
		gso = vnetGSOTCPv6
	default:
		gso, csumOff = vnetGSOUDPL4, 6
		binary.BigEndian.PutUint16(p[iph+4:], uint16(g.size-iph))
	}
	if g.psh {
		p[iph+13] |= tcpFlagPSH
	}
	sum := pseudoHeaderSum(p, iph, g.flow, g.size-iph)
	binary.BigEndian.PutUint16(p[iph+csumOff:], csumFold(sum))
	h[0], h[1] = vnetFlagNeedsCsum, gso
	binary.NativeEndian.PutUint16(h[2:], uint16(iph+g.l4Len))
	binary.NativeEndian.PutUint16(h[4:], uint16(g.gsoSize))
	binary.NativeEndian.PutUint16(h[6:], uint16(iph))
	binary.NativeEndian.PutUint16(h[8:], uint16(csumOff))
	return h
}

// pseudoHeaderSum is the unfolded one's-complement sum of the IPv4 or IPv6 pseudo-header
// (RFC 9293 section 3.1, RFC 768, RFC 8200 section 8.1) of packet p for an upper-layer length
// of l4 bytes.
func pseudoHeaderSum(p []byte, iph int, flow groFlow, l4 int) uint64 {
	var sum uint64
	if flow.v6 {
		sum = csumAdd(p[8:40], 0)
	} else {
		sum = csumAdd(p[12:20], 0)
	}
	return sum + uint64(flow.proto) + uint64(l4)
}

// csumAdd adds b, as big-endian 16-bit words (a trailing odd byte padded with zero), to the
// unfolded one's-complement sum (RFC 1071 section 4.1; 32-bit words summed in 64 bits give
// the same folded result, RFC 1071 section 2(B)).
func csumAdd(b []byte, sum uint64) uint64 {
	for len(b) >= 4 {
		sum += uint64(binary.BigEndian.Uint32(b))
		b = b[4:]
	}
	if len(b) >= 2 {
		sum += uint64(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint64(b[0]) << 8
	}
	return sum
}

// csumFold folds an unfolded sum into 16 bits (end-around carry, RFC 1071 section 4.1).
func csumFold(sum uint64) uint16 {
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return uint16(sum)
}

// l4ChecksumValid reports whether the TCP or UDP checksum of pkt (of the given kind, with an
// IP header of iphLen bytes) verifies: the sum over pseudo-header and segment folds to 0xffff.
func l4ChecksumValid(pkt []byte, flow groFlow, iphLen int) bool {
	sum := csumAdd(pkt[iphLen:], pseudoHeaderSum(pkt, iphLen, flow, len(pkt)-iphLen))
	return csumFold(sum) == 0xffff
}

// readCsumState is the checksum state of a packet the fast path read alone (one packet from
// one read: not split from a super-packet, so its checksum may be the sender's, unverified):
// valid when it is a GRO candidate whose checksum verifies, else unknown. Packets split from a
// super-packet need no check: the split computes their checksums.
func readCsumState(pkt []byte, udp bool) csumState {
	kind, flow, iphLen, _ := groParse(pkt, udp)
	if kind == groNone || !l4ChecksumValid(pkt, flow, iphLen) {
		return csumUnknown
	}
	return csumValid
}
