package analysis

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteOutcomeGrid: every class is drawn in its colour (green pass, red fail, grey
// unsupported, amber mixed) with its label, in SVG and PNG; a grid without rows, with a short
// row, or in another format is refused naming what is accepted.
func TestWriteOutcomeGrid(t *testing.T) {
	g := OutcomeGrid{Title: "release x case", Rows: []string{"quic-go@v0.33.0", "ngtcp2"}, Cols: []string{"handshake", "v2 as client"},
		Cells: [][]OutcomeCell{{{Class: "pass", Label: "pass"}, {Class: "unsupported", Label: "unsup."}},
			{{Class: "fail", Label: "fail"}, {Class: "mixed", Label: "mixed"}}}}
	var b bytes.Buffer
	if err := WriteOutcomeGrid(&b, g, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	for _, want := range []string{"fill:#5CB85C", "fill:#D9534F", "fill:#D9D9D9", "fill:#F0AD4E", ">pass<", ">unsup.<", "ngtcp2", "v2 as client"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	b.Reset()
	if err := WriteOutcomeGrid(&b, g, "png"); err != nil || !bytes.HasPrefix(b.Bytes(), []byte("\x89PNG")) {
		t.Errorf("png: %v", err)
	}
	bad := g
	bad.Cells = [][]OutcomeCell{g.Cells[0], g.Cells[1][:1]}
	for _, c := range []struct {
		g      OutcomeGrid
		format string
		want   string
	}{{OutcomeGrid{}, "svg", "at least one row"}, {bad, "svg", `row "ngtcp2" has 1 cells for 2 columns`}, {g, "pdf", "accepted png, svg"}} {
		if err := WriteOutcomeGrid(&b, c.g, c.format); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.format, err, c.want)
		}
	}
}
