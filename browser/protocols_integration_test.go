//go:build linux

package browser

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
)

// TestIntegrationProtocols loads a page from the real server with one browser per protocol:
// two cold loads (each valid, on the requested protocol for the page and every object, every
// byte there, each over a new connection as the server sees it), then one warm load (priming
// load, server closes every connection, measured load on a new, possibly resumed, connection).
func TestIntegrationProtocols(t *testing.T) {
	chrome := needChromium(t)
	dir, m := genPage(t, "6x30KB")
	ctx := context.Background()
	srv, ns := startServer(t, dir)
	info := srv.Info()
	for _, p := range []string{"h1", "h2", "h3"} {
		t.Run(p, func(t *testing.T) {
			pageURL := info.URL(p)
			u, err := url.Parse(pageURL)
			if err != nil {
				t.Fatalf("server URL %q: %v", pageURL, err)
			}
			port, _ := strconv.Atoi(u.Port())
			begin := time.Now()
			b, err := Launch(ctx, WithChrome(chrome), WithNetNS(ns), WithProtocol(p), WithSPKI(info.SPKI),
				WithResolve(info.Host, "127.0.0.1"), WithPort(port))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			t.Logf("launched %s in %v", b.Version(), time.Since(begin).Round(time.Millisecond))
			target := Target{URL: pageURL, Manifest: m, Timeout: 20 * time.Second}
			var ids []uint64
			for range 2 {
				since := time.Now()
				rec := mustLoad(t, b, target)
				checkValid(t, rec, p, m.Objects)
				ids = append(ids, checkConn(t, srv, since, p, ids))
			}
			since := time.Now()
			warm := target
			warm.Mode, warm.CloseConnections = result.Warm, srv.CloseConnections
			rec := mustLoad(t, b, warm)
			checkValid(t, rec, p, m.Objects)
			if rec.Mode != result.Warm {
				t.Errorf("mode %q, want warm", rec.Mode)
			}
			checkConn(t, srv, since, p, ids)
		})
	}
}

// checkConn checks that the page loaded since then came over a new connection of protocol p
// (one not in old) and returns its ID.
func checkConn(t *testing.T, srv *server.Server, since time.Time, p string, old []uint64) uint64 {
	t.Helper()
	c, ok, _ := srv.PageConn(since)
	if !ok {
		t.Fatalf("the server saw no page load since %v", since)
	}
	if c.Protocol != p || slices.Contains(old, c.ID) {
		t.Errorf("page connection %d (%s), want a new %s connection (old: %v)", c.ID, c.Protocol, p, old)
	}
	t.Logf("page connection %d: %s %s TLS %s resumed=%v 0rtt=%v", c.ID, c.Protocol, c.ALPN, c.TLSVersion, c.Resumed, c.Used0RTT)
	return c.ID
}
