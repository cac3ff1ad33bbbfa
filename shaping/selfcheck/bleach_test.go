package selfcheck

import (
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// fakeECNWay sends n IPv4/UDP datagrams marked ECT(0) through an in-process emulator pipe of
// cfg (the fake link's one direction) and counts what arrived per ECN codepoint, with the
// pipe's Bleached counter, as the check's receiver and its counters take; no real timing.
func fakeECNWay(name string, bleach bool, n int, cfg emu.Config) ecnWay {
	p := emu.NewPipe(cfg)
	w := ecnWay{name: name, bleach: bleach, sent: n}
	payload := make([]byte, 64)
	for i := range n {
		b := udpPacket(p.Buffer(), payload)
		b[1] = 2 // ECT(0); the checksum is not read on the way
		now := time.Duration(i) * time.Millisecond
		p.Offer(now, b)
		for out, ok := p.Pop(now); ok; out, ok = p.Pop(now) {
			w.count(int(out[1] & 3))
			p.Recycle(out)
		}
	}
	w.bleached = p.Take().Bleached
	return w
}

func TestBleachLine(t *testing.T) {
	bleach, plain, lossy := emu.Config{BleachECN: true}, emu.Config{}, emu.Config{BleachECN: true, Loss: 0.1, Seed: 2}
	for _, tc := range []struct {
		name, link string
		down, up   emu.Config
		lossy      bool
		edit       func(down, up *ecnWay)
		pass       bool
		want       string
	}{
		{"both ways bleached", "rate=10mbit,rtt=30ms,bleach=ecn", bleach, bleach, false, nil, true, "down 100 of 100 received: 100 Not-ECT, 0 ECT(0), 0 ECT(1), 0 CE, 0 unread; 100 bleached"},
		{"down only", "rate=10mbit,rtt=30ms,down.bleach=ecn", bleach, plain, false, nil, true, "up 100 of 100 received: 0 Not-ECT, 100 ECT(0), 0 ECT(1), 0 CE, 0 unread; 0 bleached"},
		{"the link does not bleach", "rate=10mbit,rtt=30ms,bleach=ecn", plain, plain, false, nil, false, "down 100 of 100 received: 0 Not-ECT, 100 ECT(0)"},
		{"the wrong way bleached", "rate=10mbit,rtt=30ms,up.bleach=ecn", bleach, plain, false, nil, false, "down: kept; up: cleared to Not-ECT"},
		{"count does not match", "rate=10mbit,rtt=30ms,bleach=ecn", bleach, bleach, false, func(d, _ *ecnWay) { d.bleached-- }, false, "99 bleached"},
		{"one mark left", "rate=10mbit,rtt=30ms,bleach=ecn", bleach, bleach, false, func(_, u *ecnWay) { u.got[0]--; u.got[2]++; u.bleached-- }, false, "99 Not-ECT, 1 ECT(0)"},
		{"a datagram lost", "rate=10mbit,rtt=30ms,bleach=ecn", bleach, bleach, false, func(d, _ *ecnWay) { d.got[0]--; d.bleached-- }, false, "down 99 of 100 received"},
		{"nothing received", "rate=10mbit,rtt=30ms,loss=10%,bleach=ecn", bleach, bleach, true, func(d, _ *ecnWay) { d.got, d.bleached = [4]int{}, 0 }, false, "down 0 of 100 received"},
		{"lossy link", "rate=10mbit,rtt=30ms,loss=10%,bleach=ecn", lossy, lossy, true, nil, true, "at least one received each way"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testChecker(tc.link, true)
			s, _ := linkspec.Parse(tc.link)
			down := fakeECNWay("down", s.DownImp.BleachECN, bleachCount, tc.down)
			up := fakeECNWay("up", s.UpImp.BleachECN, bleachCount, tc.up)
			if tc.edit != nil {
				tc.edit(&down, &up)
			}
			c.bleachLine(down, up, tc.lossy)
			if len(c.res.Lines) != 1 {
				t.Fatalf("%d lines, want 1", len(c.res.Lines))
			}
			l := c.res.Lines[0]
			t.Logf("%s | %s | %s | %s | pass %v", l.Name, l.Configured, l.Measured, l.Tolerance, l.Pass)
			if l.Pass != tc.pass || !strings.Contains(l.Configured+" | "+l.Measured+" | "+l.Tolerance, tc.want) {
				t.Errorf("pass %v, want %v; want %q in the line", l.Pass, tc.pass, tc.want)
			}
		})
	}
}
