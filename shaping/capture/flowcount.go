package capture

import (
	"encoding/binary"
	"net/netip"
	"sync"
)

// FlowKey identifies a transport flow through a link by its IPv4 5-tuple, oriented from the
// host side: Server is the host-side endpoint (the source of down packets), Client the
// namespace-side one.
type FlowKey struct {
	// Proto is the IP protocol number: 6 (TCP) or 17 (UDP).
	Proto uint8
	// Server and Client are the two endpoints' address and port.
	Server, Client netip.AddrPort
}

// IP protocol numbers (IANA).
const (
	ProtoTCP uint8 = 6
	ProtoUDP uint8 = 17
)

// FlowCounts are one flow's packets in one direction of the emulator, whole IP packets.
type FlowCounts struct {
	// Packets and Bytes count the packets offered to the link (before loss and the queue).
	Packets, Bytes int64
	// Drops counts those dropped by the model (random loss or a full droptail queue).
	Drops int64
}

// FlowCounter attributes the emulator's packets and drops to flows by 5-tuple (see
// FlowCounting). It is safe for concurrent use.
type FlowCounter struct {
	mu       sync.Mutex
	down, up map[FlowKey]*FlowCounts
	// remote, when set (Remote), answers Counts: the counts are kept in another process.
	remote func(k FlowKey) (down, up FlowCounts)
}

// NewFlowCounter returns an empty FlowCounter.
func NewFlowCounter() *FlowCounter {
	return &FlowCounter{down: map[FlowKey]*FlowCounts{}, up: map[FlowKey]*FlowCounts{}}
}

// Counts returns the counts of flow k since the counter was attached, per direction.
func (c *FlowCounter) Counts(k FlowKey) (down, up FlowCounts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.remote != nil {
		return c.remote(k)
	}
	if d := c.down[k]; d != nil {
		down = *d
	}
	if u := c.up[k]; u != nil {
		up = *u
	}
	return down, up
}

// FlowCount is one flow's counts in one direction, as All lists them.
type FlowCount struct {
	Key    FlowKey
	Counts FlowCounts
}

// All lists the counts of every flow seen, per direction, in no particular order.
func (c *FlowCounter) All() (down, up []FlowCount) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.down {
		down = append(down, FlowCount{k, *v})
	}
	for k, v := range c.up {
		up = append(up, FlowCount{k, *v})
	}
	return down, up
}

// Load replaces c's counts with down and up (as All lists them) and ends Remote: a link whose
// emulator runs in a process of its own copies the counts kept there into c when it detaches c.
func (c *FlowCounter) Load(down, up []FlowCount) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remote = nil
	c.down, c.up = map[FlowKey]*FlowCounts{}, map[FlowKey]*FlowCounts{}
	for _, f := range down {
		c.down[f.Key] = &f.Counts
	}
	for _, f := range up {
		c.up[f.Key] = &f.Counts
	}
}

// Remote makes Counts answer from src, which reads the counts kept in the emulator's own
// process, until Load.
func (c *FlowCounter) Remote(src func(k FlowKey) (down, up FlowCounts)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remote = src
}

// Observe counts one IPv4 packet of the down (host to client) or up direction; dropped says
// whether the model dropped it. Packets that are not IPv4 TCP or UDP are ignored.
func (c *FlowCounter) Observe(pkt []byte, down, dropped bool) {
	k, ok := ParseFlowKey(pkt, down)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.up
	if down {
		m = c.down
	}
	fc := m[k]
	if fc == nil {
		fc = &FlowCounts{}
		m[k] = fc
	}
	fc.Packets++
	fc.Bytes += int64(len(pkt))
	if dropped {
		fc.Drops++
	}
}

// ParseFlowKey reads the 5-tuple of an IPv4 TCP or UDP packet (RFC 791 header, ports in the
// first four bytes of the transport header). down says the packet goes host to client, so its
// source is the server. ok is false for anything else or a truncated header.
func ParseFlowKey(pkt []byte, down bool) (k FlowKey, ok bool) {
	if len(pkt) < 20 || pkt[0]>>4 != 4 {
		return k, false
	}
	ihl := int(pkt[0]&0x0f) * 4
	proto := pkt[9]
	if (proto != ProtoTCP && proto != ProtoUDP) || ihl < 20 || len(pkt) < ihl+4 {
		return k, false
	}
	src := netip.AddrPortFrom(netip.AddrFrom4([4]byte(pkt[12:16])), binary.BigEndian.Uint16(pkt[ihl:]))
	dst := netip.AddrPortFrom(netip.AddrFrom4([4]byte(pkt[16:20])), binary.BigEndian.Uint16(pkt[ihl+2:]))
	if down {
		return FlowKey{Proto: proto, Server: src, Client: dst}, true
	}
	return FlowKey{Proto: proto, Server: dst, Client: src}, true
}

// FlowCounting is implemented by links that can attribute their packets and drops to flows
// (the emu shaper). CountFlows attaches c to both directions (nil detaches); while attached,
// every packet offered to the link is parsed and counted, which costs a map update per packet.
type FlowCounting interface {
	CountFlows(c *FlowCounter)
}
