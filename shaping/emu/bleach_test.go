package emu

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"
)

// withECN returns a copy of the IP packet b with its ECN field set to ecn (0..3) and, for IPv4,
// its header checksum recomputed in full.
func withECN(b []byte, ecn byte) []byte {
	b = bytes.Clone(b)
	if b[0]>>4 == 4 {
		b[1] = b[1]&^3 | ecn
		binary.BigEndian.PutUint16(b[10:], ipChecksum(b[:20]))
	} else {
		b[1] = b[1]&^0x30 | ecn<<4
	}
	return b
}

// ecnOf is the ECN field of the IP packet b.
func ecnOf(b []byte) byte {
	if b[0]>>4 == 4 {
		return b[1] & 3
	}
	return b[1] >> 4 & 3
}

func TestBleachECNClearsFieldKeepsChecksum(t *testing.T) {
	for _, tc := range []struct {
		name    string
		version int
		ecn     byte
		want    bool
	}{
		{"ipv4-not-ect", 4, 0, false}, {"ipv4-ect1", 4, 1, true}, {"ipv4-ect0", 4, 2, true}, {"ipv4-ce", 4, 3, true},
		{"ipv6-not-ect", 6, 0, false}, {"ipv6-ect1", 6, 1, true}, {"ipv6-ect0", 6, 2, true}, {"ipv6-ce", 6, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			orig := withECN(segment(tc.version, 17, []byte("quic")), tc.ecn)
			if tc.version == 4 {
				orig[1] |= 0xb8 // DSCP EF (46) must survive
				binary.BigEndian.PutUint16(orig[10:], ipChecksum(orig[:20]))
			} else {
				orig[1] |= 0x0a // flow label bits must survive
			}
			b := bytes.Clone(orig)
			if got := bleachECN(b); got != tc.want {
				t.Fatalf("bleachECN = %v, want %v", got, tc.want)
			}
			if ecnOf(b) != 0 {
				t.Fatalf("ECN field %d after bleaching, want 0 (Not-ECT)", ecnOf(b))
			}
			if tc.version == 4 {
				if got, want := binary.BigEndian.Uint16(b[10:12]), ipChecksum(b[:20]); got != want {
					t.Fatalf("IPv4 header checksum %#04x, want %#04x", got, want)
				}
				if b[1]>>2 != 46 {
					t.Fatalf("DSCP %d after bleaching, want 46", b[1]>>2)
				}
			}
			for k := range b {
				if k != 1 && k != 10 && k != 11 && b[k] != orig[k] {
					t.Fatalf("byte %d changed: %#02x -> %#02x", k, orig[k], b[k])
				}
			}
			if tc.version == 6 && b[1]&0x0f != 0x0a {
				t.Fatalf("flow label nibble %#x after bleaching, want 0xa", b[1]&0x0f)
			}
		})
	}
	for _, short := range [][]byte{nil, {0x45, 2}, make([]byte, 39)} {
		if len(short) == 39 {
			short[0], short[1] = 0x60, 0x20
		}
		if bleachECN(short) {
			t.Errorf("bleachECN(%d bytes) = true, want false for a truncated packet", len(short))
		}
	}
}

func TestBleachCountsDeliveredMarks(t *testing.T) {
	// One direction bleaches, the other not: every delivered packet of the bleaching one is
	// Not-ECT and Bleached counts exactly those that were marked; the other keeps its marks.
	const n = 400
	on := newTestPipe(Config{BleachECN: true, Delay: 20 * ms1})
	off := newTestPipe(Config{Delay: 20 * ms1})
	pkts := [][]byte{withECN(segment(4, 17, make([]byte, 1200)), 2), withECN(segment(4, 6, nil), 0), withECN(segment(6, 17, make([]byte, 100)), 3)}
	got := map[*Pipe][4]int{}
	for i := 0; i < n; i++ {
		now := time.Duration(i) * time.Millisecond
		pkt := pkts[i%len(pkts)]
		for _, p := range []*Pipe{on, off} {
			b := p.Buffer()[:len(pkt)]
			copy(b, pkt)
			p.Offer(now, b)
			for out, ok := p.Pop(now); ok; out, ok = p.Pop(now) {
				c := got[p]
				c[ecnOf(out)]++
				got[p] = c
				if out[0]>>4 == 4 && binary.BigEndian.Uint16(out[10:12]) != ipChecksum(out[:20]) {
					t.Fatal("delivered IPv4 packet with a bad header checksum")
				}
				p.Recycle(out)
			}
		}
	}
	con, coff := on.Take(), off.Take()
	if g := got[on]; g[1]+g[2]+g[3] != 0 || int64(g[0]) != con.PacketsOut {
		t.Errorf("bleaching pipe delivered codepoints %v (Not-ECT, ECT(1), ECT(0), CE), want all %d Not-ECT", g, con.PacketsOut)
	}
	delivered := con.PacketsOut
	if delivered != n-20 { // offered one a millisecond, each delivered 20 ms later
		t.Fatalf("delivered %d, want %d", delivered, n-20)
	}
	var wantMarked int64
	for i := 0; i < int(delivered); i++ {
		if ecnOf(pkts[i%len(pkts)]) != 0 {
			wantMarked++
		}
	}
	if con.Bleached != wantMarked {
		t.Errorf("Bleached = %d, want %d (the marked packets among the %d delivered)", con.Bleached, wantMarked, delivered)
	}
	if g := got[off]; int64(g[2]+g[3]) != wantMarked || coff.Bleached != 0 {
		t.Errorf("plain pipe delivered codepoints %v and counted %d bleached, want %d marked and 0", g, coff.Bleached, wantMarked)
	}
}

func TestBleachNoAlloc(t *testing.T) {
	p := NewPipe(Config{Rate: 1e9, Delay: 25 * ms1, QueueBytes: 1 << 20, BufSize: 1500, BleachECN: true})
	data := withECN(segment(4, 17, make([]byte, 1200)), 2)
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
	if c := p.Take(); c.Bleached == 0 || c.Bleached != c.PacketsOut {
		t.Fatalf("bleached %d of %d delivered ECT(0) packets, want all", c.Bleached, c.PacketsOut)
	}
}

// BenchmarkBleach is BenchmarkPipe's 1500-byte packets at 1 Gbit/s, each marked ECT(0) and
// bleached at delivery (BleachECN), against the same pipe without bleaching (sub-benchmarks).
func BenchmarkBleach(b *testing.B) {
	pkt := withECN(segment(4, 17, make([]byte, 1472)), 2)
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "bleach"}[on], func(b *testing.B) {
			p := NewPipe(Config{Rate: 1e9, Delay: 25 * ms1, QueueBytes: 1 << 20, BufSize: 1500, BleachECN: on})
			now := time.Duration(0)
			b.SetBytes(int64(len(pkt)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				now += 12 * time.Microsecond
				buf := p.Buffer()[:len(pkt)]
				copy(buf, pkt)
				p.Offer(now, buf)
				for out, ok := p.Pop(now); ok; out, ok = p.Pop(now) {
					p.Recycle(out)
				}
			}
		})
	}
}
