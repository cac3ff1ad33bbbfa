//go:build linux

package shaping

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// pktOpts describes a test packet.
type pktOpts struct {
	udp     bool
	v6      bool
	sport   uint16
	seq     uint32
	ack     uint32
	flags   byte
	tos     byte
	payload int
	fill    byte
	tsval   uint32 // TCP: a timestamp option with this value when non-zero
}

// testPacket builds an IPv4 or IPv6 TCP or UDP packet with valid checksums.
func testPacket(o pktOpts) []byte {
	iph, l4 := 20, 20
	if o.v6 {
		iph = 40
	}
	if o.udp {
		l4 = 8
	} else if o.tsval != 0 {
		l4 = 32
	}
	n := iph + l4 + o.payload
	p := make([]byte, n, n+1)
	proto := byte(6)
	if o.udp {
		proto = 17
	}
	if o.v6 {
		p[0] = 0x60 | o.tos>>4
		p[1] = o.tos << 4
		binary.BigEndian.PutUint16(p[4:], uint16(n-40))
		p[6], p[7] = proto, 64
		p[8+15], p[24+15] = 1, 2
	} else {
		p[0], p[1] = 0x45, o.tos
		binary.BigEndian.PutUint16(p[2:], uint16(n))
		p[6] = 0x40 // DF
		p[8], p[9] = 64, proto
		copy(p[12:], []byte{100, 64, 0, 1, 100, 64, 0, 2})
		binary.BigEndian.PutUint16(p[10:], ^csumFold(csumAdd(p[:20], 0)))
	}
	t := p[iph:]
	binary.BigEndian.PutUint16(t[0:], o.sport)
	binary.BigEndian.PutUint16(t[2:], 443)
	for i := iph + l4; i < n; i++ {
		p[i] = o.fill + byte(i)
	}
	_, flow, _, _ := groParse(p, true)
	if o.udp {
		binary.BigEndian.PutUint16(t[4:], uint16(n-iph))
		binary.BigEndian.PutUint16(t[6:], ^csumFold(csumAdd(t, pseudoHeaderSum(p, iph, flow, n-iph))))
		return p
	}
	binary.BigEndian.PutUint32(t[4:], o.seq)
	binary.BigEndian.PutUint32(t[8:], o.ack)
	t[12] = byte(l4/4) << 4
	t[13] = o.flags
	binary.BigEndian.PutUint16(t[14:], 512)
	if o.tsval != 0 {
		copy(t[20:], []byte{1, 1, 8, 10})
		binary.BigEndian.PutUint32(t[24:], o.tsval)
	}
	binary.BigEndian.PutUint16(t[16:], ^csumFold(csumAdd(t, pseudoHeaderSum(p, iph, flow, n-iph))))
	return p
}

// segs builds n in-sequence TCP segments of size bytes of payload from seq.
func segs(o pktOpts, n int) [][]byte {
	var out [][]byte
	for range n {
		out = append(out, testPacket(o))
		o.seq += uint32(o.payload)
	}
	return out
}

// wire is what one group's writev puts on the device: the header, the first packet, the
// payloads of the others.
func wire(g groGroup, h [vnetHdrLen]byte) []byte {
	b := append([]byte{}, h[:]...)
	b = append(b, g.pkts[0]...)
	for _, p := range g.pkts[1:] {
		b = append(b, p[g.iphLen+g.l4Len:]...)
	}
	return b
}

// TestCoalesceTCP checks a run of in-sequence segments becomes one super-packet whose bytes are
// exactly what the kernel's GRO would build: the first header with the new length, a valid
// IPv4 header checksum, the pseudo-header sum in the TCP checksum field, the concatenated
// payloads, and a virtio-net header for TCPv4 GSO with the segment size.
func TestCoalesceTCP(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		in := segs(pktOpts{v6: v6, sport: 5000, seq: 1000, ack: 7, flags: tcpFlagACK, payload: 1448, tsval: 99}, 4)
		last := testPacket(pktOpts{v6: v6, sport: 5000, seq: 1000 + 4*1448, ack: 7, flags: tcpFlagACK | tcpFlagPSH, payload: 300, tsval: 99})
		in = append(in, last)
		var want []byte
		for _, p := range in {
			want = append(want, p[len(p)-payloadLen(p):]...)
		}
		var c coalescer
		for _, p := range in {
			c.add(p, csumValid)
		}
		groups, hdrs := c.finish()
		if len(groups) != 1 || len(groups[0].pkts) != 5 {
			t.Fatalf("v6 %v: %d groups, want 1 of 5 packets", v6, len(groups))
		}
		b := wire(groups[0], hdrs[0])
		h, p := b[:vnetHdrLen], b[vnetHdrLen:]
		iph, gso := 20, byte(vnetGSOTCPv4)
		if v6 {
			iph, gso = 40, vnetGSOTCPv6
		}
		size := iph + 32 + 4*1448 + 300
		if len(p) != size {
			t.Fatalf("v6 %v: coalesced %d bytes, want %d", v6, len(p), size)
		}
		if h[0] != vnetFlagNeedsCsum || h[1] != gso || binary.NativeEndian.Uint16(h[2:]) != uint16(iph+32) ||
			binary.NativeEndian.Uint16(h[4:]) != 1448 || binary.NativeEndian.Uint16(h[6:]) != uint16(iph) ||
			binary.NativeEndian.Uint16(h[8:]) != 16 {
			t.Errorf("v6 %v: virtio-net header % x", v6, h)
		}
		if v6 {
			if got := binary.BigEndian.Uint16(p[4:]); int(got) != size-40 {
				t.Errorf("payload length %d, want %d", got, size-40)
			}
		} else {
			if got := binary.BigEndian.Uint16(p[2:]); int(got) != size {
				t.Errorf("total length %d, want %d", got, size)
			}
			if csumFold(csumAdd(p[:20], 0)) != 0xffff {
				t.Errorf("IPv4 header checksum invalid")
			}
		}
		if p[iph+13] != tcpFlagACK|tcpFlagPSH {
			t.Errorf("v6 %v: flags %#x, want ACK|PSH from the last segment", v6, p[iph+13])
		}
		_, flow, _, _ := groParse(p, true)
		if got, want := binary.BigEndian.Uint16(p[iph+16:]), csumFold(pseudoHeaderSum(p, iph, flow, size-iph)); got != want {
			t.Errorf("v6 %v: TCP checksum field %#x, want the pseudo-header sum %#x", v6, got, want)
		}
		if !bytes.Equal(p[iph+32:], want) {
			t.Errorf("v6 %v: payload differs from the segments' payloads in order", v6)
		}
	}
}

// payloadLen is a test packet's payload length.
func payloadLen(p []byte) int {
	_, _, iph, l4 := groParse(p, true)
	return len(p) - iph - l4
}

// TestCoalesceSeparates checks every case where the GRO rules keep packets apart, by the sizes
// of the groups written, in order.
func TestCoalesceSeparates(t *testing.T) {
	base := pktOpts{sport: 5000, seq: 1, ack: 7, flags: tcpFlagACK, payload: 1000}
	with := func(f func(*pktOpts)) pktOpts { o := base; f(&o); return o }
	next := func(o pktOpts, k int) pktOpts { o.seq += uint32(k * base.payload); return o }
	cases := []struct {
		name string
		pkts []pktOpts
		udp  bool
		want []int // packets per group, in write order
	}{
		{"in sequence", []pktOpts{base, next(base, 1), next(base, 2)}, false, []int{3}},
		{"sequence gap", []pktOpts{base, next(base, 2), next(base, 3)}, false, []int{1, 2}},
		{"retransmission", []pktOpts{base, next(base, 1), base}, false, []int{2, 1}},
		{"CE mark differs", []pktOpts{base, with(func(o *pktOpts) { o.seq += 1000; o.tos = 3 })}, false, []int{1, 1}},
		{"ack differs", []pktOpts{base, with(func(o *pktOpts) { o.seq += 1000; o.ack = 8 })}, false, []int{1, 1}},
		{"options differ", []pktOpts{with(func(o *pktOpts) { o.tsval = 1 }), with(func(o *pktOpts) { o.seq += 1000; o.tsval = 2 })}, false, []int{1, 1}},
		{"PSH ends a group", []pktOpts{with(func(o *pktOpts) { o.flags |= tcpFlagPSH }), next(base, 1), next(base, 2)}, false, []int{1, 2}},
		{"short segment ends a group", []pktOpts{base, with(func(o *pktOpts) { o.seq += 1000; o.payload = 500 }), with(func(o *pktOpts) { o.seq += 1500 })}, false, []int{2, 1}},
		{"TCP larger after smaller", []pktOpts{with(func(o *pktOpts) { o.payload = 500 }), with(func(o *pktOpts) { o.seq += 500 })}, false, []int{1, 1}},
		{"FIN is written after the data before it", []pktOpts{base, with(func(o *pktOpts) { o.seq += 1000; o.flags |= tcpFlagFIN }), next(base, 2)}, false, []int{1, 1, 1}},
		{"pure ACK closes its flow", []pktOpts{base, with(func(o *pktOpts) { o.seq += 1000; o.payload = 0 }), next(base, 1)}, false, []int{1, 1, 1}},
		{"flows interleaved", []pktOpts{base, with(func(o *pktOpts) { o.sport = 6000 }), next(base, 1), with(func(o *pktOpts) { o.sport = 6000; o.seq += 1000 })}, false, []int{2, 2}},
		{"UDP without USO", []pktOpts{{udp: true, sport: 5000, payload: 1200}, {udp: true, sport: 5000, payload: 1200}}, false, []int{1, 1}},
		{"UDP with USO, short last", []pktOpts{{udp: true, sport: 5000, payload: 1200}, {udp: true, sport: 5000, payload: 1200}, {udp: true, sport: 5000, payload: 500}, {udp: true, sport: 5000, payload: 1200}}, true, []int{3, 1}},
		{"UDP larger after smaller", []pktOpts{{udp: true, sport: 5000, payload: 1000}, {udp: true, sport: 5000, payload: 1200}}, true, []int{1, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := coalescer{udp: tc.udp}
			for _, o := range tc.pkts {
				c.add(testPacket(o), csumValid)
			}
			groups, _ := c.finish()
			var got []int
			for _, g := range groups {
				got = append(got, len(g.pkts))
			}
			if !equalInts(got, tc.want) {
				t.Errorf("groups %v, want %v", got, tc.want)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCoalesceLimits checks a group never exceeds the 64 KiB IP length or groMaxSegs packets.
func TestCoalesceLimits(t *testing.T) {
	var c coalescer
	for _, p := range segs(pktOpts{sport: 1, seq: 1, flags: tcpFlagACK, payload: 1448}, 50) {
		c.add(p, csumValid)
	}
	groups, _ := c.finish()
	if len(groups) != 2 || len(groups[0].pkts) != 45 || groups[0].size > groMaxLen {
		t.Fatalf("%d groups, first %d packets of %d bytes; want 45 packets (65200 bytes) then 5", len(groups), len(groups[0].pkts), groups[0].size)
	}
	c.reset()
	for _, p := range segs(pktOpts{sport: 1, seq: 1, flags: tcpFlagACK, payload: 100}, 70) {
		c.add(p, csumValid)
	}
	if groups, _ = c.finish(); len(groups) != 2 || len(groups[0].pkts) != groMaxSegs {
		t.Fatalf("%d groups, first of %d packets; want %d then 6", len(groups), len(groups[0].pkts), groMaxSegs)
	}
}

// TestCorruptedNeverCoalesced checks a packet whose checksum does not verify is recognised at
// read (readCsumState) and written alone and unchanged, with no NEEDS_CSUM header, between the
// valid segments around it, so the receiving stack verifies its checksum and drops it instead
// of accepting a checksum the kernel would compute over the corrupted bytes.
func TestCorruptedNeverCoalesced(t *testing.T) {
	in := segs(pktOpts{sport: 5000, seq: 1, flags: tcpFlagACK, payload: 1000}, 3)
	if st := readCsumState(in[1], false); st != csumValid {
		t.Fatalf("valid segment read as %v", st)
	}
	in[1][100] ^= 0x40 // a bit flipped in the payload
	st := readCsumState(in[1], false)
	if st != csumUnknown {
		t.Fatalf("corrupted segment read as %v, want unknown", st)
	}
	orig := append([]byte{}, in[1]...)
	var c coalescer
	c.add(in[0], csumValid)
	c.add(in[1], st)
	c.add(in[2], csumValid)
	groups, hdrs := c.finish()
	if len(groups) != 3 {
		t.Fatalf("%d groups, want 3 (the corrupted one alone)", len(groups))
	}
	if hdrs[1] != [vnetHdrLen]byte{} || !bytes.Equal(groups[1].pkts[0], orig) {
		t.Errorf("corrupted packet written with header % x or changed", hdrs[1])
	}
	// A UDP datagram read alone over IPv4 with no checksum (zero) is never coalesced either.
	u := testPacket(pktOpts{udp: true, sport: 5000, payload: 100})
	u[20+6], u[20+7] = 0, 0
	if st := readCsumState(u, true); st != csumUnknown {
		t.Errorf("UDP without checksum read as %v", st)
	}
}

// TestCoalescerNoAlloc checks a release allocates nothing once the coalescer is warm.
func TestCoalescerNoAlloc(t *testing.T) {
	in := segs(pktOpts{sport: 5000, seq: 1, flags: tcpFlagACK, payload: 1448}, 16)
	scratch := make([][]byte, len(in))
	for i, p := range in {
		scratch[i] = make([]byte, len(p))
	}
	var c coalescer
	run := func() { // finish rewrites the first packet: start from the originals each time
		for i, p := range in {
			copy(scratch[i], p)
			c.add(scratch[i], csumValid)
		}
		if len(c.groups) != 1 {
			t.Fatalf("%d groups, want 1", len(c.groups))
		}
		c.finish()
		c.reset()
	}
	run()
	if groups, _ := c.finish(); len(groups) != 0 {
		t.Fatal("reset left groups")
	}
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("%.0f allocations per release, want 0", n)
	}
}
