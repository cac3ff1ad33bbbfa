package analysis

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
)

// Neutral is the colour of heatmap cells whose difference is not significant.
var Neutral = color.RGBA{R: 0xd9, G: 0xd9, B: 0xd9, A: 0xff}

// heatCell is one cell of a heatmap: a comparison at grid position (X, Y).
type heatCell struct {
	X, Y int
	C    *Comparison
}

// heatSlice is one heatmap: a (page, mode, protocol) over the grid of links.
type heatSlice struct {
	page, protocol, baseline string
	mode                     result.Mode
	xs, ys                   []float64 // rate in bit/s; RTT in ms or loss in [0,1]
	yIsLoss                  bool
	cells                    []heatCell
}

// heatmaps builds one heatmap panel per (page, mode, protocol) whose links span a grid.
func (r *Report) heatmaps() ([]*plot.Plot, error) {
	hs := r.heatSlices()
	if len(hs) == 0 {
		return nil, ErrNoGrid
	}
	var out []*plot.Plot
	for _, s := range hs {
		out = append(out, s.plot(r.Options))
	}
	return out, nil
}

// heatSlices groups the comparisons by (page, mode, protocol) and keeps those spanning at least
// 2 rates x 2 RTTs (or, with a single RTT, 2 rates x 2 losses) with one link per cell, some rate
// measured at two RTTs and some RTT at two rates.
func (r *Report) heatSlices() []*heatSlice {
	links := map[Key]result.Link{}
	for _, g := range r.Groups {
		links[g.Key] = g.LinkInfo
	}
	type sk struct {
		page, proto string
		mode        result.Mode
	}
	bySlice := map[sk][]*Comparison{}
	var order []sk
	for _, c := range r.Comparisons {
		k := sk{c.Page, c.Protocol, c.Mode}
		if bySlice[k] == nil {
			order = append(order, k)
		}
		bySlice[k] = append(bySlice[k], c)
	}
	var out []*heatSlice
	for _, k := range order {
		s := &heatSlice{page: k.page, protocol: k.proto, mode: k.mode, baseline: r.Options.Baseline}
		if s.build(bySlice[k], links) {
			out = append(out, s)
		}
	}
	return out
}

// build places the comparisons on the grid; it reports false when they do not form one.
func (s *heatSlice) build(cs []*Comparison, links map[Key]result.Link) bool {
	var rtts, losses []float64
	for _, c := range cs {
		l := links[c.Key]
		s.xs = appendUnique(s.xs, float64(l.DownBps))
		rtts = appendUnique(rtts, l.RTTMs)
		losses = appendUnique(losses, l.Loss)
	}
	s.ys = rtts
	if len(rtts) < 2 && len(losses) >= 2 {
		s.ys, s.yIsLoss = losses, true
	}
	if len(s.xs) < 2 || len(s.ys) < 2 {
		return false
	}
	seen := map[[2]int]bool{}
	for _, c := range cs {
		l := links[c.Key]
		y := l.RTTMs
		if s.yIsLoss {
			y = l.Loss
		}
		pos := [2]int{slices.Index(s.xs, float64(l.DownBps)), slices.Index(s.ys, y)}
		if seen[pos] {
			return false // two links in one cell: not a rate x RTT grid
		}
		seen[pos] = true
		s.cells = append(s.cells, heatCell{X: pos[0], Y: pos[1], C: c})
	}
	return s.crossed()
}

// crossed reports whether some rate has two y values and some y value two rates (a diagonal of
// links is not a grid).
func (s *heatSlice) crossed() bool {
	perX, perY := map[int]int{}, map[int]int{}
	rowOK, colOK := false, false
	for _, c := range s.cells {
		perX[c.X]++
		perY[c.Y]++
		colOK = colOK || perX[c.X] >= 2
		rowOK = rowOK || perY[c.Y] >= 2
	}
	return rowOK && colOK
}

// appendUnique inserts v into the ascending set xs.
func appendUnique(xs []float64, v float64) []float64 {
	i, found := slices.BinarySearch(xs, v)
	if found {
		return xs
	}
	return slices.Insert(xs, i, v)
}

// plot draws the slice: cells coloured by percent difference (blue faster, red slower than
// the baseline, saturated at +-50%), grey when not significant, each labelled with its value.
func (s *heatSlice) plot(opts Options) *plot.Plot {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s vs %s, %% diff of median %s\npage %s, %s (grey: p >= %g)",
		s.protocol, s.baseline, opts.Metric, s.page, s.mode, opts.Alpha)
	p.X.Label.Text = "bottleneck rate, down (Mbit/s)"
	p.Y.Label.Text = "base RTT (ms)"
	if s.yIsLoss {
		p.Y.Label.Text = "loss per direction (%)"
	}
	var xt, yt []plot.Tick
	for i, x := range s.xs {
		xt = append(xt, plot.Tick{Value: float64(i), Label: strconv.FormatFloat(x/1e6, 'g', 4, 64)})
	}
	for i, y := range s.ys {
		if s.yIsLoss {
			y *= 100
		}
		yt = append(yt, plot.Tick{Value: float64(i), Label: strconv.FormatFloat(y, 'g', 4, 64)})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
	p.X.Min, p.X.Max = -0.5, float64(len(s.xs))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(s.ys))-0.5
	p.Add(&heatCells{cells: s.cells, label: p.X.Tick.Label})
	return p
}

// heatCells is the plotter of a heatmap's cells.
type heatCells struct {
	cells []heatCell
	label text.Style
}

// Plot implements plot.Plotter.
func (h *heatCells) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	sty := h.label
	sty.XAlign, sty.YAlign = text.XCenter, text.YCenter
	for _, cell := range h.cells {
		x0, x1 := tx(float64(cell.X)-0.5), tx(float64(cell.X)+0.5)
		y0, y1 := ty(float64(cell.Y)-0.5), ty(float64(cell.Y)+0.5)
		rect := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(cellColor(cell.C), c.ClipPolygonXY(rect))
		label := quantity.FormatPct(cell.C.DiffPct)
		if !cell.C.Significant {
			label += " (n.s.)"
		}
		c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, label)
	}
}

// DataRange implements plot.DataRanger.
func (h *heatCells) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for _, c := range h.cells {
		xmin, xmax = math.Min(xmin, float64(c.X)-0.5), math.Max(xmax, float64(c.X)+0.5)
		ymin, ymax = math.Min(ymin, float64(c.Y)-0.5), math.Max(ymax, float64(c.Y)+0.5)
	}
	return xmin, xmax, ymin, ymax
}

// cellColor maps a comparison to a colour: Neutral when not significant (or not computable),
// else white to blue (faster) or white to red (slower), saturating at a 50% difference.
func cellColor(c *Comparison) color.Color {
	if !c.Significant || math.IsNaN(c.DiffPct) {
		return Neutral
	}
	t := math.Min(math.Abs(c.DiffPct)/50, 1)
	fade := uint8(255 * (1 - 0.8*t))
	if c.DiffPct < 0 {
		return color.RGBA{R: fade, G: fade, B: 255, A: 255}
	}
	return color.RGBA{R: 255, G: fade, B: fade, A: 255}
}
