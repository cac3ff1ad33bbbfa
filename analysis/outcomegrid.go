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

// OutcomeGrid is a grid of categorical outcomes, a row per subject (a release) and a column per
// case, each cell coloured by its class in the manner of the QUIC Interop Runner's result
// matrix: green where the case passed, red where it failed, grey where the endpoint does not
// support it, amber where repetitions disagree, white where nothing was judged.
type OutcomeGrid struct {
	// Title is the figure's title.
	Title string
	// Rows label the rows, top first; Cols the columns, left first.
	Rows, Cols []string
	// Cells[i][j] is row i's cell in column j: its class and its short label ("pass").
	Cells [][]OutcomeCell
}

// OutcomeCell is one cell of an OutcomeGrid.
type OutcomeCell struct {
	// Class picks the colour: "pass", "fail", "unsupported", "mixed", or "" (nothing judged).
	Class string
	// Label is written in the cell ("" for none).
	Label string
}

// OutcomeColors are the colours of the cell classes of an OutcomeGrid; a class not listed is
// white.
var OutcomeColors = map[string]color.RGBA{
	"pass":        {R: 0x5c, G: 0xb8, B: 0x5c, A: 0xff},
	"fail":        {R: 0xd9, G: 0x53, B: 0x4f, A: 0xff},
	"unsupported": Neutral,
	"mixed":       {R: 0xf0, G: 0xad, B: 0x4e, A: 0xff},
}

// Sizes of an OutcomeGrid's canvas: a margin for the row labels and the rotated column labels,
// and a cell's width and height.
const (
	gridMargin     = 45 * vg.Millimeter
	gridCellWidth  = 16 * vg.Millimeter
	gridCellHeight = 7 * vg.Millimeter
)

// WriteOutcomeGrid draws g in format "png" or "svg", sized to its rows and columns. Errors: an
// empty grid, a row whose cells do not match the columns, another format, or the write's.
func WriteOutcomeGrid(w io.Writer, g OutcomeGrid, format string) error {
	if len(g.Rows) == 0 || len(g.Cols) == 0 {
		return fmt.Errorf("no outcome to draw: accepted at least one row and one column")
	}
	if len(g.Cells) != len(g.Rows) {
		return fmt.Errorf("outcome grid: %d rows of cells for %d row labels", len(g.Cells), len(g.Rows))
	}
	for i, r := range g.Cells {
		if len(r) != len(g.Cols) {
			return fmt.Errorf("outcome grid: row %q has %d cells for %d columns", g.Rows[i], len(r), len(g.Cols))
		}
	}
	p := plot.New()
	p.Title.Text = g.Title
	ticks := func(labels []string, rev bool) plot.ConstantTicks {
		t := make([]plot.Tick, len(labels))
		for i, l := range labels {
			v := float64(i)
			if rev {
				v = float64(len(labels) - 1 - i)
			}
			t[i] = plot.Tick{Value: v, Label: l}
		}
		return t
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = ticks(g.Cols, false), ticks(g.Rows, true)
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = text.XRight, text.YCenter
	p.X.Min, p.X.Max = -0.5, float64(len(g.Cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.Rows))-0.5
	p.Add(&outcomeCells{g: g, label: p.X.Tick.Label})
	width := gridMargin + gridCellWidth*vg.Length(len(g.Cols))
	height := gridMargin + gridCellHeight*vg.Length(len(g.Rows))
	return writeCanvas(w, width, height, format, func(c draw.Canvas) { p.Draw(c) })
}

// outcomeCells is the plotter of an OutcomeGrid's cells.
type outcomeCells struct {
	g     OutcomeGrid
	label text.Style
}

// Plot implements plot.Plotter: a filled rectangle per cell with its label, row 0 at the top.
func (o *outcomeCells) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := o.label
	sty.Rotation = 0
	sty.XAlign, sty.YAlign = text.XCenter, text.YCenter
	for i, row := range o.g.Cells {
		y := float64(len(o.g.Rows) - 1 - i)
		for j, cell := range row {
			col, ok := OutcomeColors[cell.Class]
			if !ok {
				col = color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
			}
			fillCell(c, tx, ty, float64(j), y, col, sty, cell.Label)
		}
	}
}

// DataRange implements plot.DataRanger.
func (o *outcomeCells) DataRange() (xmin, xmax, ymin, ymax float64) {
	return -0.5, float64(len(o.g.Cols)) - 0.5, -0.5, float64(len(o.g.Rows)) - 0.5
}
