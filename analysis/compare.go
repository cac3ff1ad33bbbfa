package analysis

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
)

// Comparison compares one protocol's group with the baseline group of the same (page, link,
// mode). Ratios are protocol / baseline, so a ratio below 1 means the protocol is faster.
type Comparison struct {
	// Key is the compared group's key.
	Key
	// Baseline is the baseline protocol.
	Baseline string
	// N and BaselineN are the sample sizes (completed plus timed-out loads).
	N, BaselineN int
	// Ratio is median(protocol) / median(baseline); NaN when either median is censored or the
	// baseline median is 0.
	Ratio float64
	// RatioLow and RatioHigh bound the 95% seeded percentile-bootstrap CI of Ratio (see RatioCI);
	// NaN when either sample has fewer than MinCIN loads (a bootstrap of so few values is not a
	// 95% interval: with n = 1 it is a point).
	RatioLow, RatioHigh float64
	// DiffPct is the percent difference of the medians: 100 (Ratio - 1).
	DiffPct float64
	// MannWhitney is the primary test (timed-out loads included as ties above every value).
	MannWhitney MWResult
	// Welch is the secondary test on completed loads only.
	Welch WelchResult
	// Significant is true when MannWhitney.P < the report's alpha (0.01 by default).
	Significant bool
}

// MinCIN is the least sample size for which a report gives a 95% CI: the median's
// order-statistic interval needs 6 values (MedianCI), and the ratio's bootstrap CI is given
// under the same rule.
const MinCIN = 6

// compareGroups compares every non-baseline group with its baseline, in the order of groups.
func compareGroups(groups []*Group, opts Options) []*Comparison {
	base := map[Key]*Group{}
	for _, g := range groups {
		if g.Protocol == opts.Baseline {
			base[g.condition()] = g
		}
	}
	var out []*Comparison
	for _, g := range groups {
		b := base[g.condition()]
		if b == nil || g.Protocol == opts.Baseline || len(g.Sample) == 0 || len(b.Sample) == 0 {
			continue
		}
		out = append(out, compare(g, b, opts))
	}
	return out
}

// compare builds the Comparison of g against baseline b.
func compare(g, b *Group, opts Options) *Comparison {
	c := &Comparison{Key: g.Key, Baseline: b.Protocol, N: len(g.Sample), BaselineN: len(b.Sample)}
	c.Ratio = ratio(g.Median, b.Median)
	c.DiffPct = 100 * (c.Ratio - 1)
	c.RatioLow, c.RatioHigh = math.NaN(), math.NaN()
	if c.N >= MinCIN && c.BaselineN >= MinCIN {
		c.RatioLow, c.RatioHigh = RatioCI(g.Sample, b.Sample, opts.Bootstrap, seedFor(opts.Seed, g.Key))
	}
	c.MannWhitney = MannWhitney(g.Sample, b.Sample)
	c.Welch = Welch(g.Completed, b.Completed)
	c.Significant = c.MannWhitney.P < opts.Alpha
	return c
}

// ratio returns a/b, NaN when either is censored or b is 0.
func ratio(a, b float64) float64 {
	if math.IsInf(a, 0) || math.IsInf(b, 0) || b == 0 {
		return math.NaN()
	}
	return a / b
}

// seedFor derives a per-comparison seed, so a comparison's CI does not depend on which other
// groups are in the report.
func seedFor(seed int64, k Key) uint64 {
	h := fnv.New64a()
	h.Write([]byte(k.Page + "\x00" + k.Link + "\x00" + string(k.Mode) + "\x00" + k.Protocol)) // not Settings: CIs stay as they were
	return h.Sum64() ^ uint64(seed)
}

// RatioCI returns the 95% percentile-bootstrap confidence interval of median(x) / median(y)
// (Efron & Tibshirani, An Introduction to the Bootstrap, Chapman & Hall 1993, chapter 13): B
// resamples of each ascending sample with replacement from a PCG generator seeded with seed,
// the type-7 median of each, and the 2.5% and 97.5% type-7 quantiles of the B ratios.
// Censored values (+Inf) are resampled too; a resample whose x median is censored gives ratio
// +Inf, one whose y median is censored gives 0, and one with both censored counts as 0 for the
// lower bound and +Inf for the upper (conservative). Both bounds are NaN for an empty sample or
// B < 1.
func RatioCI(x, y []float64, b int, seed uint64) (lo, hi float64) {
	if len(x) == 0 || len(y) == 0 || b < 1 {
		return math.NaN(), math.NaN()
	}
	rng := rand.New(rand.NewPCG(seed, 0x706c746c6162)) // "pltlab"
	lows, highs := make([]float64, b), make([]float64, b)
	bx, by := make([]float64, len(x)), make([]float64, len(y))
	for i := range b {
		mx, my := resampleMedian(rng, x, bx), resampleMedian(rng, y, by)
		lows[i], highs[i] = bootRatio(mx, my)
	}
	slices.Sort(lows)
	slices.Sort(highs)
	alpha := (1 - Confidence) / 2
	return Quantile(lows, alpha), Quantile(highs, 1-alpha)
}

// resampleMedian draws len(xs) values of xs with replacement into buf and returns their median.
func resampleMedian(rng *rand.Rand, xs, buf []float64) float64 {
	for i := range buf {
		buf[i] = xs[rng.IntN(len(xs))]
	}
	slices.Sort(buf)
	return median(buf)
}

// bootRatio returns the ratio of two resample medians for the lower and the upper bound.
func bootRatio(mx, my float64) (forLow, forHigh float64) {
	xi, yi := math.IsInf(mx, 1), math.IsInf(my, 1)
	switch {
	case xi && yi:
		return 0, math.Inf(1)
	case xi:
		return math.Inf(1), math.Inf(1)
	case yi || my == 0:
		return 0, 0
	}
	return mx / my, mx / my
}
