// Package quantity is the one conversion and text format of each quantity pltlab prints (times in
// ms and s, ratios, percentages, p-values, estimates with intervals, run-time estimates); the
// standard library only, so every package, the self-check and the studies alike, prints the same
// strings.
package quantity

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// Ms returns d in milliseconds, fractions kept: Ms(1500 * time.Microsecond) = 1.5.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// FormatMs formats a time in ms with one decimal ("1234.5"), "n/a" for NaN and ">= DEADLINE"
// (ms, no decimals) for a censored statistic (+Inf): the one format of a PLT statistic in a
// table, used by the report's tables, the view and the studies' tables, so the same file prints
// the same strings wherever it is read. -Inf prints "-Inf".
func FormatMs(v, deadline float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 1):
		return ">= " + strconv.FormatFloat(deadline, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// FormatMsUnit formats a time in ms with prec decimals and its unit, for prose: "12.34 ms"
// (prec 2), "1234 ms" (prec 0), "-0.50 ms"; "n/a" for NaN, "+Inf ms" for +Inf.
func FormatMsUnit(ms float64, prec int) string {
	if math.IsNaN(ms) {
		return "n/a"
	}
	return strconv.FormatFloat(ms, 'f', prec, 64) + " ms"
}

// FormatCI formats a CI in ms as "[lo, hi]" (FormatMs each), "n/a (n<6)" when not computable
// (lo is NaN).
func FormatCI(lo, hi, deadline float64) string {
	if math.IsNaN(lo) {
		return "n/a (n<6)"
	}
	return "[" + FormatMs(lo, deadline) + ", " + FormatMs(hi, deadline) + "]"
}

// FormatSec formats a time given in ms as seconds with two decimals ("2.03 s"), for people:
// ">= DEADLINE s" for a censored statistic (+Inf) when deadlineMs > 0, "n/a" for NaN and for
// any other infinity. The one seconds format of the reports, the reference tables and the
// studies' evidence.
func FormatSec(ms, deadlineMs float64) string {
	switch {
	case math.IsInf(ms, 1) && deadlineMs > 0:
		return fmt.Sprintf(">= %.2f s", deadlineMs/1000)
	case math.IsNaN(ms) || math.IsInf(ms, 0):
		return "n/a"
	}
	return fmt.Sprintf("%.2f s", ms/1000)
}

// FormatRatio formats a ratio (of medians, of means, to a paper's) with two decimals ("0.71"),
// "n/a" for NaN or an infinity: the one ratio format of the studies' evidence and the
// reference tables' published ratios.
func FormatRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", r)
}

// FormatPct formats a percent difference with its sign and one decimal: "+3.1 %", "-48.3 %";
// "n/a" for NaN or an infinity. The one percent-difference format of the report, the heat map
// and the studies.
func FormatPct(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f %%", v)
}

// FormatInterval formats an estimate and its interval, each with the fmt verb given (which may
// carry a unit: "%+.1f %%"): "0.93 [0.91, 0.95]" for verb "%.2f"; "0.93 (no interval)" when lo
// is NaN.
func FormatInterval(verb string, est, lo, hi float64) string {
	if math.IsNaN(lo) {
		return fmt.Sprintf(verb+" (no interval)", est)
	}
	return fmt.Sprintf(verb+" ["+verb+", "+verb+"]", est, lo, hi)
}

// PFloor is the smallest p-value printed as a number: below it (and for a p-value that
// underflowed to 0) reports print "< 1e-300".
const PFloor = 1e-300

// FormatP formats a p-value: 4 decimals ("0.0123"), scientific notation below 0.0001 ("4.2e-05"),
// "< 1e-300" below PFloor (and for a p-value that underflowed to 0, or a negative one), "n/a"
// for NaN. The one p-value format of the report, the view and the studies' findings.
func FormatP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "n/a"
	case p < PFloor:
		return "< 1e-300"
	case p < 1e-4:
		return strconv.FormatFloat(p, 'e', 1, 64)
	}
	return strconv.FormatFloat(p, 'f', 4, 64)
}

// FormatEstimate formats a run time (an estimate, or what a run took) for people: "6 min 18 s"
// below 10 minutes (rounded to the second), "12 min" below 2 hours, "3.5 h" below 3 days, else
// "41 d". A negative duration prints as "0 min -5 s" (whole minutes and seconds toward zero).
func FormatEstimate(d time.Duration) string {
	switch {
	case d < 10*time.Minute:
		d = d.Round(time.Second)
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	case d < 2*time.Hour:
		return fmt.Sprintf("%.0f min", d.Minutes())
	case d < 72*time.Hour:
		return fmt.Sprintf("%.1f h", d.Hours())
	}
	return fmt.Sprintf("%.0f d", d.Hours()/24)
}
