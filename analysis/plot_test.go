package analysis

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pltlab/pltlab/analysis/internal/synth"
)

// parseXML fails the test unless b is well-formed XML with an <svg> root.
func parseXML(t *testing.T, b []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("svg is not XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
}

func TestPlots(t *testing.T) {
	def := Analyze(synth.Records(synth.Default()), Options{}) // 2 conditions: 2 x 1 panels
	grid := Analyze(synth.Records(synth.Grid()), Options{})   // 9 conditions; heatmaps h2, h3: 2 x 1
	tests := []struct {
		name string
		rep  *Report
		kind PlotKind
		w, h int
	}{
		{"ecdf", def, ECDFPlot, 2 * 576, 384},
		{"box", def, BoxPlot, 2 * 576, 384},
		{"ecdf grid", grid, ECDFPlot, 2 * 576, 5 * 384},
		{"heatmap", grid, HeatmapPlot, 2 * 576, 384},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pb bytes.Buffer
			if err := tt.rep.WritePlot(&pb, tt.kind, "png"); err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(&pb)
			if err != nil {
				t.Fatalf("decode png: %v", err)
			}
			if b := img.Bounds(); b.Dx() != tt.w || b.Dy() != tt.h {
				t.Errorf("png is %dx%d, want %dx%d", b.Dx(), b.Dy(), tt.w, tt.h)
			}
			var sb bytes.Buffer
			if err := tt.rep.WritePlot(&sb, tt.kind, "svg"); err != nil {
				t.Fatal(err)
			}
			parseXML(t, sb.Bytes())
		})
	}
	if err := def.WritePlot(io.Discard, HeatmapPlot, "svg"); !errors.Is(err, ErrNoGrid) {
		t.Errorf("heatmap without a grid: %v, want ErrNoGrid", err)
	}
	if err := Analyze(nil, Options{}).WritePlot(io.Discard, ECDFPlot, "png"); !errors.Is(err, ErrNoRecords) {
		t.Errorf("empty plot: %v, want ErrNoRecords", err)
	}
}

func TestSavePlotByExtension(t *testing.T) {
	rep := Analyze(synth.Records(synth.Default()), Options{})
	dir := t.TempDir()
	for _, name := range []string{"plt.png", "plt.svg"} {
		path := filepath.Join(dir, name)
		if err := rep.SavePlot(path, ECDFPlot); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if name == "plt.png" && !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Error("plt.png is not a PNG")
		}
		if name == "plt.svg" {
			parseXML(t, b)
		}
	}
	if err := rep.SavePlot(filepath.Join(dir, "plt.gif"), ECDFPlot); err == nil {
		t.Error("plt.gif accepted")
	}
}
