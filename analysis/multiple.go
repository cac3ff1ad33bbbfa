package analysis

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Holm returns which of a family's p-values are significant at family-wise level alpha by
// Holm's step-down procedure (S. Holm, "A simple sequentially rejective multiple test
// procedure", Scand. J. Statist. 6, 1979): sorted ascending, p_(k) is rejected while
// p_(j) <= alpha / (m - j + 1) for every j <= k. The result has ps' length and order; a NaN
// p-value is never significant and counts in m.
func Holm(ps []float64, alpha float64) []bool {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		pa, pb := ps[a], ps[b]
		switch {
		case math.IsNaN(pa) && math.IsNaN(pb):
			return 0
		case math.IsNaN(pa):
			return 1
		case math.IsNaN(pb):
			return -1
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	})
	out := make([]bool, m)
	for j, i := range idx {
		if math.IsNaN(ps[i]) || ps[i] > alpha/float64(m-j) {
			break
		}
		out[i] = true
	}
	return out
}

// BlockBootstrapB is the number of resamples of BlockReps and BlockCI.
const BlockBootstrapB = 4000

// BlockStat is a statistic of one resample of every series of a run, bin-aligned: xs[k] is
// series k resampled.
type BlockStat func(xs [][]float64) float64

// BlockReps returns the mean over runs of stat on the series as measured, and BlockBootstrapB
// moving-block bootstrap replicates of it (Künsch, "The jackknife and the bootstrap for general
// stationary observations", Ann. Statist. 17, 1989): runs[i][k] is run i's series k, equal
// lengths within a run; each run's series are resampled together with the same blocks of block
// bins (so series that share a bottleneck keep their joint behaviour), stat is taken per run
// and averaged over runs. The replicates are seeded by seed, and nil when a run has fewer than
// 2 blocks of data; the estimate is NaN without runs.
func BlockReps(runs [][][]float64, block int, stat BlockStat, seed uint64) (float64, []float64) {
	if len(runs) == 0 {
		return math.NaN(), nil
	}
	var est float64
	short := block < 1
	for _, r := range runs {
		est += stat(r)
		short = short || len(r) == 0 || len(r[0]) < 2*block
	}
	est /= float64(len(runs))
	if short {
		return est, nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x706c746c6162))
	reps := make([]float64, BlockBootstrapB)
	bufs := make([][][]float64, len(runs))
	for i, r := range runs {
		bufs[i] = make([][]float64, len(r))
		for k := range r {
			bufs[i][k] = make([]float64, len(r[0]))
		}
	}
	for b := range reps {
		var sum float64
		for i, r := range runs {
			n := len(r[0])
			for at := 0; at < n; at += block {
				start, l := rng.IntN(n-block+1), min(block, n-at)
				for k := range r {
					copy(bufs[i][k][at:at+l], r[k][start:start+l])
				}
			}
			sum += stat(bufs[i])
		}
		reps[b] = sum / float64(len(runs))
	}
	return est, reps
}

// BlockCI returns BlockReps' estimate and the (1 - alpha) percentile interval of its
// replicates (NaN bounds without replicates).
func BlockCI(runs [][][]float64, block int, stat BlockStat, alpha float64, seed uint64) (est, lo, hi float64) {
	est, reps := BlockReps(runs, block, stat, seed)
	if reps == nil {
		return est, math.NaN(), math.NaN()
	}
	slices.Sort(reps)
	return est, Quantile(reps, alpha/2), Quantile(reps, 1-alpha/2)
}
