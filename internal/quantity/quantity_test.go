package quantity

import (
	"math"
	"testing"
	"time"
)

var (
	nan  = math.NaN()
	inf  = math.Inf(1)
	ninf = math.Inf(-1)
)

func TestMs(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want float64
	}{{0, 0}, {1500 * time.Microsecond, 1.5}, {2 * time.Second, 2000}, {-time.Millisecond, -1}, {1, 1e-6}} {
		if got := Ms(tc.d); got != tc.want {
			t.Errorf("Ms(%v) = %v, want %v", tc.d, got, tc.want)
		}
	}
}

// check runs a table of formatter cases: each name is the case, got the formatter's string.
func check(t *testing.T, cases []struct{ name, got, want string }) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

func TestFormatMs(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"one decimal", FormatMs(1234.56, 60000), "1234.6"},
		{"zero", FormatMs(0, 60000), "0.0"},
		{"negative", FormatMs(-3.25, 60000), "-3.2"},
		{"NaN", FormatMs(nan, 60000), "n/a"},
		{"censored", FormatMs(inf, 60000), ">= 60000"},
		{"censored, fractional deadline", FormatMs(inf, 1500.4), ">= 1500"},
		{"-Inf", FormatMs(ninf, 60000), "-Inf"},
	})
}

func TestFormatMsUnit(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"two decimals", FormatMsUnit(12.345, 2), "12.35 ms"},
		{"no decimals", FormatMsUnit(1233.5, 0), "1234 ms"},
		{"negative", FormatMsUnit(-0.5, 2), "-0.50 ms"},
		{"from a duration", FormatMsUnit(Ms(51700*time.Microsecond), 2), "51.70 ms"},
		{"NaN", FormatMsUnit(nan, 0), "n/a"},
		{"+Inf", FormatMsUnit(inf, 0), "+Inf ms"},
		{"-Inf", FormatMsUnit(ninf, 2), "-Inf ms"},
	})
}

func TestFormatCI(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"interval", FormatCI(1000, 1100.25, 60000), "[1000.0, 1100.2]"},
		{"negative", FormatCI(-1, 1, 60000), "[-1.0, 1.0]"},
		{"not computable", FormatCI(nan, nan, 60000), "n/a (n<6)"},
		{"censored upper end", FormatCI(1000, inf, 60000), "[1000.0, >= 60000]"},
	})
}

func TestFormatSec(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"two decimals", FormatSec(2031, 0), "2.03 s"},
		{"negative", FormatSec(-500, 0), "-0.50 s"},
		{"censored", FormatSec(inf, 60000), ">= 60.00 s"},
		{"+Inf without a deadline", FormatSec(inf, 0), "n/a"},
		{"-Inf", FormatSec(ninf, 60000), "n/a"},
		{"NaN", FormatSec(nan, 60000), "n/a"},
	})
}

func TestFormatRatio(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"two decimals", FormatRatio(0.7149), "0.71"},
		{"above one", FormatRatio(1.4), "1.40"},
		{"negative", FormatRatio(-0.5), "-0.50"},
		{"NaN", FormatRatio(nan), "n/a"},
		{"+Inf", FormatRatio(inf), "n/a"},
		{"-Inf", FormatRatio(ninf), "n/a"},
	})
}

func TestFormatPct(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"positive", FormatPct(3.14), "+3.1 %"},
		{"negative", FormatPct(-48.28), "-48.3 %"},
		{"zero", FormatPct(0), "+0.0 %"},
		{"NaN", FormatPct(nan), "n/a"},
		{"+Inf", FormatPct(inf), "n/a"},
		{"-Inf", FormatPct(ninf), "n/a"},
	})
}

func TestFormatInterval(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"ratio", FormatInterval("%.2f", 0.93, 0.91, 0.95), "0.93 [0.91, 0.95]"},
		{"signed percent", FormatInterval("%+.1f %%", -3, -5.25, -0.75), "-3.0 % [-5.2 %, -0.8 %]"},
		{"no interval", FormatInterval("%.3f", 1.5, nan, nan), "1.500 (no interval)"},
		{"NaN estimate", FormatInterval("%.2f", nan, 0.1, 0.2), "NaN [0.10, 0.20]"},
		{"infinite end", FormatInterval("%.2f", 1, 0, inf), "1.00 [0.00, +Inf]"},
	})
}

func TestFormatP(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"four decimals", FormatP(0.01234), "0.0123"},
		{"one", FormatP(1), "1.0000"},
		{"at 1e-4", FormatP(1e-4), "0.0001"},
		{"scientific below 1e-4", FormatP(4.2e-5), "4.2e-05"},
		{"underflowed to 0", FormatP(0), "< 1e-300"},
		{"below the floor", FormatP(1e-310), "< 1e-300"},
		{"negative", FormatP(-0.5), "< 1e-300"},
		{"NaN", FormatP(nan), "n/a"},
	})
}

func TestFormatEstimate(t *testing.T) {
	check(t, []struct{ name, got, want string }{
		{"minutes and seconds", FormatEstimate(6*time.Minute + 18*time.Second), "6 min 18 s"},
		{"rounded to the second", FormatEstimate(59*time.Second + 600*time.Millisecond), "1 min 0 s"},
		{"zero", FormatEstimate(0), "0 min 0 s"},
		{"negative", FormatEstimate(-5 * time.Second), "0 min -5 s"},
		{"minutes", FormatEstimate(12*time.Minute + 20*time.Second), "12 min"},
		{"hours", FormatEstimate(3*time.Hour + 30*time.Minute), "3.5 h"},
		{"days", FormatEstimate(41 * 24 * time.Hour), "41 d"},
	})
}
