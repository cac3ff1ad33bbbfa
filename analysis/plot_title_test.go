package analysis

import (
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// TestTitlesFitTheirPanel checks that a condition's long title (settings included) is broken
// into lines no wider than the panel it is drawn in, and that a short one is left alone.
func TestTitlesFitTheirPanel(t *testing.T) {
	p := plot.New()
	long := "page 20x40KB, link rate=3mbit,rtt=50ms,queue=1bdp, cold [tcp_cc cubic, TLS 1.2, Chrome/156.0.8078.114, pltlab 4e3ce49]"
	width := panelWidth - 4*vg.Millimeter
	if p.Title.TextStyle.Width(long) <= width {
		t.Fatalf("the title fits already (%v <= %v): the test shows nothing", p.Title.TextStyle.Width(long), width)
	}
	got := fitTitle(p.Title.TextStyle, long, width)
	lines := strings.Split(got, "\n")
	if len(lines) < 2 || strings.Join(lines, " ") != long {
		t.Fatalf("broken into %q", got)
	}
	for _, l := range lines {
		if w := p.Title.TextStyle.Width(l); w > width {
			t.Errorf("line %q is %v wide, the panel %v", l, w, width)
		}
	}
	if short := "page 1x5KB, link none, cold"; fitTitle(p.Title.TextStyle, short, width) != short {
		t.Errorf("a short title was changed")
	}
}
