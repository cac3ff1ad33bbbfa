package studies

import "github.com/pltlab/pltlab/analysis"

// The power statistics are analysis's (analysis/power.go, with their sources); these bind the
// studies' conventions: Alpha (0.01, Kakhki et al.) and at least MinLoads loads per arm.

// MWLoadsPerArm is analysis.MWLoadsPerArm at Alpha, at least MinLoads.
func MWLoadsPerArm(a, b []float64, r float64) int {
	return analysis.MWLoadsPerArm(a, b, r, Alpha, MinLoads)
}

// MWDetectable is analysis.MWDetectable at Alpha.
func MWDetectable(a, b []float64) float64 { return analysis.MWDetectable(a, b, Alpha) }

// WelchPerArm is analysis.WelchPerArm at Alpha, at least MinLoads.
func WelchPerArm(sd1, sd2, delta float64) int {
	return analysis.WelchPerArm(sd1, sd2, delta, Alpha, MinLoads)
}

// WelchDetectable is analysis.WelchDetectable at Alpha.
func WelchDetectable(sd1, sd2 float64, n1, n2 int) float64 {
	return analysis.WelchDetectable(sd1, sd2, n1, n2, Alpha)
}
