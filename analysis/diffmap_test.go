package analysis

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

func TestDiffColor(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pct         float64
		significant bool
		check       func(r, g, b uint8) bool
	}{
		{"QUIC faster is red", 50, true, func(r, g, b uint8) bool { return r == 255 && g < 255 && g == b }},
		{"TCP faster is blue", -50, true, func(r, g, b uint8) bool { return b == 255 && r < 255 && r == g }},
		{"saturates at the range", 400, true, func(r, g, b uint8) bool { return r == 255 && g == DiffColor(100, 100, true).G }},
		{"not significant is neutral", 80, false, func(r, g, b uint8) bool { return r == Neutral.R && g == Neutral.G && b == Neutral.B }},
		{"NaN is neutral", math.NaN(), true, func(r, g, b uint8) bool { return r == Neutral.R && b == Neutral.B }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DiffColor(tc.pct, 100, tc.significant)
			if !tc.check(c.R, c.G, c.B) {
				t.Errorf("DiffColor(%v, 100, %v) = %+v", tc.pct, tc.significant, c)
			}
		})
	}
	if a, b := DiffColor(50, 100, true), DiffColor(100, 100, true); a.G <= b.G {
		t.Errorf("+50 %% (%+v) must be paler than +100 %% (%+v)", a, b)
	}
}

func TestWriteDiffMaps(t *testing.T) {
	m := DiffMap{Title: "t", XLabel: "x", YLabel: "y", XTicks: []string{"5 KB", "10 KB"}, YTicks: []string{"1", "2"},
		Cells: []DiffCell{{X: 0, Y: 0, Pct: 40, Significant: true}, {X: 1, Y: 1, Pct: -10, Significant: false}}, Range: 100}
	var buf bytes.Buffer
	if err := WriteDiffMaps(&buf, []DiffMap{m, m}, "svg"); err != nil {
		t.Fatal(err)
	}
	if s := buf.String(); !strings.Contains(s, "+40%") || !strings.Contains(s, "-10% n.s.") {
		t.Error("svg lacks the cell labels")
	}
	if err := WriteDiffMaps(&buf, nil, "svg"); err == nil {
		t.Error("no map: want an error")
	}
	if err := WriteDiffMaps(&buf, []DiffMap{m}, "gif"); err == nil || !strings.Contains(err.Error(), "accepted png, svg") {
		t.Errorf("bad format error %v", err)
	}
}
