package emu

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"
)

// segment builds an IP packet (version 4 or 6) carrying a UDP (17) or TCP (6) segment with
// payload, its IPv4 header and transport checksums computed in full.
func segment(version int, proto byte, payload []byte) []byte {
	hl := 8
	if proto == 6 {
		hl = 20
	}
	l4len := hl + len(payload)
	var b []byte
	var l4 int
	if version == 4 {
		b = make([]byte, 20+l4len)
		b[0], b[8], b[9] = 0x45, 64, proto
		binary.BigEndian.PutUint16(b[2:], uint16(len(b)))
		copy(b[12:], []byte{100, 64, 0, 1, 100, 64, 0, 2})
		binary.BigEndian.PutUint16(b[10:], ipChecksum(b[:20]))
		l4 = 20
	} else {
		b = make([]byte, 40+l4len)
		b[0], b[6], b[7] = 0x60, proto, 64
		binary.BigEndian.PutUint16(b[4:], uint16(l4len))
		b[8], b[23], b[24], b[39] = 0xfd, 1, 0xfd, 2
		l4 = 40
	}
	binary.BigEndian.PutUint16(b[l4:], 4433)
	binary.BigEndian.PutUint16(b[l4+2:], 443)
	if proto == 17 {
		binary.BigEndian.PutUint16(b[l4+4:], uint16(l4len))
	} else {
		binary.BigEndian.PutUint32(b[l4+4:], 1000)
		b[l4+12], b[l4+13] = 5<<4, 0x18 // data offset 5 words; PSH, ACK
	}
	copy(b[l4+hl:], payload)
	off := l4 + 16
	if proto == 17 {
		off = l4 + 6
	}
	s := ^l4Sum(b, l4, proto)
	if s == 0 && proto == 17 {
		s = 0xffff
	}
	binary.BigEndian.PutUint16(b[off:], s)
	return b
}

// l4Sum is the ones'-complement sum (RFC 1071) of the pseudo-header and the transport segment
// of b at offset l4: 0xffff when the checksum in the segment is valid.
func l4Sum(b []byte, l4 int, proto byte) uint16 {
	var s uint32
	add := func(p []byte) {
		for i := 0; i < len(p); i += 2 {
			w := uint32(p[i]) << 8
			if i+1 < len(p) {
				w |= uint32(p[i+1])
			}
			s += w
		}
	}
	if b[0]>>4 == 4 {
		add(b[12:20])
	} else {
		add(b[8:40])
	}
	s += uint32(proto) + uint32(len(b)-l4)
	add(b[l4:])
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

func TestCorruptPayloadFlipsOneBitKeepsChecksum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name    string
		version int
		proto   byte
		l4, hl  int
	}{{"ipv4-udp", 4, 17, 20, 8}, {"ipv4-tcp", 4, 6, 20, 20}, {"ipv6-udp", 6, 17, 40, 8}, {"ipv6-tcp", 6, 6, 40, 20}} {
		t.Run(tc.name, func(t *testing.T) {
			for _, n := range []int{1, 2, 7, 1200, 1201} { // odd lengths end in a zero-padded word
				payload := make([]byte, n)
				for i := 0; i < 300; i++ {
					for j := range payload {
						payload[j] = byte(rng.Uint32())
					}
					orig := segment(tc.version, tc.proto, payload)
					if l4Sum(orig, tc.l4, tc.proto) != 0xffff {
						t.Fatal("test packet has a bad checksum")
					}
					b := bytes.Clone(orig)
					if !corruptPayload(b, rng) {
						t.Fatalf("payload of %d bytes not corrupted", n)
					}
					if got := l4Sum(b, tc.l4, tc.proto); got != 0xffff {
						t.Fatalf("payload %d bytes: checksum invalid after corruption (sum %#04x)", n, got)
					}
					start := tc.l4 + tc.hl
					sum := tc.l4 + map[byte]int{17: 6, 6: 16}[tc.proto]
					for k := range b {
						if k == sum || k == sum+1 {
							continue
						}
						if k < start && b[k] != orig[k] {
							t.Fatalf("header byte %d changed: %#02x -> %#02x", k, orig[k], b[k])
						}
					}
					diff := 0
					for k := start; k < len(b); k++ {
						diff += bits.OnesCount8(b[k] ^ orig[k])
					}
					if diff != 1 {
						t.Fatalf("payload %d bytes: %d bits differ, want 1", n, diff)
					}
				}
			}
		})
	}
}

func TestCorruptPayloadPositionsUniform(t *testing.T) {
	// Every bit of a 4-byte payload is hit, each within the binomial 99.99 % bound of n/32.
	const n, nbits = 64000, 32
	rng := rand.New(rand.NewPCG(5, 6))
	orig := segment(4, 17, []byte{1, 2, 3, 4})
	var hits [nbits]int
	for i := 0; i < n; i++ {
		b := bytes.Clone(orig)
		corruptPayload(b, rng)
		x := binary.BigEndian.Uint32(b[28:]) ^ binary.BigEndian.Uint32(orig[28:])
		hits[31-bits.TrailingZeros32(x)]++
	}
	mean, sd := float64(n)/nbits, math.Sqrt(n*(1.0/nbits)*(1-1.0/nbits))
	for i, h := range hits {
		if math.Abs(float64(h)-mean) > 3.891*sd {
			t.Errorf("bit %d hit %d times, want %.0f +- %.0f", i, h, mean, 3.891*sd)
		}
	}
}

func TestCorruptPayloadLeavesOthersAlone(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	noSum := segment(4, 17, []byte("hello"))
	noSum[26], noSum[27] = 0, 0 // an IPv4 UDP datagram sent without a checksum
	frag := segment(4, 17, []byte("hello"))
	frag[6] = 0x20 // more fragments
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"tcp ack without payload", segment(4, 6, nil), false},
		{"udp without payload", segment(6, 17, nil), false},
		{"fragment", frag, false},
		{"icmp", append([]byte{0x45, 0, 0, 28, 0, 0, 0, 0, 64, 1}, make([]byte, 18)...), false},
		{"truncated", segment(4, 6, []byte("abc"))[:30], false},
		{"udp without checksum", noSum, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := bytes.Clone(tc.b)
			if got := corruptPayload(b, rng); got != tc.want {
				t.Fatalf("corrupted %v, want %v", got, tc.want)
			}
			if !tc.want && !bytes.Equal(b, tc.b) {
				t.Fatal("packet changed though not corrupted")
			}
			if tc.want && (b[26] != 0 || b[27] != 0) {
				t.Fatal("a zero UDP checksum (none) was filled in")
			}
		})
	}
}

func TestCorruptShare(t *testing.T) {
	// Seeded: the corrupted count of n packets with payloads lies in the binomial 99 % interval
	// n*p +- 2.576*sqrt(n*p*(1-p)); payload-less packets in between are never corrupted and do
	// not count; each corrupted packet differs from what was offered in exactly one bit.
	const n, prob = 50000, 0.02
	p := newTestPipe(Config{Corrupt: prob, Seed: 42})
	data := segment(4, 17, bytes.Repeat([]byte{0xa5}, 100))
	ack := segment(4, 6, nil)
	changed := 0
	for i := 0; i < n; i++ {
		for _, pkt := range [][]byte{data, ack} {
			b := p.Buffer()[:len(pkt)]
			copy(b, pkt)
			p.Offer(time.Duration(i), b)
			for out, ok := p.Pop(time.Duration(i)); ok; out, ok = p.Pop(time.Duration(i)) {
				d := 0
				for k := range out {
					d += bits.OnesCount8(out[k] ^ pkt[k])
				}
				if len(pkt) == len(ack) && d != 0 {
					t.Fatal("a packet without payload was changed")
				}
				if d > 0 {
					changed++
				}
				p.Recycle(out)
			}
		}
	}
	c := p.Take()
	mean, sd := n*prob, math.Sqrt(n*prob*(1-prob))
	if math.Abs(float64(c.Corrupted)-mean) > 2.576*sd {
		t.Fatalf("corrupted %d of %d, want %v +- %.1f", c.Corrupted, n, mean, 2.576*sd)
	}
	if int64(changed) != c.Corrupted || c.PacketsOut != 2*n {
		t.Fatalf("changed %d, counted %d corrupted, %d out of %d", changed, c.Corrupted, c.PacketsOut, 2*n)
	}
	t.Logf("corrupted %d of %d packets with payload (%.3f %%, configured %.1f %%)", c.Corrupted, n, 100*float64(c.Corrupted)/n, prob*100)
}

func TestCorruptNoAlloc(t *testing.T) {
	p := NewPipe(Config{Rate: 1e9, Delay: 25 * ms1, QueueBytes: 1 << 20, BufSize: 1500, Corrupt: 0.5})
	data := segment(6, 6, make([]byte, 1200))
	now := time.Duration(0)
	step := func() {
		now += 12 * time.Microsecond
		b := p.Buffer()[:len(data)]
		copy(b, data)
		p.Offer(now, b)
		for b, ok := p.Pop(now); ok; b, ok = p.Pop(now) {
			p.Recycle(b)
		}
	}
	for i := 0; i < 10000; i++ {
		step()
	}
	if a := testing.AllocsPerRun(1000, step); a != 0 {
		t.Fatalf("%v allocations per packet in steady state", a)
	}
}
