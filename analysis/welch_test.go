package analysis

import (
	"math"
	"testing"
)

// TestWelchRWorkedExample checks R's t.test output published in a Cross Validated answer
// ("Welch's t-test confidence interval", stats.stackexchange.com): ts1 vs ts2 gives
// "Welch Two Sample t-test: t = -1.8325, df = 17.9, p-value = 0.08356".
func TestWelchRWorkedExample(t *testing.T) {
	ts1 := []float64{11, 9, 10, 11, 10, 12, 9, 11, 12, 9}
	ts2 := []float64{11, 13, 10, 13, 12, 9, 11, 12, 12, 11}
	r := Welch(ts1, ts2)
	if !near(r.T, -1.8325, 0.00005) || !near(r.DF, 17.9, 0.05) || !near(r.P, 0.08356, 0.000005) {
		t.Errorf("Welch = t %.5f df %.3f p %.6f, want t -1.8325 df 17.9 p 0.08356", r.T, r.DF, r.P)
	}
}

// TestWelchPublished checks the three worked examples of the Wikipedia article "Welch's t-test"
// (section "Examples", values given there to 2-3 significant digits, so the tolerances are one
// unit of the last digit):
// example 1: t = -2.46, df = 24.9, p = 0.021; example 2: t = -1.57, df = 9.9, p = 0.149;
// example 3: t = -2.22, df = 24.5, p = 0.036.
func TestWelchPublished(t *testing.T) {
	tests := []struct {
		name     string
		a1, a2   []float64
		t, df, p float64
	}{
		{"example 1",
			[]float64{27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4},
			[]float64{27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4},
			-2.46, 24.9, 0.021},
		{"example 2",
			[]float64{17.2, 20.9, 22.6, 18.1, 21.7, 21.4, 23.5, 24.2, 14.7, 21.8},
			[]float64{21.5, 22.8, 21.0, 23.0, 21.6, 23.6, 22.5, 20.7, 23.4, 21.8, 20.7, 21.7, 21.5, 22.5, 23.6, 21.5, 22.5, 23.5, 21.5, 21.8},
			-1.57, 9.9, 0.149},
		{"example 3",
			[]float64{19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0},
			[]float64{28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7, 23.2, 17.5, 20.6, 18.0, 23.9, 21.6, 24.3, 20.4, 23.9, 13.3},
			-2.22, 24.5, 0.036},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Welch(tt.a1, tt.a2)
			if !near(r.T, tt.t, 0.01) || !near(r.DF, tt.df, 0.1) || !near(r.P, tt.p, 0.001) {
				t.Errorf("Welch = t %.4f df %.3f p %.5f, want t %v df %v p %v", r.T, r.DF, r.P, tt.t, tt.df, tt.p)
			}
		})
	}
}

func TestWelchDegenerate(t *testing.T) {
	if r := Welch([]float64{1}, []float64{1, 2}); !math.IsNaN(r.P) {
		t.Errorf("one value: p = %v, want NaN", r.P)
	}
	if r := Welch([]float64{3, 3}, []float64{3, 3, 3}); !math.IsNaN(r.P) {
		t.Errorf("constant: p = %v, want NaN", r.P)
	}
}

// TestWelchCI: the interval is the test's dual (at alpha = the test's p-value its bound touches
// 0), with R's worked example's difference -1.0 at its centre; fewer than two values give NaN
// bounds and two constant samples the estimate itself.
func TestWelchCI(t *testing.T) {
	ts1 := []float64{11, 9, 10, 11, 10, 12, 9, 11, 12, 9}
	ts2 := []float64{11, 13, 10, 13, 12, 9, 11, 12, 12, 11}
	est, lo, hi := WelchCI(ts1, ts2, Welch(ts1, ts2).P)
	if !near(est, -1, 1e-12) || !near(hi, 0, 1e-9) || !near(lo, -2, 1e-9) {
		t.Errorf("at alpha = p: %g [%g, %g], want -1 [-2, 0]", est, lo, hi)
	}
	if _, lo, hi := WelchCI([]float64{1}, []float64{1, 2}, 0.05); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("one value: [%g, %g], want NaN", lo, hi)
	}
	if est, lo, hi := WelchCI([]float64{3, 3}, []float64{2, 2, 2}, 0.05); est != 1 || lo != 1 || hi != 1 {
		t.Errorf("constant: %g [%g, %g], want 1 [1, 1]", est, lo, hi)
	}
}

// TestNormalCI: est ± 1.96 sqrt(variance) at alpha 0.05; NaN bounds for a NaN variance.
func TestNormalCI(t *testing.T) {
	if est, lo, hi := NormalCI(10, 4, 0.05); est != 10 || !near(lo, 10-1.959964*2, 1e-5) || !near(hi, 10+1.959964*2, 1e-5) {
		t.Errorf("NormalCI(10, 4, 0.05) = %g [%g, %g]", est, lo, hi)
	}
	if _, lo, _ := NormalCI(1, math.NaN(), 0.05); !math.IsNaN(lo) {
		t.Errorf("NaN variance: lo %g", lo)
	}
}
