package analysis

import (
	"math"
	"slices"
)

// Power is the power every inconclusive verdict is computed for: the probability of a
// significant result (p < alpha) when the effect is real (80 %, the convention of J. Cohen,
// "Statistical Power Analysis for the Behavioral Sciences", 2nd ed., 1988, section 2.4).
const Power = 0.80

// zQuantile is the standard normal quantile: Phi^-1(p) = sqrt(2) erfinv(2p - 1).
func NormalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// zSum is z_{1-alpha/2} + z_{power}: the two-sided test's critical value plus the power's
// quantile (2.5758 + 0.8416 = 3.4174 at alpha 0.01 and 80 % power).
func zSum(alpha, power float64) float64 { return NormalQuantile(1-alpha/2) + NormalQuantile(power) }

// NoetherN is the total sample size N = (z_{1-alpha/2} + z_{power})^2 / (12 c (1 - c) (p - 1/2)^2)
// a two-sided Wilcoxon-Mann-Whitney test needs to reach the power at level alpha when
// P(X < Y) = p and a fraction c of the N loads is in the first arm (G. E. Noether, "Sample size
// determination for some common nonparametric tests", JASA 82(398), 1987, pp. 645-647,
// formula (3)). +Inf when p = 1/2 (no effect).
func NoetherN(p, alpha, power, c float64) float64 {
	d := p - 0.5
	if d == 0 {
		return math.Inf(1)
	}
	z := zSum(alpha, power)
	return z * z / (12 * c * (1 - c) * d * d)
}

// NoetherPerArm is NoetherN with equal arms (c = 1/2), per arm and rounded up:
// n = ceil((z_{1-alpha/2} + z_{power})^2 / (6 (p - 1/2)^2)).
func NoetherPerArm(p, alpha, power float64) int {
	n := NoetherN(p, alpha, power, 0.5) / 2
	if math.IsInf(n, 1) || n > 1e9 {
		return math.MaxInt32
	}
	return int(math.Ceil(n - 1e-9))
}

// NoetherDetectable inverts NoetherN for arms of n1 and n2 loads: the |P(X < Y) - 1/2| the test
// detects with the power, (z_{1-alpha/2} + z_{power}) / sqrt(12 n1 n2 / (n1 + n2)).
func NoetherDetectable(n1, n2 int, alpha, power float64) float64 {
	if n1 <= 0 || n2 <= 0 {
		return math.Inf(1)
	}
	return zSum(alpha, power) / math.Sqrt(12*float64(n1)*float64(n2)/float64(n1+n2))
}

// spread is the recorded spread of two samples on the log scale: each PLT's log minus the log
// of its sample's median, pooled. A shift of this distribution by log r models a ratio of
// medians r with the spread the loads showed (the location-shift model of the Mann-Whitney
// test, on the log scale because PLTs scale with the link).
func spread(a, b []float64) []float64 {
	var out []float64
	for _, s := range [][]float64{a, b} {
		var fin []float64
		for _, v := range s {
			if v > 0 && !math.IsInf(v, 0) && !math.IsNaN(v) {
				fin = append(fin, math.Log(v))
			}
		}
		if len(fin) == 0 {
			continue
		}
		slices.Sort(fin)
		m := (fin[(len(fin)-1)/2] + fin[len(fin)/2]) / 2
		for _, v := range fin {
			out = append(out, v-m)
		}
	}
	slices.Sort(out)
	return out
}

// shiftP is P(X < Y) (ties counted 1/2) for X = e_i + log r and Y = e_j drawn from the pooled
// spread e (i != j): the Mann-Whitney relative effect of a ratio of medians r (< 1: X faster).
func shiftP(e []float64, r float64) float64 {
	n := len(e)
	if n < 2 {
		return 0.5
	}
	s := math.Log(r)
	var less, ties float64
	for i, x := range e {
		for j, y := range e {
			if i == j {
				continue
			}
			switch d := x + s - y; {
			case math.Abs(d) < 1e-12:
				ties++
			case d < 0:
				less++
			}
		}
	}
	return (less + ties/2) / float64(n*(n-1))
}

// MWLoadsPerArm is the number of loads per arm a two-sided Mann-Whitney test at alpha needs to
// detect a ratio of medians r with Power, for PLTs spread like the samples a and b
// (NoetherPerArm at p = shiftP(spread, r)), at least floor; math.MaxInt32 when r is 1 or the
// spread is empty.
func MWLoadsPerArm(a, b []float64, r, alpha float64, floor int) int {
	e := spread(a, b)
	if len(e) < 2 || r <= 0 || r == 1 || math.IsNaN(r) {
		return math.MaxInt32
	}
	p := shiftP(e, r)
	if r > 1 {
		p = 1 - p
	}
	return max(NoetherPerArm(p, alpha, Power), floor)
}

// MWDetectable is the smallest ratio of medians below 1 (the first arm faster) that a
// two-sided Mann-Whitney test at alpha detects with Power from n1 and n2 loads spread like a and
// b: the r with shiftP(spread, r) = 1/2 + NoetherDetectable(n1, n2), found by bisection on
// log r (NaN without a spread; 0 when no shift of the recorded spread is large enough, which
// cannot happen once |p - 1/2| < 1/2).
func MWDetectable(a, b []float64, alpha float64) float64 {
	e := spread(a, b)
	if len(e) < 2 {
		return math.NaN()
	}
	want := 0.5 + NoetherDetectable(len(a), len(b), alpha, Power)
	if want >= 1 {
		return 0
	}
	lo, hi := -10.0, 0.0 // log r: P(X<Y) falls from ~1 at lo to 1/2 at hi
	for range 100 {
		mid := (lo + hi) / 2
		if shiftP(e, math.Exp(mid)) >= want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp(lo)
}

// WelchPerArm is the number of loads per arm a two-sided test of means at alpha needs to detect
// a difference delta (same unit as the standard deviations sd1, sd2) with Power, by the normal
// approximation n = (z_{1-alpha/2} + z_{power})^2 (sd1^2 + sd2^2) / delta^2 (S.-C. Chow, J. Shao,
// H. Wang, "Sample Size Calculations in Clinical Research", 2nd ed., 2008, section 3.2.1, with
// unequal variances); at least floor, math.MaxInt32 for delta 0.
func WelchPerArm(sd1, sd2, delta, alpha float64, floor int) int {
	if delta == 0 || math.IsNaN(delta) {
		return math.MaxInt32
	}
	z := zSum(alpha, Power)
	n := z * z * (sd1*sd1 + sd2*sd2) / (delta * delta)
	if n > 1e9 || math.IsNaN(n) {
		return math.MaxInt32
	}
	return max(int(math.Ceil(n)), floor)
}

// WelchDetectable is the smallest difference of means a two-sided test at alpha detects with
// Power from n1 and n2 loads of standard deviations sd1 and sd2: (z_{1-alpha/2} + z_{power})
// sqrt(sd1^2/n1 + sd2^2/n2) (the inverse of WelchPerArm).
func WelchDetectable(sd1, sd2 float64, n1, n2 int, alpha float64) float64 {
	if n1 <= 0 || n2 <= 0 {
		return math.Inf(1)
	}
	return zSum(alpha, Power) * math.Sqrt(sd1*sd1/float64(n1)+sd2*sd2/float64(n2))
}
