//go:build linux

package browser

import (
	"context"
	"net/url"
	"strconv"
	"testing"
	"time"
)

// TestIntegrationVisual loads a page with Target.Visual and checks the visual metrics: frames
// received, completeness rising to 100 %, 0 < first visual change <= visually complete, and a
// SpeedIndex between the first visual change and visually complete.
func TestIntegrationVisual(t *testing.T) {
	chrome := needChromium(t)
	dir, m := genPage(t, "6x30KB")
	ctx := context.Background()
	srv, ns := startServer(t, dir)
	info := srv.Info()
	pageURL := info.URL("h2")
	u, _ := url.Parse(pageURL)
	port, _ := strconv.Atoi(u.Port())
	b, err := Launch(ctx, WithChrome(chrome), WithNetNS(ns), WithProtocol("h2"), WithSPKI(info.SPKI),
		WithResolve(info.Host, "127.0.0.1"), WithPort(port))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rec := mustLoad(t, b, Target{URL: pageURL, Manifest: m, Timeout: 20 * time.Second, Visual: true})
	checkValid(t, rec, "h2", m.Objects)
	v := rec.Visual
	if v == nil {
		t.Fatal("no visual metrics")
	}
	t.Logf("frames %d, first change %.0f ms, visually complete %.0f ms, SpeedIndex %.0f, PLT %.0f, progress %v, filmstrip %d",
		v.Frames, v.FirstVisualChangeMs, v.VisuallyCompleteMs, v.SpeedIndexMs, rec.PLTMs, v.Progress, len(v.Filmstrip))
	switch {
	case v.Frames < 2 || len(v.Progress) == 0 || len(v.Filmstrip) == 0:
		t.Errorf("too few frames: %d frames, %d progress points, %d thumbnails", v.Frames, len(v.Progress), len(v.Filmstrip))
	case v.Progress[len(v.Progress)-1].Pct != 100:
		t.Errorf("completeness ends at %d %%", v.Progress[len(v.Progress)-1].Pct)
	case !(v.FirstVisualChangeMs > 0 && v.FirstVisualChangeMs <= v.VisuallyCompleteMs):
		t.Errorf("first visual change %.1f ms, visually complete %.1f ms", v.FirstVisualChangeMs, v.VisuallyCompleteMs)
	case v.SpeedIndexMs < v.FirstVisualChangeMs || v.SpeedIndexMs > v.VisuallyCompleteMs:
		t.Errorf("SpeedIndex %.1f outside [%.1f, %.1f]", v.SpeedIndexMs, v.FirstVisualChangeMs, v.VisuallyCompleteMs)
	}
}
