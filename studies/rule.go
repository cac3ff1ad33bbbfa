package studies

import (
	"fmt"
	"math"
	"slices"

	"github.com/pltlab/pltlab/analysis"
)

// The one rule of every verdict (docs/design.md, "Verdicts"): a finding's claim is a region of
// an estimate (a ratio at least 0.9, a difference above 0, a published ratio within a margin)
// or a direction of a test, judged at the level Alpha:
//   - reproduced: the claim's test rejects its null in the claimed direction (p < Alpha), or the
//     estimate's 1 - Alpha interval lies strictly inside the claimed region;
//   - contradicted: the test rejects it the other way, or the interval lies strictly outside;
//   - inconclusive: everything else. An interval that holds the region's bound, an estimate on
//     its bound and an estimate without an interval (too few runs) are inconclusive.
// Where one finding is made of several tests (cells, or sub-claims that must all hold), the
// family's error rate is held at Alpha by Holm's step-down procedure (analysis.Holm; Holm 1979) over the tests'
// p-values, or by Bonferroni's split of Alpha over the sub-claims' intervals.

// Region is the claimed region of an estimate: Lo < estimate < Hi, each bound open, -Inf or +Inf
// for a one-sided claim ("utilization ratio >= 0.9" is Region{0.9, +Inf}: on the bound itself it
// is not shown).
type Region struct{ Lo, Hi float64 }

// String is "> 0.9", "< 0.01" or "in (0.64, 0.78)".
func (r Region) String() string {
	switch {
	case math.IsInf(r.Hi, 1):
		return fmt.Sprintf("> %.4g", r.Lo)
	case math.IsInf(r.Lo, -1):
		return fmt.Sprintf("< %.4g", r.Hi)
	}
	return fmt.Sprintf("in (%.4g, %.4g)", r.Lo, r.Hi)
}

// byInterval judges an estimate's interval [lo, hi] against the claimed region r: Reproduced
// when the interval lies strictly inside r, Contradicted when strictly outside it, else (and for
// a NaN bound: no interval) Inconclusive.
func byInterval(lo, hi float64, r Region) Verdict {
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi) || lo > hi:
		return Inconclusive
	case lo > r.Lo && hi < r.Hi:
		return Reproduced
	case hi < r.Lo || lo > r.Hi:
		return Contradicted
	}
	return Inconclusive
}

// allOf folds sub-claims that must all hold (each judged at its share of Alpha): Contradicted
// when any is, Reproduced when every one is, else Inconclusive.
func allOf(vs ...Verdict) Verdict {
	if len(vs) == 0 {
		return Inconclusive
	}
	if slices.Contains(vs, Contradicted) {
		return Contradicted
	}
	for _, v := range vs {
		if v != Reproduced {
			return Inconclusive
		}
	}
	return Reproduced
}

// FlowBlockS is the block length of the flow criteria's moving-block bootstrap, in seconds: the
// per-bin goodput of a congestion-controlled flow is autocorrelated over its sawtooth (CUBIC's
// epoch at the paper's 3 Mbit/s, 50 ms, 1-BDP link is a few seconds), so bins are resampled in
// blocks of this length, keeping that correlation inside each block (Künsch, "The jackknife and
// the bootstrap for general stationary observations", Ann. Statist. 17, 1989; block length of
// the order of the correlation time, Politis & White 2004).
const FlowBlockS = 2.0

// meanOf is the mean of xs (NaN when empty).
func meanOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// pctVar is the delta-method variance of a cell's percent difference 100 (T - Q) / Q of two
// independent sample means, T of nt loads with standard deviation st and Q of nq with sq:
// Var ≈ 100² (st²/nt / Q² + T² sq²/nq / Q⁴) (Casella & Berger, Statistical Inference, 2002,
// section 5.5.4). NaN when a side has fewer than 2 loads.
func pctVar(d Diff) float64 {
	if d.NTCP < 2 || d.NQUIC < 2 || !(d.QUICMean > 0) {
		return math.NaN()
	}
	q2 := d.QUICMean * d.QUICMean
	return 1e4 * (d.TCPSD*d.TCPSD/float64(d.NTCP)/q2 + d.TCPMean*d.TCPMean*d.QUICSD*d.QUICSD/float64(d.NQUIC)/(q2*q2))
}

// diffOfMeans is the difference of two groups' mean percent differences (comparison i), mean(a)
// - mean(b), with its (1 - alpha) normal interval from the cells' delta-method variances (the
// cells' loads are independent): what "larger at low rate than at high rate" is about, judged
// from the loads of the cells instead of two bare means. NaN interval when a cell lacks one.
func diffOfMeans(a, b []Cell, i int, alpha float64) (est, lo, hi float64) {
	group := func(cs []Cell) (m, v float64) {
		for _, c := range cs {
			m += c.Diffs[i].Pct
			v += pctVar(c.Diffs[i])
		}
		k := float64(len(cs))
		return m / k, v / (k * k)
	}
	if len(a) == 0 || len(b) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	ma, va := group(a)
	mb, vb := group(b)
	est = ma - mb
	h := analysis.NormalQuantile(1-alpha/2) * math.Sqrt(va+vb)
	return est, est - h, est + h
}

// pairedDiff is the mean over pairs of (with - without) percent differences (comparison i),
// each pair a lossy cell and its loss-free twin (independent loads), with its (1 - alpha)
// normal interval from the delta-method variances.
func pairedDiff(with, without []Cell, i int, alpha float64) (est, lo, hi float64) {
	if len(with) == 0 || len(with) != len(without) {
		return math.NaN(), math.NaN(), math.NaN()
	}
	var m, v float64
	for k := range with {
		m += with[k].Diffs[i].Pct - without[k].Diffs[i].Pct
		v += pctVar(with[k].Diffs[i]) + pctVar(without[k].Diffs[i])
	}
	n := float64(len(with))
	est = m / n
	h := analysis.NormalQuantile(1-alpha/2) * math.Sqrt(v) / n
	return est, est - h, est + h
}

// fmtInterval is "0.93 [0.91, 0.95]" with the given verb.
func fmtInterval(verb string, est, lo, hi float64) string {
	if math.IsNaN(lo) {
		return fmt.Sprintf(verb+" (no interval)", est)
	}
	return fmt.Sprintf(verb+" ["+verb+", "+verb+"]", est, lo, hi)
}
