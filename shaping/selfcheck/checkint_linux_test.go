package selfcheck

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/internal/linktest"
)

// TestIntegrationCheck runs the quick check on carlucci2015 and logs the figures (no timed
// assertions: the machine may be loaded); it asserts the harness works and that nothing was
// dropped outside the model.
func TestIntegrationCheck(t *testing.T) {
	linktest.NeedRoot(t)
	l := openLink(t, "carlucci2015")
	res, err := Run(context.Background(), l, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range res.Lines {
		t.Logf("%-45s %-28s %-20s %-35s %v", line.Name, line.Configured, line.Measured, line.Tolerance, line.Pass)
		if strings.HasPrefix(line.Name, "emulator faults") || strings.HasPrefix(line.Name, "random-loss") {
			if !line.Pass {
				t.Errorf("%s: %s", line.Name, line.Measured)
			}
		}
	}
	if res.DownBps <= 0 || res.UpBps <= 0 || res.RTTMedianMs <= 0 {
		t.Fatalf("missing measurements: %+v", res)
	}
}

// TestIntegrationQueueBound fills the down queue with a TCP bulk transfer and checks the model
// bound on the emulator's own counters: no packet waited longer than queue/rate.
func TestIntegrationQueueBound(t *testing.T) {
	linktest.NeedRoot(t)
	l := openLink(t, "rate=10mbit,rtt=20ms,queue=25000B")
	c := &checker{l: l, spec: l.Spec(), quick: true}
	s, r, err := c.tcpPair(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	go sendUntilError(s)
	go drain(r)
	l.TakeCounters()
	bps := goodput(context.Background(), s, time.Second, 0)
	s.Close()
	r.Close()
	e := l.TakeCounters()
	bound := quantity.Ms(c.qDelay(true))
	t.Logf("goodput %.3f Mbit/s; down queue delay p50/p99/max %.2f/%.2f/%.2f ms (bound %.2f); drops queue %d other %d",
		bps/1e6, e.Down.QueueDelayP50Ms, e.Down.QueueDelayP99Ms, e.Down.QueueDelayMaxMs, bound, e.Down.DropsQueue, e.Down.DropsOther)
	if e.Down.QueueDelayMaxMs > bound {
		t.Errorf("queue delay max %.3f ms > queue/rate %.3f ms", e.Down.QueueDelayMaxMs, bound)
	}
	if e.Down.DropsLoss+e.Up.DropsLoss+e.Down.DropsOther+e.Up.DropsOther != 0 {
		t.Errorf("unintended drops: %+v", e)
	}
}

func TestIntegrationParallelLinks(t *testing.T) {
	linktest.NeedRoot(t)
	a, b := openLink(t, "rtt=10ms"), openLink(t, "rtt=30ms")
	if a.HostAddr() == b.HostAddr() || a.Namespace() == b.Namespace() {
		t.Fatalf("links share addresses or namespace: %v %v", a.HostAddr(), b.HostAddr())
	}
	for _, l := range []shaping.Link{a, b} {
		c := &checker{l: l, spec: l.Spec()}
		rtts, err := c.probeRTT(context.Background(), 5, 0, nil)
		if err != nil || len(rtts) != 5 {
			t.Fatalf("%s: %v %v", l.Spec().Input, rtts, err)
		}
		t.Logf("%s: RTTs %v", l.Spec().Input, rtts)
	}
}
