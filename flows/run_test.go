package flows

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// openLink opens spec (skipping without root for shaped links) and a flows server on it.
func openLink(t testing.TB, spec string) (shaping.Link, *server.Server) {
	t.Helper()
	sp, err := linkspec.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Shaped() && os.Geteuid() != 0 {
		t.Skip("emulated links need root")
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := slog.New(slog.DiscardHandler)
	l, err := shaping.Open(ctx, sp, shaping.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	srv, err := NewServer(ctx, l, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return l, srv
}

// TestRunLoopback runs one flow of every protocol for a short time over the unshaped loopback
// link (no root needed) and checks the protocol checks, the counts and the record's shape.
func TestRunLoopback(t *testing.T) {
	l, srv := openLink(t, "none")
	specs := []Spec{{Protocol: "h1", CC: "cubic"}, {Protocol: "h2", CC: "reno"}, {Protocol: "h3", CC: server.QUICCCName}}
	recs, err := Run(context.Background(), l, srv, Config{Flows: specs, Duration: 1500 * time.Millisecond, Experiment: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	alpn := map[string]string{"h1": "http/1.1", "h2": "h2", "h3": "h3"}
	for i, r := range recs {
		if !r.IsFlow() || r.Kind != result.KindFlow || !r.Valid {
			t.Fatalf("flow %d: kind %q valid %v (%s)", i, r.Kind, r.Valid, r.InvalidReason)
		}
		if r.ObservedProtocol != specs[i].Protocol || r.TLSVersion != "1.3" || r.Starved {
			t.Fatalf("flow %d: observed %q, TLS %q, starved %v", i, r.ObservedProtocol, r.TLSVersion, r.Starved)
		}
		if r.Protocol != specs[i].Protocol || r.CC != specs[i].CC || r.ALPN != alpn[r.Protocol] {
			t.Fatalf("flow %d: protocol %s cc %s alpn %s, want %v", i, r.Protocol, r.CC, r.ALPN, specs[i])
		}
		if r.Bytes <= 0 || r.GoodputBps <= 0 || len(r.Series) != 15 || r.BinMs != 100 {
			t.Fatalf("flow %d: bytes %d goodput %v, %d bins of %v ms", i, r.Bytes, r.GoodputBps, len(r.Series), r.BinMs)
		}
		if r.FlowIndex != i || r.Flows != 3 || r.Mix != "h1:cubic+h2:reno+h3:newreno" || r.ConvergeS == nil {
			t.Fatalf("flow %d: index %d of %d, mix %q", i, r.FlowIndex, r.Flows, r.Mix)
		}
		if r.Utilization != 0 || r.QueueDelayMs != nil || r.SegmentsOut <= 0 || r.LossSource != "sender" {
			t.Fatalf("flow %d: unshaped link but utilization %v, queue %v; segments %d, loss from %q",
				i, r.Utilization, r.QueueDelayMs, r.SegmentsOut, r.LossSource)
		}
	}
	if recs[2].QUICVersion != "v1" {
		t.Fatalf("h3 QUIC version %q, want v1", recs[2].QUICVersion)
	}
}

// TestRunBadServerProtocol checks that a flow whose connection fails gives an invalid record.
func TestRunNoConnection(t *testing.T) {
	l, srv := openLink(t, "none")
	srv.Close()
	recs, err := Run(context.Background(), l, srv, Config{Flows: []Spec{{Protocol: "h1", CC: "cubic"}}, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Valid || recs[0].InvalidReason == "" {
		t.Fatalf("record of a flow that never connected: valid %v, reason %q", recs[0].Valid, recs[0].InvalidReason)
	}
}
