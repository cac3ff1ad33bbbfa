package server

import (
	"io"
	"net/http"
	"testing"
)

// BenchmarkServe measures bytes/s served per protocol on loopback: 4 x GOMAXPROCS goroutines
// fetch one ~500 KB JPEG over one client per protocol (h1: a pool of connections; h2 and h3: one
// multiplexed connection, as a browser would). -bench reports MB/s through b.SetBytes.
func BenchmarkServe(b *testing.B) {
	dir, m := writeTestPage(b, 1, 700)
	s := startServer(b, dir)
	obj := m.Objects[0]
	for _, p := range DefaultProtocols {
		b.Run(p, func(b *testing.B) {
			c := newClient(b, s, p)
			c.get(b, http.MethodGet, obj.Path) // connect outside the timing
			b.SetBytes(obj.Size)
			b.SetParallelism(4) // 4 x GOMAXPROCS clients
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := c.Get(c.base + obj.Path)
					if err != nil {
						b.Error(err)
						return
					}
					n, err := io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil || n != obj.Size {
						b.Errorf("read %d of %d bytes: %v", n, obj.Size, err)
						return
					}
				}
			})
			b.ReportMetric(float64(obj.Size), "B/object")
		})
	}
}
