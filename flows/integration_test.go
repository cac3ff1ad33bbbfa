package flows

import (
	"context"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
)

// TestIntegrationTwoFlows runs two CUBIC flows over h1 through a real emulated 10 Mbit/s, 20 ms
// link for 8 s (root) and checks goodput, utilization, Jain's index, loss attribution and the
// queueing-delay series against sane bounds (the machine is shared: bounds are loose).
func TestIntegrationTwoFlows(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped with -short")
	}
	l, srv := openLink(t, "rate=10mbit,rtt=20ms")
	specs := []Spec{{Protocol: "h1", CC: "cubic"}, {Protocol: "h1", CC: "cubic"}}
	recs := runOnTime(context.Background(), t, l, srv, Config{Flows: specs, Duration: 8 * time.Second, Experiment: "it"})
	if recs == nil {
		return // lost to host stalls (runOnTime)
	}
	rate := 10e6
	sum := 0.0
	for i, r := range recs {
		t.Logf("flow %d: goodput %.3f Mbit/s, loss %.4f (%d/%d), util %.4f, ip util %.4f, jain %.4f, converge %v s",
			i, r.GoodputBps/1e6, r.LossRatio, r.Drops, r.Packets, r.Utilization, r.IPUtilization, r.Jain, *r.ConvergeS)
		if !r.Valid || r.CC != "cubic" || r.ALPN != "http/1.1" {
			t.Fatalf("flow %d: valid %v (%s), cc %q, alpn %q", i, r.Valid, r.InvalidReason, r.CC, r.ALPN)
		}
		if r.GoodputBps < 0.2*rate || r.GoodputBps > 0.8*rate {
			t.Errorf("flow %d: goodput %.3f Mbit/s outside 2..8 of a 10 Mbit/s link shared by two", i, r.GoodputBps/1e6)
		}
		if r.LossSource != "emulator" || r.Packets < 1000 || r.Drops > r.Packets/10 {
			t.Errorf("flow %d: loss from %q, %d drops of %d packets", i, r.LossSource, r.Drops, r.Packets)
		}
		sum += r.GoodputBps
	}
	r := recs[0]
	if sum > rate*1448/1500*1.01 {
		t.Errorf("goodputs sum to %.3f Mbit/s, more than the link can carry", sum/1e6)
	}
	// Loose lower bounds: on a loaded 2-core machine the emulator itself gets starved (measured
	// 0.89 at load average 20; 0.95 quiet). The upper bounds are physics: 1448/1500 of the rate.
	if r.Utilization < 0.7 || r.Utilization > 0.97 || r.IPUtilization < 0.72 || r.IPUtilization > 1.01 {
		t.Errorf("utilization %.4f (IP %.4f): want 0.7..0.97 (IP 0.72..1.01)", r.Utilization, r.IPUtilization)
	}
	if r.Jain < 0.8 || r.Jain > 1 || r.Jain != recs[1].Jain {
		t.Errorf("Jain %.4f / %.4f: want the same value >= 0.8 on both", r.Jain, recs[1].Jain)
	}
	qMax := 0.0
	for _, q := range r.QueueDelayMaxMs {
		qMax = max(qMax, q)
	}
	bound := float64(r.Link.QueueBytes) * 8 / rate * 1000 // the 1 BDP droptail queue drains in 20 ms
	if len(r.QueueDelayMs) != len(r.Series) || qMax <= 0 || qMax > bound+1 {
		t.Errorf("queueing delay: %d bins (want %d), max %.2f ms (bound %.2f ms)", len(r.QueueDelayMs), len(r.Series), qMax, bound)
	}
}

// TestIntegrationH2H3 runs an h2 and an h3 flow together on carlucci2015 for 5 s and checks that
// both negotiated their protocol, that h3 reports quic-go's NewReno and QUIC v1, and that the
// emulator attributed packets to both (UDP and TCP 5-tuples).
func TestIntegrationH2H3(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped with -short")
	}
	l, srv := openLink(t, "carlucci2015")
	specs := []Spec{{Protocol: "h2", CC: "reno"}, {Protocol: "h3", CC: server.QUICCCName}}
	recs := runOnTime(context.Background(), t, l, srv, Config{Flows: specs, Duration: 5 * time.Second})
	if recs == nil {
		return // lost to host stalls (runOnTime)
	}
	want := []struct{ alpn, cc, quic string }{{"h2", "reno", ""}, {"h3", "newreno", "v1"}}
	for i, r := range recs {
		if !r.Valid || r.ALPN != want[i].alpn || r.CC != want[i].cc || r.QUICVersion != want[i].quic {
			t.Errorf("flow %d: valid %v (%s), alpn %q, cc %q, quic %q; want %+v", i, r.Valid, r.InvalidReason, r.ALPN, r.CC, r.QUICVersion, want[i])
		}
		if r.LossSource != "emulator" || r.Packets < 100 || r.Bytes < 200_000 {
			t.Errorf("flow %d: loss from %q over %d packets, %d bytes", i, r.LossSource, r.Packets, r.Bytes)
		}
	}
	// Upper bound, physics: the packet-level ceiling 1448/1500 = 0.965 of the rate, plus what the
	// 1 BDP queue (18750 B, 50 ms at 3 Mbit/s) can drain into a steady window of at least 3 s
	// (5 s less the skipped start): 0.05/3 = 0.017, so 0.982; 0.99 leaves rounding. Lower bound
	// as TestIntegrationTwoFlows: a starved emulator on a loaded 2-core machine (0.89 measured at
	// load average 20), 0.7.
	if recs[0].Kind != result.KindFlow || recs[0].Utilization < 0.7 || recs[0].Utilization > 0.99 {
		t.Errorf("kind %q, utilization %.3f: want 0.7..0.99", recs[0].Kind, recs[0].Utilization)
	}
}
