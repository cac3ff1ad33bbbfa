package analysis

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestEffectSizeA checks A = U/(n1 n2) on hand-computed samples (Vargha & Delaney 2000).
func TestEffectSizeA(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"x all slower", []float64{5, 6, 7}, []float64{1, 2}, 1},
		{"x all faster", []float64{1, 2}, []float64{5, 6, 7}, 0},
		{"interleaved", []float64{1, 3}, []float64{2, 4}, 0.25}, // U = 1 (3 > 2) of 4 pairs
		{"ties count one half", []float64{2, 2}, []float64{2, 2}, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := EffectSizeA(MannWhitney(tc.x, tc.y), len(tc.x), len(tc.y)); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("A = %v, want %v", got, tc.want)
			}
		})
	}
	if !math.IsNaN(EffectSizeA(MWResult{}, 0, 3)) {
		t.Error("empty sample: want NaN")
	}
}

// TestWaterfallAxisShared: two loads drawn with their common WaterfallEndMs have the same time
// axis, the shorter load's bars ending earlier on it.
func TestWaterfallAxisShared(t *testing.T) {
	short, long := waterfallRecord(), waterfallRecord()
	long.PLTMs = 2000
	end := WaterfallEndMs(short, long)
	if end != 2000 {
		t.Fatalf("end %v, want 2000", end)
	}
	axis := func(r *result.Record) string {
		var buf bytes.Buffer
		if err := WriteWaterfallAxis(&buf, r, end); err != nil {
			t.Fatal(err)
		}
		ticks := regexp.MustCompile(`>([0-9]+) ms<`).FindAllStringSubmatch(buf.String(), -1)
		return ticks[len(ticks)-1][1]
	}
	if a, b := axis(short), axis(long); a != b {
		t.Errorf("last tick %s ms and %s ms: not one axis", a, b)
	}
}

// TestGroupsOfAnyTwo: Loads, Compare and WriteGroupPlot on two groups of different reports.
func TestGroupsOfAnyTwo(t *testing.T) {
	mk := func(plts ...float64) *Group {
		var recs []*result.Record
		for i, p := range plts {
			r := waterfallRecord()
			r.Run, r.PLTMs = i, p
			recs = append(recs, r)
		}
		return Analyze(recs, Options{}).Groups[0]
	}
	a, b := mk(100, 110, 120, 130, 140, 150), mk(200, 210, 220, 230, 240, 250, 260)
	if len(a.Loads()) != 6 || len(b.Loads()) != 7 {
		t.Fatalf("loads %d, %d", len(a.Loads()), len(b.Loads()))
	}
	c := Compare(b, a, Options{})
	if c.N != 7 || c.BaselineN != 6 || math.Abs(c.Ratio-230.0/125) > 1e-12 || !c.Significant {
		t.Errorf("compare: n %d/%d ratio %v significant %v", c.N, c.BaselineN, c.Ratio, c.Significant)
	}
	var buf bytes.Buffer
	if err := WriteGroupPlot(&buf, ECDFPlot, "a vs b", []string{"A", "B"}, []*Group{a, b}, PLT, "svg"); err != nil {
		t.Fatal(err)
	}
	if s := buf.String(); !strings.Contains(s, "A (n=6)") || !strings.Contains(s, "B (n=7)") {
		t.Error("ECDF legend lacks the two labels")
	}
	if err := WriteGroupPlot(&buf, HeatmapPlot, "x", []string{"A"}, []*Group{a}, PLT, "svg"); err == nil {
		t.Error("heatmap of groups: no error")
	}
	body, err := Analyze(a.Loads(), Options{}).HTMLBody()
	if err != nil || strings.Contains(body, "<html") || !strings.Contains(body, "<h1>") {
		t.Errorf("HTMLBody: %v, %.100q", err, body)
	}
}
