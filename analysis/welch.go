package analysis

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// WelchResult is the outcome of Welch's two-sample t-test.
type WelchResult struct {
	// T is the statistic (mean(x) - mean(y)) / sqrt(sx^2/nx + sy^2/ny).
	T float64
	// DF is the Welch-Satterthwaite degrees of freedom.
	DF float64
	// P is the two-sided p-value from Student's t distribution with DF degrees of freedom.
	P float64
}

// Welch runs Welch's unequal-variances t-test of x against y (Welch, "The generalization of
// 'Student's' problem when several different population variances are involved", Biometrika
// 34, 1947): t = (mx - my) / sqrt(vx/nx + vy/ny) with sample variances v, and
// df = (vx/nx + vy/ny)^2 / ((vx/nx)^2/(nx-1) + (vy/ny)^2/(ny-1)) (Satterthwaite, 1946). The
// p-value is 2 P(T_df > |t|) from gonum's Student's t CDF. All fields are NaN with fewer than two
// values in a sample or when both samples are constant; censored (+Inf) values must be removed
// by the caller.
func Welch(x, y []float64) WelchResult {
	nan := WelchResult{T: math.NaN(), DF: math.NaN(), P: math.NaN()}
	if len(x) < 2 || len(y) < 2 {
		return nan
	}
	mx, sx := MeanSD(x)
	my, sy := MeanSD(y)
	ax, ay := sx*sx/float64(len(x)), sy*sy/float64(len(y))
	se2 := ax + ay
	if se2 == 0 {
		return nan
	}
	t := (mx - my) / math.Sqrt(se2)
	df := se2 * se2 / (ax*ax/float64(len(x)-1) + ay*ay/float64(len(y)-1))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	p := 2 * dist.Survival(math.Abs(t))
	return WelchResult{T: t, DF: df, P: math.Min(p, 1)}
}
