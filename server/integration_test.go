package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// TestIntegrationConcurrentLoad runs 50 clients, each with its own connection, making 20
// requests each over every protocol, and checks every response's protocol, size and SHA-256.
func TestIntegrationConcurrentLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("concurrent load test skipped with -short")
	}
	const clients, requests = 50, 20
	dir, m := writeTestPage(t, 10, 64)
	s := startServer(t, dir)
	for _, p := range DefaultProtocols {
		t.Run(p, func(t *testing.T) {
			before := s.Stats()
			errs := make(chan error, clients)
			var wg sync.WaitGroup
			for i := range clients {
				c := newClient(t, s, p)
				wg.Go(func() {
					for j := range requests {
						if err := fetchCheck(c, p, m.Objects[(i+j)%len(m.Objects)].Path, m.Objects[(i+j)%len(m.Objects)].SHA256); err != nil {
							errs <- fmt.Errorf("client %d request %d: %w", i, j, err)
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			after := s.Stats()
			if got := after.Requests - before.Requests; got != clients*requests {
				t.Errorf("server counted %d requests, want %d", got, clients*requests)
			}
			if got := after.Conns - before.Conns; got != clients {
				t.Errorf("server counted %d connections, want %d", got, clients)
			}
		})
	}
}

// fetchCheck GETs path and checks the protocol and the body's SHA-256.
func fetchCheck(c *testClient, protocol, path, sha string) error {
	resp, err := c.Get(c.base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	h := sha256.New()
	if _, err := io.Copy(h, resp.Body); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK || resp.Proto != wantProto[protocol] {
		return fmt.Errorf("%s: %s %s", path, resp.Proto, resp.Status)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		return fmt.Errorf("%s: sha256 %s, want %s", path, got, sha)
	}
	return nil
}
