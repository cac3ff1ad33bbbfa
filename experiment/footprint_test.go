package experiment

import (
	"strings"
	"testing"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
)

// TestPlanFootprint: one browser per protocol whatever the pages and modes, and the server's
// held bytes are the objects of at most server.MemObjectMax bytes, capped at server.MemoryBudget.
func TestPlanFootprint(t *testing.T) {
	two := CrossArms([]string{"h2", "h3"}, []result.Mode{result.Cold, result.Warm})
	for _, tc := range []struct {
		name      string
		c         Config
		browsers  int
		serverMiB int
	}{
		{"one small page, three protocols", Config{Pages: []string{"10x100KB"}, Arms: CrossArms([]string{"h1", "h2", "h3"}, []result.Mode{result.Cold})}, 3, 1},
		// 42 pages of the Kakhki grid would hold 577 MB of small objects: the budget caps it.
		{"many pages, two protocols, cold and warm", Config{Pages: []string{"200x1MB", "200x500KB", "100x1MB", "10x10MB"}, Arms: two}, 2, server.MemoryBudget >> 20},
		{"objects over 1 MiB are not held", Config{Pages: []string{"10x10MB", "1x2MB"}, Arms: two}, 2, 0},
	} {
		f, err := PlanFootprint(tc.c)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if f.Browsers != tc.browsers || f.ServerMiB != tc.serverMiB || f.MiB != FootprintBaseMiB+tc.browsers*f.BrowserMiB+tc.serverMiB {
			t.Errorf("%s: %+v, want %d browsers, %d MiB held", tc.name, f, tc.browsers, tc.serverMiB)
		}
		if !strings.Contains(f.String(), "browsers x") {
			t.Errorf("%s: %q does not say the browsers", tc.name, f)
		}
	}
	// The model against what it was fitted on and checked with (BENCHMARKS.md, "Footprint").
	for _, tc := range []struct {
		page     string
		measured int // MiB, one browser's peak
	}{{"30x10KB", 217}, {"200x1MB", 636}, {"100x10MB", 1470}} {
		p, _ := pages.ParseSpec(tc.page)
		if got := BrowserPeakMiB(p); got < tc.measured*9/10 || got > tc.measured*11/10 {
			t.Errorf("browser on %s: modelled %d MiB, measured %d", tc.page, got, tc.measured)
		}
	}
	slice, _ := PlanFootprint(Config{Pages: []string{"1x5KB", "200x5KB", "200x100KB", "200x1MB", "10x10MB"}, Arms: two})
	if slice.MiB < 1519 || slice.MiB > 1519*11/10 {
		t.Errorf("the kakhki2017 slice: modelled %s, measured peak 1519.5 MiB", slice)
	}
	if _, err := PlanFootprint(Config{Pages: []string{"12xfoo"}}); err == nil || !strings.Contains(err.Error(), "12xfoo") {
		t.Errorf("bad page: %v, want an error naming it", err)
	}
}
