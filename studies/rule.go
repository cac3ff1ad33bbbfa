package studies

import (
	"fmt"
	"math"

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

// claim is one test or interval a finding declares; fold turns a finding's claims into its
// verdict. Build one with testClaim, differs, within, outside, counted, point, unsure, missing,
// given or group.
type claim struct {
	kind   claimKind
	p, way float64 // a test's p-value, and its estimate's direction: > 0 claimed, < 0 the other way
	lo, hi float64 // an interval
	region Region  // the claimed region of the interval
	inHolm bool    // an interval whose p-value still counts in the family's Holm procedure
	given  bool    // a precondition: it can keep the claim from Reproduced, never contradict it
	of     family  // a group's family
	sub    []claim // a group's claims
}

// claimKind is how a claim is judged.
type claimKind uint8

const (
	byTest claimKind = iota
	byDiffers
	byRegion
	byOutside
	byGroup
	noData
)

// testClaim is a test with p-value p whose estimate goes the claimed way when way > 0 and the
// other way when way < 0 (0 or NaN: neither).
func testClaim(p, way float64) claim { return claim{kind: byTest, p: p, way: way} }

// differs is a claimed difference: its two-sided test's p-value p reproduces it, and its
// estimate's interval [lo, hi] inside the equivalence region r contradicts it (two one-sided
// tests: D. J. Schuirmann, J. Pharmacokinet. Biopharm. 15, 1987); a difference shown takes
// precedence over equivalence.
func differs(p, lo, hi float64, r Region) claim {
	return claim{kind: byDiffers, p: p, way: 1, lo: lo, hi: hi, region: r}
}

// within is an estimate's interval [lo, hi] claimed inside r.
func within(lo, hi float64, r Region) claim { return claim{kind: byRegion, lo: lo, hi: hi, region: r} }

// outside is an estimate's interval [lo, hi] claimed outside r (beyond either bound).
func outside(lo, hi float64, r Region) claim {
	return claim{kind: byOutside, lo: lo, hi: hi, region: r}
}

// counted is a count of observations without sampling error (releases probed, cases run)
// claimed to be at least one: sure of them certain, unsure more that may count or not. Its
// interval is [sure, sure + unsure] against (0.5, +Inf): reproduced with one sure, contradicted
// with none of either, else inconclusive.
func counted(sure, unsure int) claim {
	return within(float64(sure), float64(sure+unsure), Region{0.5, math.Inf(1)})
}

// point is a point observation that no interval qualifies (the candidates tried are all there
// are): reproduced when it holds, else contradicted.
func point(holds bool) claim { return counted(map[bool]int{true: 1}[holds], 0) }

// unsure is a claim without an estimate yet (a cell left out for too few loads where others
// were measured): inconclusive, so its family is not reproduced, and it contradicts nothing.
func unsure() claim { return within(math.NaN(), math.NaN(), Region{}) }

// missing is a claim this run lacks the data for (too few loads): NotRun.
func missing() claim { return claim{kind: noData} }

// given makes c a precondition of the finding (the gain that must exist to shrink): its
// contradiction only withholds Reproduced (Inconclusive).
func given(c claim) claim {
	c.given = true
	return c
}

// group is the claims cs folded by f as one claim of an outer family (h3 cold or warm beside
// h2); its tests are corrected within the group.
func group(f family, cs ...claim) claim { return claim{kind: byGroup, of: f, sub: cs} }

// family is how a finding's claims fold into one verdict (fold).
type family uint8

const (
	// every claim must hold: Reproduced when each does at alpha (an intersection of claims needs
	// no correction; R. L. Berger, Technometrics 24, 1982), Contradicted when one is (a test only
	// when significant after Holm's procedure over the family's tests), else NotRun when one
	// lacks its data, else Inconclusive.
	every family = iota
	// everyHolm is every with each test significant, either way, only after Holm's procedure.
	everyHolm
	// most claims must hold: Holm over the tests; Reproduced when more than half reproduce,
	// Contradicted when more than half contradict, else Inconclusive.
	most
	// either of the claims will do (alternatives, such as h3 cold or warm, or any pair that
	// differs): Holm over the tests; Reproduced when one reproduces, Contradicted when every one
	// contradicts, else Inconclusive.
	either
)

// fold is the one fold of the rule, every verdict's: it judges each claim at alpha (a test by
// its p-value and direction, with Holm's procedure over the family's tests at alpha,
// analysis.Holm; an interval against its region) and folds them by f. It returns the verdict
// and each claim's, in order.
func fold(f family, alpha float64, cs ...claim) (Verdict, []Verdict) {
	var ps []float64
	for _, c := range cs {
		if c.kind <= byDiffers || c.inHolm {
			ps = append(ps, c.p)
		}
	}
	sig, vs, k := analysis.Holm(ps, alpha), make([]Verdict, len(cs)), 0
	for i, c := range cs {
		held := true // whether its test is significant after Holm
		if c.kind <= byDiffers || c.inHolm {
			held, k = sig[k], k+1
		}
		vs[i] = c.judge(alpha)
		switch {
		case c.kind == byDiffers && !held:
			c.p = math.NaN() // the equivalence alone
			vs[i] = c.judge(alpha)
		case c.kind <= byDiffers && f != every && held:
			vs[i] = c.judge(math.Inf(1)) // the direction; Holm decided the significance
		case c.kind == byTest && !held && (vs[i] == Contradicted || f != every):
			vs[i] = Inconclusive
		}
	}
	return foldVerdicts(f, vs), vs
}

// judge is one claim's verdict at alpha, by itself (fold corrects a family's tests).
func (c claim) judge(alpha float64) Verdict {
	v := NotRun
	switch c.kind {
	case byTest, byDiffers:
		v = Inconclusive
		switch {
		case c.p < alpha && c.way > 0:
			v = Reproduced
		case c.p < alpha && c.way < 0, c.kind == byDiffers && byInterval(c.lo, c.hi, c.region) == Reproduced:
			v = Contradicted
		}
	case byRegion:
		v = byInterval(c.lo, c.hi, c.region)
	case byOutside:
		v = map[Verdict]Verdict{Reproduced: Contradicted, Contradicted: Reproduced, Inconclusive: Inconclusive}[byInterval(c.lo, c.hi, c.region)]
	case byGroup:
		v, _ = fold(c.of, alpha, c.sub...)
	}
	if c.given && v == Contradicted {
		return Inconclusive
	}
	return v
}

// foldVerdicts folds claims' verdicts by f.
func foldVerdicts(f family, vs []Verdict) Verdict {
	switch n := count(vs); {
	case f == most && 2*n[Reproduced] > len(vs), f == either && n[Reproduced] > 0:
		return Reproduced
	case f == most && 2*n[Contradicted] > len(vs), f == either && n[Contradicted] == len(vs):
		return Contradicted
	case f == most || f == either:
		return Inconclusive
	case n[Contradicted] > 0:
		return Contradicted
	case n[NotRun] > 0:
		return NotRun
	case len(vs) > 0 && n[Reproduced] == len(vs):
		return Reproduced
	}
	return Inconclusive
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

// FlowBlockS is the block length of the flow criteria's moving-block bootstrap, in seconds: the
// per-bin goodput of a congestion-controlled flow is autocorrelated over its sawtooth (CUBIC's
// epoch at the paper's 3 Mbit/s, 50 ms, 1-BDP link is a few seconds), so bins are resampled in
// blocks of this length, keeping that correlation inside each block (Künsch, "The jackknife and
// the bootstrap for general stationary observations", Ann. Statist. 17, 1989; block length of
// the order of the correlation time, Politis & White 2004).
const FlowBlockS = 2.0

// meanOf is the mean of xs (NaN when empty; analysis.MeanSD).
func meanOf(xs []float64) float64 {
	m, _ := analysis.MeanSD(xs)
	return m
}

// pctVar is the delta-method variance of a cell's percent difference 100 (T - Q) / Q of two
// independent sample means, T of nt loads with standard deviation st and Q of nq with sq:
// Var ≈ 100² (st²/nt / Q² + T² sq²/nq / Q⁴) (Casella & Berger, Statistical Inference, 2002,
// section 5.5.4). NaN when a side has fewer than 2 loads.
func pctVar(d Diff) float64 {
	if d.N < 2 || d.NRef < 2 || !(d.RefMean > 0) {
		return math.NaN()
	}
	q2 := d.RefMean * d.RefMean
	return 1e4 * (d.SD*d.SD/float64(d.N)/q2 + d.Mean*d.Mean*d.RefSD*d.RefSD/float64(d.NRef)/(q2*q2))
}

// pctMean is the mean of comparison i's percent differences over cells and the delta-method
// variance of that mean, the cells' loads independent (pctVar); NaN for no cells.
func pctMean(cells []Cell, i int) (m, v float64) {
	for _, c := range cells {
		m += c.Diffs[i].Pct
		v += pctVar(c.Diffs[i])
	}
	k := float64(len(cells))
	return m / k, v / (k * k)
}

// diffOfMeans is the difference of two groups' mean percent differences (comparison i), mean(a)
// - mean(b), with its (1 - alpha) normal interval from the cells' delta-method variances (the
// cells' loads are independent): what "larger at low rate than at high rate" is about, judged
// from the loads of the cells instead of two bare means; also the mean over pairs of (with -
// without), a lossy cell and its loss-free twin, or a phone's cell and its desktop's. NaN when
// a group is empty, NaN interval when a cell lacks one.
func diffOfMeans(a, b []Cell, i int, alpha float64) (est, lo, hi float64) {
	ma, va := pctMean(a, i)
	mb, vb := pctMean(b, i)
	return analysis.NormalCI(ma-mb, va+vb, alpha)
}
