package server

import (
	"io"
	"net/http"
	"testing"
)

// BenchmarkServe measures bytes/s served per protocol on loopback: 8 parallel clients fetch a
// 1 MB-class JPEG (one connection each for h1, one shared connection for h2 and h3, as a browser
// would). Reported as MB/s by -bench through b.SetBytes.
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
		})
	}
}
