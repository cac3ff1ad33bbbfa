package browser

import (
	"context"
	"testing"
	"time"
)

// BenchmarkLaunch measures starting Chromium until it answers, and closing it.
func BenchmarkLaunch(b *testing.B) {
	chrome, err := FindChromium("")
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		br, err := Launch(context.Background(), WithChrome(chrome), WithSPKI("cGlu"))
		if err != nil {
			b.Fatal(err)
		}
		if err := br.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkColdLoad measures one cold load of a 4 x 20 KB page over h2 on loopback, reusing one
// browser; it reports the PLT and the harness overhead (wall - PLT) per load.
func BenchmarkColdLoad(b *testing.B) {
	chrome, err := FindChromium("")
	if err != nil {
		b.Skip(err)
	}
	dir, m := genPage(b, "4x20KB")
	srv := startStallServer(b, dir, false)
	br, err := Launch(context.Background(), WithChrome(chrome), WithSPKI(srv.SPKI), WithPort(srv.Port))
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	target := Target{URL: srv.URL(), Manifest: m, Timeout: 20 * time.Second}
	var plt, over float64
	n := 0
	for b.Loop() {
		rec, err := br.Load(context.Background(), target)
		if err != nil {
			b.Fatal(err)
		}
		if rec.Valid {
			plt += rec.PLTMs
			over += rec.WallMs - rec.PLTMs
			n++
		}
	}
	if n > 0 {
		b.ReportMetric(plt/float64(n), "plt-ms/op")
		b.ReportMetric(over/float64(n), "overhead-ms/op")
	}
}
