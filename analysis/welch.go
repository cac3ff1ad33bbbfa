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
	d, se2, df := welch(x, y)
	if math.IsNaN(se2) || se2 == 0 {
		return WelchResult{T: math.NaN(), DF: math.NaN(), P: math.NaN()}
	}
	t := d / math.Sqrt(se2)
	p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return WelchResult{T: t, DF: df, P: math.Min(p, 1)}
}

// WelchCI returns mean(x) - mean(y) with its two-sided (1 - alpha) Welch interval, ± t(1 -
// alpha/2, df) sqrt(vx/nx + vy/ny), df Welch-Satterthwaite's (Welch 1947; as Welch). Units are
// x's; the bounds are NaN with fewer than two values in a sample, and equal the estimate for two
// constant samples.
func WelchCI(x, y []float64, alpha float64) (est, lo, hi float64) {
	est, se2, df := welch(x, y)
	if se2 == 0 {
		return est, est, est
	}
	h := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1-alpha/2) * math.Sqrt(se2)
	return est, est - h, est + h
}

// welch returns mean(x) - mean(y), the squared standard error vx/nx + vy/ny of that difference
// and its Welch-Satterthwaite degrees of freedom; NaN error and df with fewer than two values in
// a sample.
func welch(x, y []float64) (d, se2, df float64) {
	mx, sx := MeanSD(x)
	my, sy := MeanSD(y)
	if len(x) < 2 || len(y) < 2 {
		return mx - my, math.NaN(), math.NaN()
	}
	ax, ay := sx*sx/float64(len(x)), sy*sy/float64(len(y))
	se2 = ax + ay
	return mx - my, se2, se2 * se2 / (ax*ax/float64(len(x)-1) + ay*ay/float64(len(y)-1))
}
