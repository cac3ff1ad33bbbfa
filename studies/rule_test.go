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
}

// TestFold: each family folds its claims as docs/design.md ("Verdicts") says: every is the
// intersection (a test reproduces at alpha, contradicts only after Holm), everyHolm holds both
// directions to Holm, most needs more than half (never exactly half), either one alternative;
// and the claims that are no plain test or interval: differs, counted, point, unsure, given,
// group.
func TestFold(t *testing.T) {
	R, C, I, N := Reproduced, Contradicted, Inconclusive, NotRun
	vs := func(v ...Verdict) []Verdict { return v }
	for _, tc := range []struct {
		f    family
		vs   []Verdict
		want Verdict
	}{
		{every, vs(R, I), I}, {every, vs(R, C, I), C}, {every, vs(R, R), R}, {every, vs(), I}, {every, vs(R, N, I), N}, {every, vs(N, C), C},
		{most, vs(R, R, R, R, R, C, C, I, I), R}, {most, vs(R, R, R, R, I, I, I, I), I}, {most, vs(R, C, C, C, C, C, I, I, I), C}, {most, vs(R, R, C, C), I},
		{either, vs(C, R), R}, {either, vs(C, I), I}, {either, vs(C, C), C},
	} {
		if got := foldVerdicts(tc.f, tc.vs); got != tc.want {
			t.Errorf("family %d of %v: %s, want %s", tc.f, tc.vs, got, tc.want)
		}
	}
	// Two tests at 0.008 and 0.009, each under 0.01 alone but not as a family of two (Holm:
	// 0.008 > 0.005): every reproduces the intersection, refuses the contradiction; everyHolm
	// reproduces neither.
	if v, _ := fold(every, 0.01, testClaim(0.008, 1), testClaim(0.009, 1)); v != R {
		t.Errorf("every, both the claimed way: %s", v)
	}
	if v, cs := fold(every, 0.01, testClaim(0.008, 1), testClaim(0.009, -1)); v != I || cs[1] != I {
		t.Errorf("every, one the other way, n.s. by Holm: %s %v", v, cs)
	}
	if v, _ := fold(everyHolm, 0.01, testClaim(0.008, 1), testClaim(0.009, 1)); v != I {
		t.Errorf("everyHolm: %s", v)
	}
	if v, _ := fold(every, 0.01, testClaim(0.001, 1), missing()); v != N {
		t.Errorf("a cell without data: %s", v)
	}
	r := Region{-1, 1}
	if outside(2, 3, r).judge(0.01) != R || outside(-0.5, 0.5, r).judge(0.01) != C || outside(0.5, 2, r).judge(0.01) != I {
		t.Error("outside: beyond the region reproduces, inside it contradicts")
	}
	// A claimed difference: shown by its test after Holm, contradicted by equivalence, and a
	// test significant alone but not after Holm falls back on its interval.
	eq := Region{0.9, 1.1}
	for _, tc := range []struct {
		name string
		cs   []claim
		want Verdict
	}{
		{"one pair differs", []claim{differs(0.001, 0.8, 0.95, eq), differs(0.5, 0.95, 1.05, eq)}, R},
		{"every pair equal", []claim{differs(0.5, 0.95, 1.05, eq), differs(0.3, 0.92, 1.08, eq)}, C},
		{"equal but a release short", []claim{differs(0.5, 0.95, 1.05, eq), missing()}, I},
		{"n.s. after Holm, equal", []claim{differs(0.008, 0.95, 1.05, eq), differs(0.009, 0.95, 1.05, eq)}, C},
		{"neither", []claim{differs(0.5, 0.8, 1.2, eq)}, I},
	} {
		if v, _ := fold(either, 0.01, tc.cs...); v != tc.want {
			t.Errorf("differs, %s: %s, want %s", tc.name, v, tc.want)
		}
	}
	// Counts without sampling error, points, preconditions, claims without an estimate and
	// nested groups.
	for _, tc := range []struct {
		name string
		c    claim
		want Verdict
	}{
		{"one sure", counted(1, 3), R}, {"none", counted(0, 0), C}, {"only unsure", counted(0, 2), I},
		{"point holds", point(true), R}, {"point fails", point(false), C},
		{"no estimate", unsure(), I},
		{"precondition holds", given(within(1, 2, Region{0, 3})), R},
		{"precondition fails", given(within(4, 5, Region{0, 3})), I},
		{"group: either of two", group(either, within(4, 5, Region{0, 3}), within(1, 2, Region{0, 3})), R},
		{"group: both miss", group(either, within(4, 5, Region{0, 3}), within(4, 6, Region{0, 3})), C},
	} {
		if v, _ := fold(every, 0.01, tc.c); v != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, v, tc.want)
		}
	}
	if v, _ := fold(every, 0.01, within(-2, -1, Region{math.Inf(-1), 0}), given(within(-3, -1, Region{0, math.Inf(1)}))); v != I {
		t.Errorf("shown, but its precondition contradicted: %s, want inconclusive", v)
	}
	if v, _ := fold(every, 0.01, testClaim(0.001, 1), unsure()); v != I {
		t.Errorf("a cell left out: %s, want inconclusive, not run or reproduced", v)
	}
	// An interval claim that counts in the Holm family makes the family's tests stricter.
	in := within(0.1, 0.2, Region{0, 1})
	in.p, in.inHolm = 0.5, true
	if v, _ := fold(everyHolm, 0.01, testClaim(0.007, 1), in); v != I {
		t.Errorf("family interval: %s, want the test not significant among 2", v)
	}
}

// TestCrossCellIntervals: the difference of two groups' mean % differences has the interval
// its cells' loads give (delta method), which shrinks with more loads.
func TestCrossCellIntervals(t *testing.T) {
	cell := func(tcp, quic, sd float64, n int) Cell {
		var c Cell
		c.Diffs[0] = Diff{Mean: tcp, RefMean: quic, SD: sd, RefSD: sd, N: n, NRef: n, Pct: PctDiff(tcp, quic)}
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
