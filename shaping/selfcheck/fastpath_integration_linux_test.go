package selfcheck

import (
	"context"
	"testing"
	"time"

	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/internal/linktest"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// TestIntegrationFastPath opens one link on each TUN path and moves 1.5 s of TCP bulk data down
// it (about 4 s in all): the link reports the path it was asked for (this kernel accepts the
// offloads), carries data, drops nothing outside its model, and its model saw wire packets
// only: no packet larger than the MTU entered it (a super-packet would be one). At 1 Gbit/s
// the fast path's writes carry coalesced groups (more than 2 packets per write on average;
// the plain path writes one each), and the receiving TCP stack accepted them (data arrived).
func TestIntegrationFastPath(t *testing.T) {
	linktest.NeedRoot(t)
	for _, offload := range []bool{true, false} {
		s, err := linkspec.Parse("rate=1gbit,rtt=10ms")
		if err != nil {
			t.Fatal(err)
		}
		l, err := shaping.Open(context.Background(), s, shaping.WithOffload(offload))
		if err != nil {
			t.Fatal(err)
		}
		el := l.(*shaping.EmuLink)
		if el.Offload() != offload {
			t.Errorf("offload %v: link runs offload=%v", offload, el.Offload())
		}
		c := &checker{l: l, spec: s}
		snd, rcv, err := c.tcpPair(context.Background(), true)
		if err != nil {
			l.Close()
			t.Fatal(err)
		}
		go sendUntilError(snd)
		go drain(rcv)
		bps := goodput(context.Background(), snd, 1500*time.Millisecond, 500*time.Millisecond)
		snd.Close()
		rcv.Close()
		e := l.TakeCounters()
		if per := el.PacketsPerWrite(); offload && per <= 2 {
			t.Errorf("fast path: %.2f packets per write, want > 2 (GRO groups)", per)
		} else if offload {
			t.Logf("fast path: %.1f packets per write", per)
		}
		l.Close()
		d := e.Down
		if bps <= 0 || d.PacketsOut == 0 {
			t.Errorf("offload %v: goodput %.0f bit/s, %d packets out", offload, bps, d.PacketsOut)
			continue
		}
		if d.DropsOther+e.Up.DropsOther != 0 {
			t.Errorf("offload %v: %d + %d drops outside the model", offload, d.DropsOther, e.Up.DropsOther)
		}
		// Every packet in is at most one MTU: the mean cannot exceed it.
		if mean := float64(d.BytesIn) / float64(d.PacketsIn); mean > float64(s.MTU) {
			t.Errorf("offload %v: mean packet %.0f bytes > MTU %d: super-packets reached the model", offload, mean, s.MTU)
		}
		t.Logf("offload %v: %.1f Mbit/s, %d packets in, mean %.0f B", offload, bps/1e6, d.PacketsIn, float64(d.BytesIn)/float64(d.PacketsIn))
	}
}
