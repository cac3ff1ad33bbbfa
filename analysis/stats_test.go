package analysis

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool {
	if math.IsInf(a, 1) && math.IsInf(b, 1) || math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	return math.Abs(a-b) <= tol
}

func TestQuantileType7(t *testing.T) {
	ten := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	inf := math.Inf(1)
	// Hand-computed with h = (n-1)p: for n = 10, p = 0.05 gives h = 0.45 -> 1 + 0.45 (2-1) = 1.45.
	tests := []struct {
		name string
		xs   []float64
		p    float64
		want float64
	}{
		{"median even", ten, 0.5, 5.5},
		{"p5", ten, 0.05, 1.45},
		{"p25", ten, 0.25, 3.25},
		{"p75", ten, 0.75, 7.75},
		{"p95", ten, 0.95, 9.55},
		{"min", ten, 0, 1},
		{"max", ten, 1, 10},
		{"median odd", []float64{3, 7, 100}, 0.5, 7},
		{"single", []float64{42}, 0.3, 42},
		{"empty", nil, 0.5, math.NaN()},
		{"median below censored", []float64{1, 2, 3, inf, inf}, 0.5, 3},
		{"median among censored", []float64{1, 2, inf, inf}, 0.5, inf},
		{"p25 before censored", []float64{1, 2, inf, inf}, 0.25, 1.75},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quantile(tt.xs, tt.p); !near(got, tt.want, 1e-12) {
				t.Errorf("Quantile(%v, %v) = %v, want %v", tt.xs, tt.p, got, tt.want)
			}
		})
	}
}

func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs
}

func TestMedianCI(t *testing.T) {
	inf := math.Inf(1)
	// Binomial(n, 1/2) tails by hand: n=10: P(B<=1) = 11/1024 = 0.0107 <= 0.025 < P(B<=2) = 56/1024,
	// so r = 2: [x(2), x(9)], coverage 1 - 22/1024. n=20: P(B<=5) = 21700/2^20 = 0.0207 <= 0.025 <
	// P(B<=6) = 0.0577, so r = 6: [x(6), x(15)] (Conover 1999, table A3 gives the same pair).
	// n=6: P(B<=0) = 1/64, r = 1: [x(1), x(6)]; n=5: P(B<=0) = 1/32 > 0.025: no interval.
	tests := []struct {
		name         string
		xs           []float64
		lo, hi, cove float64
	}{
		{"n10", seq(10), 2, 9, 1 - 22.0/1024},
		{"n20", seq(20), 6, 15, 1 - 2*21700.0/1048576},
		{"n6", seq(6), 1, 6, 1 - 2.0/64},
		{"n5", seq(5), math.NaN(), math.NaN(), math.NaN()},
		{"censored top", append(seq(8), inf, inf), 2, inf, 1 - 22.0/1024},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi, cov := MedianCI(tt.xs, 0.95)
			if !near(lo, tt.lo, 0) || !near(hi, tt.hi, 0) || !near(cov, tt.cove, 1e-12) {
				t.Errorf("MedianCI = [%v, %v] coverage %v, want [%v, %v] coverage %v", lo, hi, cov, tt.lo, tt.hi, tt.cove)
			}
		})
	}
}

func TestMeanSD(t *testing.T) {
	// Mean 40/8 = 5; squared deviations sum to 32; sample SD sqrt(32/7).
	m, sd := MeanSD([]float64{2, 4, 4, 4, 5, 5, 7, 9})
	if m != 5 || !near(sd, math.Sqrt(32.0/7), 1e-12) {
		t.Errorf("MeanSD = %v, %v; want 5, %v", m, sd, math.Sqrt(32.0/7))
	}
	if m, sd := MeanSD([]float64{3}); m != 3 || !math.IsNaN(sd) {
		t.Errorf("MeanSD one value = %v, %v; want 3, NaN", m, sd)
	}
}

func TestRatioCI(t *testing.T) {
	x := []float64{90, 95, 100, 105, 110, 92, 97, 103, 108, 100}
	y := []float64{180, 190, 200, 210, 220, 184, 194, 206, 216, 200}
	// y = 2x exactly, so every paired-free resample ratio is near 1/2 and the CI must contain 0.5.
	lo, hi := RatioCI(x, y, 2000, 1)
	if !(lo < 0.5 && 0.5 < hi) || lo < 0.4 || hi > 0.6 {
		t.Errorf("RatioCI = [%v, %v], want around 0.5", lo, hi)
	}
	lo2, hi2 := RatioCI(x, y, 2000, 1)
	if lo != lo2 || hi != hi2 {
		t.Errorf("RatioCI not reproducible with the same seed")
	}
	if lo, hi := RatioCI(nil, y, 10, 1); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("RatioCI(empty) = %v, %v; want NaN", lo, hi)
	}
	// Constant samples: every resample gives 100/200 exactly.
	lo, hi = RatioCI([]float64{100, 100, 100}, []float64{200, 200}, 100, 3)
	if lo != 0.5 || hi != 0.5 {
		t.Errorf("RatioCI(constant) = [%v, %v], want [0.5, 0.5]", lo, hi)
	}
}

func TestBinomCDF(t *testing.T) {
	if got := binomCDF(2, 10); !near(got, 56.0/1024, 1e-15) {
		t.Errorf("binomCDF(2, 10) = %v, want 56/1024", got)
	}
	if binomCDF(-1, 3) != 0 || binomCDF(3, 3) != 1 {
		t.Error("binomCDF bounds")
	}
}

// TestMeanCI: the Student's t interval of a mean (1..5: mean 3, sd 1.581, t(0.975, 4) =
// 2.776, half-width 1.963); no interval for one value; a constant sample's is its mean.
func TestMeanCI(t *testing.T) {
	m, lo, hi := MeanCI([]float64{1, 2, 3, 4, 5}, 0.95)
	if m != 3 || math.Abs(lo-1.0368) > 1e-4 || math.Abs(hi-4.9632) > 1e-4 {
		t.Errorf("1..5: %v [%v, %v], want 3 [1.0368, 4.9632]", m, lo, hi)
	}
	if m, lo, hi := MeanCI([]float64{9.4}, 0.95); m != 9.4 || !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("one value: %v [%v, %v]", m, lo, hi)
	}
	if m, lo, hi := MeanCI([]float64{2, 2, 2}, 0.95); m != 2 || lo != 2 || hi != 2 {
		t.Errorf("constant: %v [%v, %v]", m, lo, hi)
	}
}
