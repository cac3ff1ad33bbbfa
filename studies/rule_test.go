package studies

import (
	"github.com/pltlab/pltlab/analysis"
	"math"
	"testing"
)

// TestByInterval: inside is reproduced, outside contradicted, and an interval that holds a
// bound, a point on its bound and no interval are inconclusive.
func TestByInterval(t *testing.T) {
	up := Region{0.9, math.Inf(1)}
	band := Region{0.64, 0.78}
	for _, tc := range []struct {
		lo, hi float64
		r      Region
		want   Verdict
	}{
		{0.91, 0.95, up, Reproduced},
		{0.80, 0.89, up, Contradicted},
		{0.88, 0.93, up, Inconclusive},
		{0.9, 0.9, up, Inconclusive}, // a value on its bound
		{0.9, 0.95, up, Inconclusive},
		{math.NaN(), math.NaN(), up, Inconclusive}, // no interval
		{0.70, 0.75, band, Reproduced},
		{0.60, 0.70, band, Inconclusive},
		{0.79, 0.85, band, Contradicted},
		{0.50, 0.90, band, Inconclusive}, // wider than the band
		{0.1, 0.2, Region{math.Inf(-1), 0.01}, Contradicted},
		{-0.01, 0.005, Region{math.Inf(-1), 0.01}, Reproduced},
	} {
		if got := byInterval(tc.lo, tc.hi, tc.r); got != tc.want {
			t.Errorf("[%g, %g] vs %s: %s, want %s", tc.lo, tc.hi, tc.r, got, tc.want)
		}
	}
	if allOf(Reproduced, Inconclusive) != Inconclusive || allOf(Reproduced, Contradicted, Inconclusive) != Contradicted ||
		allOf(Reproduced, Reproduced) != Reproduced || allOf() != Inconclusive {
		t.Error("allOf")
	}
	if majority(5, 2, 9) != Reproduced || majority(4, 0, 8) != Inconclusive || majority(1, 5, 9) != Contradicted || majority(4, 4, 8) != Inconclusive {
		t.Error("majority: more than half, never on exactly half")
	}
}

// TestCrossCellIntervals: the difference of two groups' mean % differences has the interval
// its cells' loads give (delta method), which shrinks with more loads.
func TestCrossCellIntervals(t *testing.T) {
	cell := func(tcp, quic, sd float64, n int) Cell {
		var c Cell
		c.Diffs[0] = Diff{TCPMean: tcp, QUICMean: quic, TCPSD: sd, QUICSD: sd, NTCP: n, NQUIC: n, Pct: PctDiff(tcp, quic)}
		return c
	}
	lo := []Cell{cell(1300, 1000, 50, 10)} // +30 %
	hi := []Cell{cell(1100, 1000, 50, 10)} // +10 %
	est, l, h := diffOfMeans(lo, hi, 0, 0.01)
	// Var of each cell's Pct = 1e4 (50^2/10/1000^2 + T^2 50^2/10/1000^4).
	v := 1e4*(2500.0/10/1e6+1300*1300*2500.0/10/1e12) + 1e4*(2500.0/10/1e6+1100*1100*2500.0/10/1e12)
	if math.Abs(est-20) > 1e-9 || math.Abs((h-l)/2-analysis.NormalQuantile(0.995)*math.Sqrt(v)) > 1e-9 {
		t.Errorf("diff %g [%g, %g], want 20 +- %g", est, l, h, analysis.NormalQuantile(0.995)*math.Sqrt(v))
	}
	_, l40, h40 := diffOfMeans([]Cell{cell(1300, 1000, 50, 40)}, []Cell{cell(1100, 1000, 50, 40)}, 0, 0.01)
	if !(h40-l40 < (h-l)*0.51 && h40-l40 > (h-l)*0.49) {
		t.Errorf("4x the loads: width %g against %g, want half", h40-l40, h-l)
	}
	if _, l, _ := diffOfMeans(lo, []Cell{cell(1100, 1000, 50, 1)}, 0, 0.01); !math.IsNaN(l) {
		t.Error("a cell of one load: want no interval")
	}
}
