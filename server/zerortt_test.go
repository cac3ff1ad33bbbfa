//go:build !race

package server

import (
	"net/http"
	"testing"
	"time"
)

// TestIntegration0RTT: a resumed h3 connection uses 0-RTT when the server allows it, and not when
// it does not. It is left out of race-detector builds (and so runs in `make integration`, not
// `make unit`): quic-go v0.65's own client races with itself on a 0-RTT dial (OpenStreamSync
// reads the flow-control parameters in newFlowController while the connection's run loop writes
// them in handleTransportParameters; both stacks are inside quic-go), which the race detector
// reports intermittently as a failure of this test although no pltlab code is involved.
func TestIntegration0RTT(t *testing.T) {
	dir, _ := writeTestPage(t, 2, 16)
	s := startServer(t, dir, With0RTT(true))
	if !s.Info().ZeroRTT {
		t.Fatal("Info.ZeroRTT false")
	}
	cache := newTicketCache()
	get := func(method string) (*http.Response, ConnInfo) {
		tr := newH3Transport(s, s.Info().Addr("h3"), cache)
		defer tr.Close()
		since := time.Now()
		cache.drain()
		req, _ := http.NewRequest(method, "https://plt.test/index.html", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		resp.Body.Close()
		cache.wait(t) // the session ticket arrives after the handshake
		ci, ok, _ := s.PageConn(since)
		if !ok {
			t.Fatal("no page connection")
		}
		if err := s.CloseConnections(); err != nil {
			t.Fatal(err)
		}
		return resp, ci
	}
	if _, ci := get(http.MethodGet); ci.Resumed || ci.Used0RTT {
		t.Errorf("first connection: %+v", ci)
	}
	resp, ci := get("GET_0RTT")
	if resp.StatusCode != 200 || !ci.Resumed || !ci.Used0RTT || ci.TLSVersion != "1.3" {
		t.Errorf("resumed connection: %s %+v, want resumed with 0-RTT", resp.Status, ci)
	}
	t.Run("off", func(t *testing.T) {
		s := startServer(t, dir)
		cache := newTicketCache()
		for i := range 2 {
			tr := newH3Transport(s, s.Info().Addr("h3"), cache)
			cache.drain()
			req, _ := http.NewRequest("GET_0RTT", "https://plt.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			cache.wait(t)
			_ = s.CloseConnections()
			tr.Close()
			if ci := s.Conns()[i]; ci.Used0RTT || ci.Resumed != (i == 1) {
				t.Errorf("connection %d without 0-RTT: %+v", i, ci)
			}
		}
	})
}
