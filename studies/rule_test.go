package studies

import (
	"github.com/pltlab/pltlab/analysis"
	"math"
	"math/rand/v2"
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

// TestHolm against the procedure worked by hand: m = 4 at 0.01: thresholds 0.0025, 0.00333,
// 0.005, 0.01 in p order; it stops at the first p over its threshold.
func TestHolm(t *testing.T) {
	got := holm([]float64{0.004, 0.001, 0.03, 0.002}, 0.01)
	want := []bool{true, true, false, true} // 0.001 <= .0025, 0.002 <= .00333, 0.004 <= .005, 0.03 > .01
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("holm %v, want %v", got, want)
		}
	}
	// Each p under 0.01 alone, but not as a family of three.
	got = holm([]float64{0.008, 0.009, 0.006}, 0.01)
	if got[0] || got[1] || got[2] {
		t.Errorf("three p-values of 0.006..0.009: %v, want none significant", got)
	}
	if got := holm([]float64{math.NaN(), 0.001}, 0.01); got[0] || !got[1] {
		t.Errorf("NaN: %v", got)
	}
}

// TestBlockCICoverage: on an AR(1) series (correlation 0.8 per bin, as a congestion-controlled
// flow's goodput) the moving-block interval of the mean covers the true mean in about its
// nominal share of seeded trials, where an i.i.d. bootstrap (block 1) covers far fewer.
// Percentile block intervals cover less than their nominal level on series this short (here
// 27 of 40 for 90 %, single bins 17 of 40; Politis & White 2004), so the test asks blocks to
// reach 25 and to beat single bins clearly; docs/design.md ("Verdicts") says so.
func TestBlockCICoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	series := func() []float64 {
		xs := make([]float64, 120)
		x := 0.0
		for i := range xs {
			x = 0.8*x + rng.NormFloat64()
			xs[i] = 10 + x
		}
		return xs
	}
	mean := func(xs [][]float64) float64 { return meanOf(xs[0]) }
	cover := func(block int) int {
		n := 0
		for trial := range 40 {
			_, lo, hi := blockCI([][][]float64{{series()}}, block, mean, 0.1, uint64(trial))
			if lo < 10 && 10 < hi {
				n++
			}
		}
		return n
	}
	blocks, iid := cover(12), cover(1)
	if blocks < 25 || iid >= blocks-6 {
		t.Errorf("90 %% intervals covering the mean in 40 trials: blocks of 12 %d, single bins %d; want blocks >= 25 and well above single bins", blocks, iid)
	}
	if _, lo, _ := blockCI([][][]float64{{make([]float64, 20)}}, 12, mean, 0.1, 1); !math.IsNaN(lo) {
		t.Error("fewer than two blocks: want no interval")
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
