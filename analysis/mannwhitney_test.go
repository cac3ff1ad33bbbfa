package analysis

import (
	"math"
	"testing"
)

// Hollander & Wolfe, Nonparametric Statistical Methods (1973), p. 69: permeability constants
// of the human chorioamnion at term (x) and at 12-26 weeks (y). This is the worked example of
// R's wilcox.test documentation: wilcox.test(x, y, alternative = "g") gives W = 35,
// p-value = 0.1272 (exact), so the two-sided exact p-value is 2 x 0.1272 = 0.2544.
var (
	hwX = []float64{0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46}
	hwY = []float64{1.15, 0.88, 0.90, 0.74, 1.21}
)

func TestMannWhitneyHollanderWolfe(t *testing.T) {
	r := MannWhitney(hwX, hwY)
	if r.U != 35 || !r.Exact {
		t.Fatalf("U = %v exact %v, want 35 exact", r.U, r.Exact)
	}
	if !near(r.P, 0.2544, 0.0001) {
		t.Errorf("two-sided p = %.5f, want 0.2544 (2 x 0.1272)", r.P)
	}
	// Symmetric: testing y against x gives U' = n1 n2 - U = 15 and the same p.
	r2 := MannWhitney(hwY, hwX)
	if r2.U != 15 || !near(r2.P, r.P, 1e-12) {
		t.Errorf("reversed: U = %v p = %v, want 15, %v", r2.U, r2.P, r.P)
	}
}

// TestMannWhitneyExactBruteForce checks the exact distribution (with ties) against an
// enumeration of every assignment of ranks to the first sample.
func TestMannWhitneyExactBruteForce(t *testing.T) {
	x := []float64{1, 2, 2, 5, 7}
	y := []float64{2, 3, 5, 5, 8, 9}
	ranks, _ := doubledMidranks(x, y)
	obs := 0
	for _, r := range ranks[:len(x)] {
		obs += r
	}
	var le, ge, total float64
	var rec func(i, k, s int)
	rec = func(i, k, s int) {
		if k == len(x) {
			total++
			if s <= obs {
				le++
			}
			if s >= obs {
				ge++
			}
			return
		}
		if i == len(ranks) {
			return
		}
		rec(i+1, k+1, s+ranks[i])
		rec(i+1, k, s)
	}
	rec(0, 0, 0)
	want := math.Min(1, 2*math.Min(le, ge)/total)
	if got := MannWhitney(x, y).P; !near(got, want, 1e-12) {
		t.Errorf("exact p = %v, brute force %v", got, want)
	}
}

// TestMannWhitneyNormalTies checks the normal approximation with ties against Conover's
// rank-variance form of the tie-corrected variance (Conover 1999, section 5.1, eq. 5.1.3):
// var(T) = n1 n2 / (N (N-1)) sum R_i^2 - n1 n2 (N+1)^2 / (4 (N-1)), an algebraically different
// formula from the one MannWhitney uses.
func TestMannWhitneyNormalTies(t *testing.T) {
	var x, y []float64
	for i := range 25 {
		x = append(x, float64(i/3))   // many ties
		y = append(y, float64(i/3+2)) // shifted
	}
	r := MannWhitney(x, y)
	if r.Exact {
		t.Fatal("want the normal approximation for n = 25")
	}
	ranks, _ := doubledMidranks(x, y)
	n1, n2 := float64(len(x)), float64(len(y))
	n := n1 + n2
	var sumR2, r1 float64
	for i, d := range ranks {
		rk := float64(d) / 2
		sumR2 += rk * rk
		if i < len(x) {
			r1 += rk
		}
	}
	variance := n1*n2/(n*(n-1))*sumR2 - n1*n2*(n+1)*(n+1)/(4*(n-1))
	u := r1 - n1*(n1+1)/2
	z := (math.Abs(u-n1*n2/2) - 0.5) / math.Sqrt(variance)
	want := math.Erfc(z / math.Sqrt2)
	if r.U != u || !near(r.P, want, 1e-12) {
		t.Errorf("U = %v p = %v, want U = %v p = %v", r.U, r.P, u, want)
	}
}

func TestMannWhitneyEdgeCases(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		x, y []float64
		p    float64
	}{
		{"empty", nil, []float64{1}, math.NaN()},
		{"all tied", []float64{1, 1, 1}, []float64{1, 1}, 1},
		{"censored ties", []float64{inf, inf}, []float64{inf, inf, inf}, 1},
		// x all above y: exact p = 2 / C(8, 4) = 2/70.
		{"separated", []float64{5, 6, 7, inf}, []float64{1, 2, 3, 4}, 2.0 / 70},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MannWhitney(tt.x, tt.y).P; !near(got, tt.p, 1e-12) {
				t.Errorf("p = %v, want %v", got, tt.p)
			}
		})
	}
}
