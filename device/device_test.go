package device

import (
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		spec, want string
		slowdown   float64
		expected   float64
		budget     bool
	}{
		{"", "desktop", 1, 1, false},
		{"desktop", "desktop", 1, 1, false},
		{"motog2013", "motog2013:cgroup", 10, 10, true},
		{"nexus6", "nexus6:cgroup", 3.4, 3.4, true},
		{"motog4:cdp", "motog4:cdp", 4, 4, false},
		{"motog4:cgroup+cdp", "motog4:cgroup+cdp", 4, 16, true},
		{"cpu=2.5", "cpu=2.5:cgroup", 2.5, 2.5, true},
		{" cpu=3:cdp ", "cpu=3:cdp", 3, 3, false},
	} {
		d, err := Parse(tc.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.spec, err)
			continue
		}
		if d.String() != tc.want || d.Slowdown != tc.slowdown || d.ExpectedSlowdown() != tc.expected || d.Budgeted() != tc.budget {
			t.Errorf("Parse(%q) = %s slowdown %g expected %g budget %v, want %s %g %g %v", tc.spec, d, d.Slowdown, d.ExpectedSlowdown(), d.Budgeted(),
				tc.want, tc.slowdown, tc.expected, tc.budget)
		}
		back, err := Parse(d.String())
		if err != nil || back.String() != d.String() {
			t.Errorf("Parse(%q).String() = %q does not read back: %v %v", tc.spec, d.String(), back, err)
		}
		if d.Budgeted() && math.Abs(d.CPUs()-1/d.Slowdown) > 1e-12 {
			t.Errorf("%s: %g cores, want 1/%g", d, d.CPUs(), d.Slowdown)
		}
	}
	for spec, want := range map[string]string{
		"phone":          "accepted desktop, motog2013, motog4, nexus6, or cpu=X",
		"cpu=1":          "above 1 and at most 20",
		"cpu=21":         "above 1 and at most 20",
		"cpu=NaN":        "above 1 and at most 20",
		"cpu=x":          "above 1 and at most 20",
		"motog4:fast":    `mechanism "fast": accepted cgroup, cdp, cgroup+cdp`,
		"desktop:cgroup": "the desktop has no slowdown",
		"motog4:":        "an empty mechanism after ':'",
		"cpu=3:":         "an empty mechanism after ':'",
	} {
		_, err := Parse(spec)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), spec) {
			t.Errorf("Parse(%q): %v, want an error naming it and %q", spec, err, want)
		}
	}
}

func TestPresetsCiteTheirSource(t *testing.T) {
	for name, d := range Presets {
		if d.Name != name {
			t.Errorf("preset %q is named %q", name, d.Name)
		}
		if name == "desktop" {
			continue
		}
		if d.Source == "" || d.Slowdown <= 1 || d.Slowdown > MaxSlowdown || d.Width == 0 || !strings.Contains(d.UserAgent, "%s") {
			t.Errorf("preset %s: %+v: want a source, a slowdown in (1, %g], a screen and a user agent", name, d, MaxSlowdown)
		}
	}
}

// TestBudget checks the CFS period and quota: BasePeriod while the quota stays at or above the
// kernel's 1 ms minimum, then longer periods at that minimum.
func TestBudget(t *testing.T) {
	for _, tc := range []struct {
		cpus          float64
		period, quota int
	}{
		{1, 10000, 10000}, {0.25, 10000, 2500}, {1 / 3.4, 10000, 2941}, {0.1, 10000, 1000}, {0.05, 20000, 1000}, {2, 10000, 20000},
	} {
		p, q := Budget(tc.cpus)
		if p != tc.period || q != tc.quota {
			t.Errorf("Budget(%g) = %d/%d µs, want %d/%d", tc.cpus, q, p, tc.quota, tc.period)
		}
		if q < MinQuota {
			t.Errorf("Budget(%g): quota %d under the kernel's minimum", tc.cpus, q)
		}
	}
}
