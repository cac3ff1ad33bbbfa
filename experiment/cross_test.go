package experiment

import (
	"context"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// TestCrossValidate checks that a bad cross-traffic flow is refused up front, naming it.
func TestCrossValidate(t *testing.T) {
	base := Config{Pages: []string{"1x1KB"}, Links: []string{"none"}, Arms: []Arm{{Protocol: "h2", Mode: result.Cold}}}
	cases := []struct {
		cross, want string
	}{
		{"", ""},
		{"h1:cubic", ""},
		{"h3", ""},
		{"h3:cubic", "bad cross traffic"},
		{"h9", "bad cross traffic"},
	}
	for _, c := range cases {
		t.Run(c.cross, func(t *testing.T) {
			cfg := base
			cfg.Cross = c.cross
			err := cfg.Validate()
			if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("Validate with cross %q: %v, want %q", c.cross, err, c.want)
			}
		})
	}
}

// TestStartCrossNone checks that no cross traffic starts nothing.
func TestStartCrossNone(t *testing.T) {
	l, err := shaping.Open(context.Background(), linkspec.Spec{Shaper: linkspec.ShaperNone})
	if err != nil {
		t.Fatal(err)
	}
	c, err := startCross(context.Background(), Config{}, l)
	if c != nil || err != nil {
		t.Fatalf("startCross without cross traffic: %v, %v", c, err)
	}
}
