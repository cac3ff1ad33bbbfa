package capture

import (
	"net/netip"
	"testing"
)

// ipv4 builds a minimal IPv4 packet (20-byte header) with the given protocol and ports.
func ipv4(proto uint8, src, dst string, sport, dport uint16, ihl int) []byte {
	p := make([]byte, ihl+8)
	p[0] = 0x40 | byte(ihl/4)
	p[9] = proto
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	copy(p[12:], s[:])
	copy(p[16:], d[:])
	p[ihl], p[ihl+1], p[ihl+2], p[ihl+3] = byte(sport>>8), byte(sport), byte(dport>>8), byte(dport)
	return p
}

func TestParseFlowKey(t *testing.T) {
	srv, cli := netip.MustParseAddrPort("100.64.0.1:443"), netip.MustParseAddrPort("100.64.0.2:50000")
	cases := []struct {
		name string
		pkt  []byte
		down bool
		want FlowKey
		ok   bool
	}{
		{"tcp down", ipv4(6, "100.64.0.1", "100.64.0.2", 443, 50000, 20), true, FlowKey{6, srv, cli}, true},
		{"tcp up", ipv4(6, "100.64.0.2", "100.64.0.1", 50000, 443, 20), false, FlowKey{6, srv, cli}, true},
		{"udp with options", ipv4(17, "100.64.0.1", "100.64.0.2", 443, 50000, 24), true, FlowKey{17, srv, cli}, true},
		{"icmp", ipv4(1, "100.64.0.1", "100.64.0.2", 0, 0, 20), true, FlowKey{}, false},
		{"ipv6", append([]byte{0x60}, make([]byte, 60)...), true, FlowKey{}, false},
		{"truncated", ipv4(6, "100.64.0.1", "100.64.0.2", 443, 50000, 20)[:22], true, FlowKey{}, false},
		{"empty", nil, true, FlowKey{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, ok := ParseFlowKey(c.pkt, c.down)
			if ok != c.ok || k != c.want {
				t.Fatalf("ParseFlowKey = %+v, %v; want %+v, %v", k, ok, c.want, c.ok)
			}
		})
	}
}

func TestFlowCounter(t *testing.T) {
	c := NewFlowCounter()
	down := ipv4(6, "100.64.0.1", "100.64.0.2", 443, 50000, 20)
	up := ipv4(6, "100.64.0.2", "100.64.0.1", 50000, 443, 20)
	other := ipv4(17, "100.64.0.1", "100.64.0.2", 443, 50001, 20)
	c.Observe(down, true, false)
	c.Observe(down, true, true)
	c.Observe(down, true, false)
	c.Observe(up, false, false)
	c.Observe(other, true, true)
	c.Observe([]byte{1, 2, 3}, true, true) // not IPv4: ignored
	k, _ := ParseFlowKey(down, true)
	d, u := c.Counts(k)
	if d != (FlowCounts{Packets: 3, Bytes: 84, Drops: 1}) || u != (FlowCounts{Packets: 1, Bytes: 28}) {
		t.Fatalf("counts down %+v up %+v", d, u)
	}
	k2, _ := ParseFlowKey(other, true)
	if d, _ := c.Counts(k2); d.Drops != 1 || d.Packets != 1 {
		t.Fatalf("other flow %+v", d)
	}
}
