package analysis

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// DiffMap is a heatmap of percent differences in the style of Kakhki et al., "Taking a Long
// Look at QUIC", IMC 2017, figures 5-8 (and the 2024 replication's scripts): each cell is
// (TCP - QUIC) / QUIC x 100, red where positive (QUIC faster), blue where negative (TCP faster),
// saturating at +-Range percent, and neutral grey where the difference is not significant.
type DiffMap struct {
	// Title is the panel's title.
	Title string
	// XLabel and YLabel name the axes; XTicks and YTicks label the columns and rows.
	XLabel, YLabel string
	XTicks, YTicks []string
	// Cells are the measured cells; grid positions without a cell stay empty.
	Cells []DiffCell
	// Range is the percent at which colours saturate (100 in Kakhki et al.; 0 means 100).
	Range float64
}

// DiffCell is one cell of a DiffMap.
type DiffCell struct {
	// X and Y index XTicks and YTicks.
	X, Y int
	// Pct is the percent difference (NaN when not computable: drawn neutral, labelled n/a).
	Pct float64
	// Significant is false when the difference is not significant (drawn neutral).
	Significant bool
}

// DiffColor maps a percent difference to its colour: Neutral when not significant or NaN, else
// white to red for positive and white to blue for negative values, saturating at +-rng percent.
func DiffColor(pct, rng float64, significant bool) color.RGBA {
	if !significant || math.IsNaN(pct) {
		return Neutral
	}
	if rng <= 0 {
		rng = 100
	}
	t := math.Min(math.Abs(pct)/rng, 1)
	fade := uint8(math.Round(255 * (1 - 0.85*t)))
	if pct < 0 {
		return color.RGBA{R: fade, G: fade, B: 255, A: 255}
	}
	return color.RGBA{R: 255, G: fade, B: fade, A: 255}
}

// WriteDiffMaps draws the maps as panels, two per row, in format "png" or "svg".
func WriteDiffMaps(w io.Writer, maps []DiffMap, format string) error {
	if len(maps) == 0 {
		return fmt.Errorf("no heatmap to draw: accepted at least one")
	}
	plots := make([]*plot.Plot, len(maps))
	for i, m := range maps {
		plots[i] = m.plot()
	}
	return writePanels(w, plots, format)
}

// plot builds the panel of m.
func (m DiffMap) plot() *plot.Plot {
	p := plot.New()
	p.Title.Text = m.Title
	p.X.Label.Text, p.Y.Label.Text = m.XLabel, m.YLabel
	ticks := func(labels []string) plot.ConstantTicks {
		t := make([]plot.Tick, len(labels))
		for i, l := range labels {
			t[i] = plot.Tick{Value: float64(i), Label: l}
		}
		return t
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks(m.XTicks), ticks(m.YTicks)
	p.X.Min, p.X.Max = -0.5, float64(len(m.XTicks))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(m.YTicks))-0.5
	p.Add(&diffCells{m: m, label: p.X.Tick.Label})
	return p
}

// diffCells is the plotter of a DiffMap's cells.
type diffCells struct {
	m     DiffMap
	label text.Style
}

// Plot implements plot.Plotter.
func (d *diffCells) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := d.label
	sty.XAlign, sty.YAlign = text.XCenter, text.YCenter
	for _, cell := range d.m.Cells {
		label := "n/a"
		if !math.IsNaN(cell.Pct) {
			label = fmt.Sprintf("%+.0f%%", cell.Pct)
			if !cell.Significant {
				label += " n.s."
			}
		}
		fillCell(c, tx, ty, float64(cell.X), float64(cell.Y), DiffColor(cell.Pct, d.m.Range, cell.Significant), sty, label)
	}
}

// fillCell fills the unit square of a grid centred on data point (x, y) with col and writes
// label ("" for none) at its centre in sty: a cell of a heatmap or an outcome grid.
func fillCell(c draw.Canvas, tx, ty func(float64) vg.Length, x, y float64, col color.Color, sty text.Style, label string) {
	x0, x1 := tx(x-0.5), tx(x+0.5)
	y0, y1 := ty(y-0.5), ty(y+0.5)
	rect := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
	c.FillPolygon(col, c.ClipPolygonXY(rect))
	if label != "" {
		c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, label)
	}
}

// DataRange implements plot.DataRanger.
func (d *diffCells) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(len(d.m.XTicks)) - 0.5, -0.5, float64(len(d.m.YTicks)) - 0.5
}
