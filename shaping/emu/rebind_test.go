package emu

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

var (
	natClient = netip.MustParseAddr("100.64.0.6")
	natServer = netip.MustParseAddr("100.64.0.5")
	natAlt    = [2]netip.Addr{netip.MustParseAddr("100.64.0.7"), netip.MustParseAddr("100.64.0.4")}
)

// udp4Packet builds an IPv4 UDP datagram src:sport -> dst:dport with payload, both checksums
// computed in full (zero: a UDP checksum of 0, none).
func udp4Packet(src, dst netip.Addr, sport, dport uint16, payload string, zero bool) []byte {
	b := segment(4, 17, []byte(payload))
	s, d := src.As4(), dst.As4()
	copy(b[12:16], s[:])
	copy(b[16:20], d[:])
	binary.BigEndian.PutUint16(b[20:], sport)
	binary.BigEndian.PutUint16(b[22:], dport)
	b[10], b[11] = 0, 0
	binary.BigEndian.PutUint16(b[10:], ipChecksum(b[:20]))
	b[26], b[27] = 0, 0
	if !zero {
		sum := ^l4Sum(b, 20, 17)
		if sum == 0 {
			sum = 0xffff
		}
		binary.BigEndian.PutUint16(b[26:], sum)
	}
	return b
}

// checkSums fails t unless pkt's IPv4 header checksum and UDP checksum (unless 0) are valid.
func checkSums(t *testing.T, what string, pkt []byte) {
	t.Helper()
	if ipChecksum(pkt[:20]) != binary.BigEndian.Uint16(pkt[10:]) {
		t.Errorf("%s: IPv4 header checksum invalid", what)
	}
	if binary.BigEndian.Uint16(pkt[26:]) != 0 && l4Sum(pkt, 20, 17) != 0xffff {
		t.Errorf("%s: UDP checksum invalid", what)
	}
}

func src(pkt []byte) (netip.Addr, uint16) {
	return netip.AddrFrom4([4]byte(pkt[12:16])), binary.BigEndian.Uint16(pkt[20:])
}

func dst(pkt []byte) (netip.Addr, uint16) {
	return netip.AddrFrom4([4]byte(pkt[16:20])), binary.BigEndian.Uint16(pkt[22:])
}

func TestRebindEpoch(t *testing.T) {
	r := Rebind{Mode: RebindPort, First: time.Second, Every: 5 * time.Second}
	for _, c := range []struct {
		now  time.Duration
		want uint32
	}{{0, 0}, {999 * time.Millisecond, 0}, {time.Second, 1}, {5999 * time.Millisecond, 1}, {6 * time.Second, 2}, {11 * time.Second, 3}} {
		if got := r.Epoch(c.now); got != c.want {
			t.Errorf("Epoch(%v) = %d, want %d", c.now, got, c.want)
		}
	}
	once := Rebind{Mode: RebindAddr, First: time.Second}
	if once.Epoch(time.Hour) != 1 {
		t.Errorf("Every 0: Epoch(1h) = %d, want 1", once.Epoch(time.Hour))
	}
	if (Rebind{}).Epoch(time.Hour) != 0 {
		t.Error("off: epoch not 0")
	}
}

func TestNATRebindsAndRestores(t *testing.T) {
	for _, c := range []struct {
		name string
		mode RebindMode
		zero bool
	}{{"port", RebindPort, false}, {"addr", RebindAddr, false}, {"port, no UDP checksum", RebindPort, true}, {"addr, no UDP checksum", RebindAddr, true}} {
		t.Run(c.name, func(t *testing.T) {
			n := NewNAT(Rebind{Mode: c.mode, First: time.Second, Every: 5 * time.Second}, natClient, natAlt, 1)
			up := func(now time.Duration) (netip.Addr, uint16, bool) {
				p := udp4Packet(natClient, natServer, 40000, 443, "quic up", c.zero)
				re := n.Outbound(now, p)
				checkSums(t, "up", p)
				if got := string(p[28:]); got != "quic up" {
					t.Fatalf("payload changed: %q", got)
				}
				a, port := src(p)
				return a, port, re
			}
			down := func(now time.Duration, to netip.Addr, port uint16) (restored, dropped bool) {
				p := udp4Packet(natServer, to, 443, port, "quic down!", c.zero)
				b, pass := n.Inbound(p)
				if pass {
					return false, false
				}
				if !b.Bound() {
					return false, true
				}
				n.Restore(p, b)
				checkSums(t, "down", p)
				if a, pt := dst(p); a != natClient || pt != 40000 {
					t.Errorf("restored to %v:%d, want %v:40000", a, pt, natClient)
				}
				return true, false
			}
			a0, p0, re := up(100 * time.Millisecond)
			if a0 != natClient || p0 != 40000 || re {
				t.Fatalf("before the first rebinding: %v:%d rebound %v, want the client's own 40000", a0, p0, re)
			}
			if r, d := down(500*time.Millisecond, natClient, 40000); r || d {
				t.Errorf("before the first rebinding a reply was restored %v dropped %v, want it passed", r, d)
			}
			a1, p1, re := up(1500 * time.Millisecond)
			if !re || p1 == 40000 || p1 < 1024 {
				t.Fatalf("after 1s: port %d rebound %v, want a fresh port >= 1024", p1, re)
			}
			if (a1 != natClient) != (c.mode == RebindAddr) {
				t.Errorf("mode %v: address %v after the rebinding", c.mode, a1)
			}
			if r, _ := down(1600*time.Millisecond, a1, p1); !r {
				t.Error("a reply to the binding in force was not restored")
			}
			if _, d := down(1600*time.Millisecond, natClient, 40000); !d {
				t.Error("a reply to the old binding was not dropped")
			}
			if r, _ := down(6100*time.Millisecond, a1, p1); !r {
				t.Error("a reply to the binding in force past the rebinding time, before the client's next datagram, was not restored")
			}
			a2, p2, re := up(6200 * time.Millisecond)
			if !re || p2 == p1 || (c.mode == RebindAddr && (a2 == a1 || a2 == natClient)) {
				t.Errorf("second rebinding: %v:%d after %v:%d (rebound %v)", a2, p2, a1, p1, re)
			}
			if r, _ := down(6300*time.Millisecond, a2, p2); !r {
				t.Error("a reply to the second binding was not restored")
			}
			if _, d := down(6300*time.Millisecond, a1, p1); !d {
				t.Error("a reply to the first binding, replaced, was not dropped")
			}
			if r, d := down(6300*time.Millisecond, natClient, 7777); r || d {
				t.Error("a datagram to a port of no binding was not left alone")
			}
			if n.Rebinds() != 2 {
				t.Errorf("Rebinds() = %d, want 2", n.Rebinds())
			}
		})
	}
}

func TestNATLeavesOthersAlone(t *testing.T) {
	n := NewNAT(Rebind{Mode: RebindAddr, First: time.Millisecond}, natClient, natAlt, 1)
	tcp := segment(4, 6, []byte("tcp"))
	v6 := segment(6, 17, []byte("v6"))
	other := udp4Packet(natServer, natServer, 1, 2, "not the client's", false)
	for name, p := range map[string][]byte{"tcp": tcp, "ipv6": v6, "other source": other} {
		before := string(p)
		n.Outbound(time.Second, p)
		if _, pass := n.Inbound(p); !pass {
			t.Errorf("%s: Inbound did not pass it", name)
		}
		if string(p) != before {
			t.Errorf("%s: changed", name)
		}
	}
}

func TestNATNoAlloc(t *testing.T) {
	n := NewNAT(Rebind{Mode: RebindAddr, First: time.Millisecond, Every: time.Millisecond}, natClient, natAlt, 1)
	orig := udp4Packet(natClient, natServer, 40000, 443, "x", false)
	p := append([]byte(nil), orig...)
	q := udp4Packet(natServer, natClient, 443, 40000, "y", false)
	now := time.Duration(0)
	allocs := testing.AllocsPerRun(1000, func() {
		now += 300 * time.Microsecond
		copy(p, orig)
		n.Outbound(now, p)
		copy(q[16:20], p[12:16])
		copy(q[22:24], p[20:22])
		if b, pass := n.Inbound(q); !pass && b.Bound() {
			n.Restore(q, b)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per datagram pair, want 0", allocs)
	}
}

// BenchmarkNAT measures one client datagram rewritten (Outbound) and one server datagram
// restored (Inbound, Restore) with 4 bindings, rebinding every 1000 datagrams.
func BenchmarkNAT(b *testing.B) {
	n := NewNAT(Rebind{Mode: RebindAddr, First: time.Millisecond, Every: time.Millisecond}, natClient, natAlt, 1)
	var orig [4][]byte
	for i := range orig {
		orig[i] = udp4Packet(natClient, natServer, uint16(40000+i), 443, "x", false)
		n.Outbound(0, append([]byte(nil), orig[i]...))
	}
	p := make([]byte, len(orig[0]))
	q := udp4Packet(natServer, natClient, 443, 40000, "y", false)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		copy(p, orig[i%4])
		n.Outbound(time.Duration(i)*time.Microsecond, p)
		copy(q[16:20], p[12:16])
		copy(q[22:24], p[20:22])
		if bd, pass := n.Inbound(q); !pass && bd.Bound() {
			n.Restore(q, bd)
		}
	}
}
