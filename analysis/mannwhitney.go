package analysis

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// MannWhitneyExactBelow is the sample size under which (for both samples) MannWhitney uses the
// exact permutation distribution instead of the normal approximation.
const MannWhitneyExactBelow = 20

// MWResult is the outcome of a two-sided Mann-Whitney U test.
type MWResult struct {
	// U is the statistic of the first sample: R1 - n1(n1+1)/2, R1 its rank sum (midranks for ties).
	U float64
	// Z is the standardised statistic of the normal approximation (NaN when Exact).
	Z float64
	// P is the two-sided p-value.
	P float64
	// Exact is true when P comes from the exact permutation distribution.
	Exact bool
}

// MannWhitney runs the two-sided Mann-Whitney U (Wilcoxon rank-sum) test of x against y (Mann &
// Whitney, Ann. Math. Statist. 18(1), 1947). Ties get midranks; censored values (+Inf) tie with
// each other above every finite value, which is Gehan's generalisation for a common censoring
// time. When both samples have fewer than MannWhitneyExactBelow values the p-value is exact:
// twice the smaller tail of the permutation distribution of the rank sum given the observed
// ranks (so it stays exact with ties), capped at 1, as R's wilcox.test does without ties.
// Otherwise it uses the normal approximation with the tie-corrected variance
// n1 n2/12 [(N+1) - sum(t^3-t)/(N(N-1))] (Lehmann, Nonparametrics, 1975, p. 20) and a 0.5
// continuity correction (R's default). P is NaN when a sample is empty.
func MannWhitney(x, y []float64) MWResult {
	n1, n2 := len(x), len(y)
	if n1 == 0 || n2 == 0 {
		return MWResult{U: math.NaN(), Z: math.NaN(), P: math.NaN()}
	}
	ranks2, ties := doubledMidranks(x, y)
	r1 := 0 // doubled rank sum of x
	for _, r := range ranks2[:n1] {
		r1 += r
	}
	u := float64(r1)/2 - float64(n1*(n1+1))/2
	if n1 < MannWhitneyExactBelow && n2 < MannWhitneyExactBelow {
		return MWResult{U: u, Z: math.NaN(), P: exactRankSumP(ranks2, n1, r1), Exact: true}
	}
	return mwNormal(u, n1, n2, ties)
}

// mwNormal returns the normal-approximation result for U with the tie term ties = sum(t^3-t).
func mwNormal(u float64, n1, n2 int, ties float64) MWResult {
	fn1, fn2 := float64(n1), float64(n2)
	n := fn1 + fn2
	variance := fn1 * fn2 / 12 * ((n + 1) - ties/(n*(n-1)))
	mu := fn1 * fn2 / 2
	if variance <= 0 {
		return MWResult{U: u, Z: 0, P: 1}
	}
	d := math.Abs(u-mu) - 0.5
	if d < 0 {
		d = 0
	}
	z := d / math.Sqrt(variance)
	if u < mu {
		z = -z
	}
	p := 2 * distuv.UnitNormal.Survival(math.Abs(z))
	return MWResult{U: u, Z: z, P: math.Min(p, 1)}
}

// doubledMidranks ranks the concatenation of x and y from 1 and returns twice each value's
// midrank (an integer), in the order x then y, and the tie term sum(t^3 - t) over tie groups.
func doubledMidranks(x, y []float64) ([]int, float64) {
	all := append(append(make([]float64, 0, len(x)+len(y)), x...), y...)
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return all[idx[a]] < all[idx[b]] })
	ranks := make([]int, len(all))
	ties := 0.0
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && all[idx[j]] == all[idx[i]] {
			j++
		}
		// positions i..j-1 (ranks i+1..j) share the midrank (i+1+j)/2; doubled: i+1+j.
		for k := i; k < j; k++ {
			ranks[idx[k]] = i + 1 + j
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	return ranks, ties
}

// exactRankSumP returns the two-sided exact p-value of the doubled rank sum obs of n1 values
// drawn without replacement from the doubled ranks: min(1, 2 min(P(S <= obs), P(S >= obs))).
// Counts are float64 (exact up to 2^53, enough for both samples below 20: C(38,19) < 2^36).
func exactRankSumP(ranks []int, n1, obs int) float64 {
	maxSum := 0
	for _, r := range ranks {
		maxSum += r
	}
	// ways[j][s]: number of j-subsets of the ranks seen so far with doubled sum s.
	ways := make([][]float64, n1+1)
	for j := range ways {
		ways[j] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for _, r := range ranks {
		for j := n1; j >= 1; j-- {
			prev, cur := ways[j-1], ways[j]
			for s := maxSum; s >= r; s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	total, le, ge := 0.0, 0.0, 0.0
	for s, w := range ways[n1] {
		total += w
		if s <= obs {
			le += w
		}
		if s >= obs {
			ge += w
		}
	}
	return math.Min(1, 2*math.Min(le, ge)/total)
}
