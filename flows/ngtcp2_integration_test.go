//go:build linux && !race

package flows

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
)

// TestIntegrationNgtcp2Flows runs a QUIC/CUBIC and a QUIC/BBR flow of the ngtcp2 stack together
// through a real 10 Mbit/s, 36 ms link for 6 s (one gtlsserver per controller), then a quic-go
// NewReno flow on the same link, and checks that every flow reports the same counters whatever
// its stack: the controller read back from the server, QUIC v1 and ALPN h3, the sender's
// packets, losses and smoothed RTT, and the emulator's packets and drops of its 5-tuple.
func TestIntegrationNgtcp2Flows(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: skipped with -short")
	}
	testenv.Require(t, server.Ngtcp2Binary)
	l, quicGo := openLink(t, "rate=10mbit,rtt=36ms")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ng, err := NewServer(ctx, l, slog.New(slog.DiscardHandler), server.WithH3Stack(server.StackNgtcp2, ""),
		server.WithNgtcp2BulkCCs("cubic", "bbr"))
	if err != nil {
		t.Fatal(err)
	}
	defer ng.Close()
	if info := ng.Info(); len(info.BulkH3) != 2 || info.BulkH3["bbr"] == "" || info.BulkH3["cubic"] == "" || info.H3Stack != server.StackNgtcp2 {
		t.Fatalf("ngtcp2 bulk servers %v, stack %q: want one per controller", info.BulkH3, info.H3Stack)
	}
	// ceiling is what the link carries of QUIC payload (1452 of 1500 bytes), 1 % over.
	ceiling := 10e6 * 1452 / 1500 * 1.01
	// minSum is what the flows together carry at least: 5 Mbit/s of the 10, loose for a loaded
	// 2-core machine (measured 9.5-9.6 quiet); a flow below 0.2 Mbit/s counts as starved (BBR
	// beside CUBIC in a 1 BDP queue took 8.6 of 9.5 Mbit/s here).
	check := func(name string, recs []*result.Record, want []string) {
		t.Helper()
		if recs == nil {
			return // lost to host stalls (run)
		}
		sum := 0.0
		for i, r := range recs {
			t.Logf("%s flow %d %s: goodput %.3f Mbit/s, sent %d, lost %d, srtt %.1f ms, emulator %d/%d dropped",
				name, i, r.CC, r.GoodputBps/1e6, r.SegmentsOut, r.Retransmits, r.SRTTMs, r.Drops, r.Packets)
			if !r.Valid || r.CC != want[i] || r.ALPN != "h3" || r.QUICVersion != "v1" || r.ObservedProtocol != "h3" {
				t.Errorf("%s flow %d: valid %v (%s), cc %q (want %q), alpn %q, quic %q", name, i, r.Valid, r.InvalidReason, r.CC, want[i], r.ALPN, r.QUICVersion)
			}
			// The sender's view: at least the packets that carried the bytes read (1200-1452 B
			// each), and a smoothed RTT of the link's 36 ms plus at most its queue (1 BDP: 36 ms).
			if r.SegmentsOut < r.Bytes/1500 || r.Retransmits < 0 || r.SRTTMs < 35 || r.SRTTMs > 36+36+10 {
				t.Errorf("%s flow %d: sender counters: %d packets for %d bytes, %d lost, srtt %.1f ms", name, i, r.SegmentsOut, r.Bytes, r.Retransmits, r.SRTTMs)
			}
			if r.LossSource != "emulator" || r.Packets < r.Bytes/1500 {
				t.Errorf("%s flow %d: loss from %q over %d packets", name, i, r.LossSource, r.Packets)
			}
			if r.GoodputFromS > r.SteadyFromS || r.GoodputFromS < r.SteadyFromS-0.5 || r.GoodputToS > r.SteadyToS || r.GoodputToS < r.SteadyToS-0.5 {
				t.Errorf("%s flow %d: goodput measured over [%.3f, %.3f] s, want the reads at or up to 0.5 s before the steady state's edges [%.1f, %.1f]",
					name, i, r.GoodputFromS, r.GoodputToS, r.SteadyFromS, r.SteadyToS)
			}
			if r.GoodputHeldBytes > 0 {
				t.Logf("%s flow %d: no clean read near an edge of the goodput's window: %d bytes held back", name, i, r.GoodputHeldBytes)
			}
			if r.GoodputBps < 0.2e6 {
				t.Errorf("%s flow %d: goodput %.3f Mbit/s: starved", name, i, r.GoodputBps/1e6)
			}
			sum += r.GoodputBps
		}
		if sum > ceiling || sum < 5e6 {
			late := ""
			if e := recs[0].Emulator; e.Late() {
				late = fmt.Sprintf(" (the emulator was late: %.2f ms, bound %.2f ms)", e.LateMs(), e.LateBound())
			}
			t.Errorf("%s: goodputs sum to %.3f Mbit/s: want 5 up to what the link carries (%.3f)%s", name, sum/1e6, ceiling/1e6, late)
		}
	}
	// Runs go through runOnTime (the one retry rule). A
	// goodput over the ceiling in a run the emulator was on time in still fails in check. Seen
	// in make test on 2026-12-06 beside a compile: quic-go alone 9.799 Mbit/s against the 9.777
	// ceiling with the emulator 10.35 ms late. (On 2026-12-04, 9.838 Mbit/s on time: a receive
	// hole's catch-up counted in the steady window; the goodput is now measured between the
	// reads at the window's edges, ReadEdges, which check asserts. In CI on 2026-12-07, 9.793
	// on time: the last read before the window's start fell between the two retransmissions
	// of a loss recovery and held 83 KB back; an edge is now a clean read, one no later read
	// shows to have held bytes back, and the bytes a fallback edge held are logged.)
	run := func(srv *server.Server, c Config) []*result.Record { t.Helper(); return runOnTime(ctx, t, l, srv, c) }
	recs := run(ng, Config{Flows: []Spec{{Protocol: "h3", CC: "cubic"}, {Protocol: "h3", CC: "bbr"}}, Duration: 6 * time.Second})
	check("ngtcp2", recs, []string{"cubic", "bbr"})
	if recs != nil && recs[0].Mix != "h3:cubic+h3:bbr" {
		t.Errorf("mix %q, want h3:cubic+h3:bbr", recs[0].Mix)
	}
	// A controller no process of the server runs gives an invalid record, nothing connected.
	bad, err := Run(ctx, l, ng, Config{Flows: []Spec{{Protocol: "h3", CC: "bbr2"}}, Duration: time.Second})
	if err != nil || len(bad) != 1 || bad[0].Valid || !strings.Contains(bad[0].InvalidReason, `no ngtcp2 server runs congestion control "bbr2"`) {
		t.Fatalf("a controller no process runs: %v, %v; want one invalid record naming it", bad, err)
	}
	recs = run(quicGo, Config{Flows: []Spec{{Protocol: "h3"}}, Duration: 4 * time.Second})
	check("quic-go", recs, []string{server.QUICCCName})
}
