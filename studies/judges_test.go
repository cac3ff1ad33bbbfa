package studies

import (
	"strings"
	"testing"
)

// TestLowRateLossIntervals: "largest at low rate and with loss" is reproduced only when both
// differences' intervals lie above 0, contradicted when one lies below, and inconclusive when
// the advantage is the same everywhere (the old judge compared two bare means and could only
// reproduce).
func TestLowRateLossIntervals(t *testing.T) {
	st := kakhki()
	plan := st.Plan(Quick)
	obj, lnk := plan.Parts[0].Config, plan.Parts[1].Config
	lowRate := func(l string) bool { return strings.HasPrefix(l, "rate=5mbit") }
	lossy := func(l string) bool { return strings.Contains(l, "loss") }
	for _, tc := range []struct {
		name string
		tcp  func(p, l string) float64
		want Verdict
	}{
		{"largest at low rate and with loss", func(p, l string) float64 {
			switch {
			case lossy(l):
				return 3000
			case lowRate(l):
				return 2000
			}
			return 1200
		}, Reproduced},
		{"smallest at low rate", func(p, l string) float64 {
			switch {
			case lossy(l):
				return 3000
			case lowRate(l):
				return 1050
			}
			return 2000
		}, Contradicted},
		{"the same everywhere", func(p, l string) float64 { return 1300 }, Inconclusive},
	} {
		recs := gridRecords("objects", obj.Pages, obj.Links, func(p, l string) float64 { return 1300 },
			func(p, l string) float64 { return 1000 }, func(p, l string) float64 { return 950 })
		recs = append(recs, gridRecords("links", lnk.Pages, lnk.Links, tc.tcp,
			func(p, l string) float64 { return 1000 }, func(p, l string) float64 { return 950 })...)
		got := verdicts(st, Quick, recs)["low-rate-loss"]
		if got.Verdict != tc.want || !strings.Contains(got.Evidence, "99.5 % interval") {
			t.Errorf("%s: %s (%s), want %s with the intervals", tc.name, got.Verdict, got.Evidence, tc.want)
		}
	}
}

// TestRatioMargin: a ratio of medians matches the paper's when its CI lies within +-10 % of it;
// one whose CI holds the margin's edge is inconclusive, not reproduced.
func TestRatioMargin(t *testing.T) {
	for _, tc := range []struct {
		name string
		h2   float64 // h2's median against h1's 2030 ms (paper 1450: ratio 0.714, margin 0.643..0.786)
		want Verdict
	}{
		{"as published", 1450, Reproduced},
		{"on the margin's edge", 2030 * 0.714 * 1.1, Inconclusive},
		{"20 % off", 2030 * 0.714 * 1.2, Contradicted},
	} {
		got := verdicts(carlucci(), Quick, carlucciRecords(2030, tc.h2, 1140, 1140, 3000, 2500))["lossless-ratios"]
		if got.Verdict != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got.Verdict, got.Evidence, tc.want)
		}
	}
}
