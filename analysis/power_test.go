package analysis

import (
	"math"
	"testing"
)

// TestNoether checks Noether's (1987) sample size against hand-computed values. For a normal
// shift of one standard deviation, P(X < Y) = Phi(1/sqrt 2) = 0.76025; at alpha 0.05 two-sided
// and 80 % power N = (1.95996 + 0.84162)^2 / (3 x 0.26025^2) = 38.64 loads in all, 19.3 per arm
// (the t-test needs 16.7 per arm: ratio 0.864 = 3/pi, the Mann-Whitney test's asymptotic
// relative efficiency for normal data). At alpha 0.01 and p = 0.75: 3.41741^2 / (6 x 0.0625) =
// 31.14 per arm, so 32.
func TestNoether(t *testing.T) {
	p := 0.5 * (1 + math.Erf(1/math.Sqrt2/math.Sqrt2))
	if math.Abs(p-0.76025) > 1e-4 {
		t.Fatalf("Phi(1/sqrt2) = %v", p)
	}
	if n := NoetherN(p, 0.05, 0.80, 0.5); math.Abs(n-38.64) > 0.05 {
		t.Errorf("NoetherN(0.760, 0.05, 0.8, 1/2) = %.3f, want 38.64", n)
	}
	if z := zSum(0.01, 0.80); math.Abs(z-3.41741) > 1e-4 {
		t.Errorf("z sum at 0.01 and 80 %% = %.5f, want 3.41741", z)
	}
	if n := NoetherPerArm(0.75, 0.01, 0.80); n != 32 {
		t.Errorf("NoetherPerArm(0.75, 0.01, 0.8) = %d, want 32", n)
	}
	if n := NoetherPerArm(0.5, 0.01, 0.80); n != math.MaxInt32 {
		t.Errorf("no effect needs %d loads, want MaxInt32", n)
	}
	// Detectable is the inverse: 8 and 8 loads detect |p - 1/2| = 3.41741 / sqrt(12 x 64 / 16) = 0.4933.
	if d := NoetherDetectable(8, 8, 0.01, 0.80); math.Abs(d-0.49326) > 1e-4 {
		t.Errorf("NoetherDetectable(8, 8) = %.5f, want 0.49326", d)
	}
}

// TestShiftPower checks the power from the recorded spread: two samples spread evenly over
// +-1 % detect a shift beyond that spread only, and need more loads the smaller the effect.
func TestShiftPower(t *testing.T) {
	a := []float64{990, 995, 1000, 1005, 1010, 992, 998, 1002}
	b := []float64{1000, 1004, 1009, 995, 990, 1001, 1007, 993}
	e := spread(a, b)
	if p := shiftP(e, 1); math.Abs(p-0.5) > 0.03 {
		t.Errorf("no shift: P(X<Y) = %v, want about 1/2", p)
	}
	if p := shiftP(e, 0.5); p != 1 {
		t.Errorf("halved: P(X<Y) = %v, want 1", p)
	}
	mde := MWDetectable(a, b, 0.01)
	if !(mde > 0.97 && mde < 1) {
		t.Errorf("8+8 loads with +-1 %% spread detect ratio %v, want in (0.97, 1)", mde)
	}
	n1, n2 := MWLoadsPerArm(a, b, 0.995, 0.01, minLoads), MWLoadsPerArm(a, b, 0.98, 0.01, minLoads)
	if !(n1 > n2 && n2 >= minLoads) {
		t.Errorf("loads per arm at 0.995 %d, at 0.98 %d: want more for the smaller effect, at least %d", n1, n2, minLoads)
	}
	if MWLoadsPerArm(a, b, 1, 0.01, minLoads) != math.MaxInt32 {
		t.Error("no effect must need MaxInt32 loads")
	}
	// Welch: sd 100 both arms, delta 100: 3.41741^2 x 2 = 23.36, so 24 per arm.
	if n := WelchPerArm(100, 100, 100, 0.01, minLoads); n != 24 {
		t.Errorf("WelchPerArm(100, 100, 100) = %d, want 24", n)
	}
	if d := WelchDetectable(100, 100, 24, 24, 0.01); math.Abs(d-98.65) > 0.05 {
		t.Errorf("WelchDetectable(100, 100, 24, 24) = %.2f, want 98.65", d)
	}
}

// minLoads is the floor the tests give (the studies' MinLoads).
const minLoads = 5
