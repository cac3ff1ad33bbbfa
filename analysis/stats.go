package analysis

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Censored is the value a timed-out (right-censored) load takes in a sorted sample: it sorts
// above every completed load. Quantiles that depend on it come out as Censored too.
var Censored = math.Inf(1)

// Quantile returns the p-quantile (0 <= p <= 1) of the ascending sample xs using definition 7 of
// Hyndman & Fan, "Sample Quantiles in Statistical Packages", The American Statistician 50(4),
// 1996 (the default of R and NumPy): with h = (n-1)p, Q = x[floor(h)] + (h-floor(h)) *
// (x[floor(h)+1] - x[floor(h)]) (0-based). It returns NaN for an empty sample, and Censored
// (+Inf) when an order statistic with non-zero weight is censored.
func Quantile(xs []float64, p float64) float64 {
	n := len(xs)
	if n == 0 || math.IsNaN(p) {
		return math.NaN()
	}
	h := float64(n-1) * math.Min(math.Max(p, 0), 1)
	lo := int(math.Floor(h))
	frac := h - float64(lo)
	if frac == 0 || lo+1 >= n {
		return xs[lo]
	}
	a, b := xs[lo], xs[lo+1]
	if math.IsInf(b, 1) {
		return Censored
	}
	return a + float64(frac*(b-a)) // explicit conversion: no fused multiply-add, same bits on every arch
}

// MedianCI returns the distribution-free confidence interval of the median of the ascending
// sample xs at level conf: [x(r), x(n-r+1)] (1-based order statistics) with r the largest
// integer such that P(B <= r-1) <= (1-conf)/2 for B ~ Binomial(n, 1/2); the interval covers the
// population median with probability 1 - 2 P(B <= r-1) >= conf whatever the continuous
// distribution (Conover, Practical Nonparametric Statistics, 3rd ed., Wiley 1999, section 3.2,
// "confidence interval for a quantile"; Hahn & Meeker, Statistical Intervals, Wiley 1991,
// section 5.2). Example: n = 10 gives r = 2, [x(2), x(9)], coverage 0.9785. With fewer than 6
// values no interval reaches 95% and both bounds are NaN. Censored values (+Inf) at the top make
// the upper bound Censored.
func MedianCI(xs []float64, conf float64) (lo, hi, coverage float64) {
	n := len(xs)
	tail := (1 - conf) / 2
	r := 0 // r-1 = largest k with P(B <= k) <= tail
	for k := 0; k < n/2; k++ {
		if binomCDF(k, n) > tail {
			break
		}
		r = k + 1
	}
	if r == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	return xs[r-1], xs[n-r], 1 - 2*binomCDF(r-1, n)
}

// binomCDF returns P(B <= k) for B ~ Binomial(n, 1/2), summed in log space (exact to float64
// rounding for any n).
func binomCDF(k, n int) float64 {
	if k < 0 {
		return 0
	}
	if k >= n {
		return 1
	}
	sum := 0.0
	ln2 := float64(n) * math.Ln2
	for i := 0; i <= k; i++ {
		sum += math.Exp(lnChoose(n, i) - ln2)
	}
	return math.Min(sum, 1)
}

// lnChoose returns ln(n choose k).
func lnChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// MeanSD returns the arithmetic mean and the sample standard deviation (n-1 denominator) of xs;
// the mean is NaN for an empty sample and the SD is NaN for fewer than two values.
func MeanSD(xs []float64) (mean, sd float64) {
	n := float64(len(xs))
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= n
	if n < 2 {
		return mean, math.NaN()
	}
	ss := 0.0
	for _, x := range xs {
		ss += float64((x - mean) * (x - mean))
	}
	return mean, math.Sqrt(ss / (n - 1))
}

// median returns the type-7 median of an ascending sample.
func median(xs []float64) float64 { return Quantile(xs, 0.5) }

// NormalCI returns est with its two-sided (1 - alpha) normal (Wald) interval, est ±
// z(1 - alpha/2) sqrt(variance), z the standard normal quantile (NormalQuantile): the interval of
// a delta-method variance (Casella and Berger, Statistical Inference, 2002, section 5.5.4).
// variance is in est's units squared; the bounds are NaN for a NaN variance.
func NormalCI(est, variance, alpha float64) (_, lo, hi float64) {
	h := NormalQuantile(1-alpha/2) * math.Sqrt(variance)
	return est, est - h, est + h
}

// MeanCI returns the mean of xs and its Student's t confidence interval at level conf
// ("Student", "The probable error of a mean", Biometrika 6, 1908): mean ± t(1 - (1-conf)/2,
// n-1) x sd / sqrt(n), sd the sample standard deviation (MeanSD). lo and hi are NaN with
// fewer than two values; for a constant sample they equal the mean. Units are xs'.
func MeanCI(xs []float64, conf float64) (mean, lo, hi float64) {
	mean, sd := MeanSD(xs)
	if len(xs) < 2 {
		return mean, math.NaN(), math.NaN()
	}
	h := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(xs) - 1)}.Quantile(1-(1-conf)/2) * sd / math.Sqrt(float64(len(xs)))
	return mean, mean - h, mean + h
}
