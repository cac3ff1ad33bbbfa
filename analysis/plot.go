package analysis

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/pltlab/pltlab/protocol"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// PlotKind names a figure of a report.
type PlotKind string

// The figures. Each has one panel per (page, link, mode), or per (page, mode, protocol) for the
// heatmap.
const (
	// ECDFPlot is the empirical CDF of the metric per protocol.
	ECDFPlot PlotKind = "ecdf"
	// BoxPlot is a box plot per protocol of the completed loads (timeouts counted, not drawn).
	BoxPlot PlotKind = "box"
	// HeatmapPlot is the percent difference of medians vs the baseline over a grid of rates x
	// RTTs (or losses); non-significant cells are grey.
	HeatmapPlot PlotKind = "heatmap"
)

// PlotKinds lists the accepted plot kinds.
var PlotKinds = []PlotKind{ECDFPlot, BoxPlot, HeatmapPlot, GoodputPlot, QueuePlot}

// ErrNoGrid is returned for a heatmap when the data do not span a grid of at least two rates
// and two RTTs (or losses).
var ErrNoGrid = errors.New("the links do not span a grid of rates x RTTs (or losses)")

// PNGDPI is the resolution of PNG figures. Every panel is 6 x 4 inches: 576 x 384 pixels in PNG.
const PNGDPI = 96

// Panel size of every figure.
const (
	panelWidth  = 6 * vg.Inch
	panelHeight = 4 * vg.Inch
)

// ParsePlotKind parses a plot kind (see PlotKinds).
func ParsePlotKind(s string) (PlotKind, error) {
	for _, k := range PlotKinds {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("bad plot kind %q: accepted %s", s, joinNames(PlotKinds))
}

// ImageFormat returns "png" or "svg" from a file name's extension, or an error naming the
// accepted extensions.
func ImageFormat(path string) (string, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png":
		return "png", nil
	case ".svg":
		return "svg", nil
	}
	return "", fmt.Errorf("bad plot file %q: accepted extensions .png, .svg", path)
}

// SavePlot writes the figure of kind k to path, as PNG or SVG by the extension.
func (r *Report) SavePlot(path string, k PlotKind) error {
	format, err := ImageFormat(path)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := r.WritePlot(&buf, k, format); err != nil {
		return err // nothing written: no empty file is left behind
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	return nil
}

// WritePlot renders the figure of kind k to w as format "png" or "svg": panels in a grid of up
// to two columns, each 6 x 4 inches. It returns ErrNoGrid for a heatmap of data
// without a grid, ErrNoFlows for a flow figure without flows and ErrNoRecords for an empty report.
func (r *Report) WritePlot(w io.Writer, k PlotKind, format string) error {
	plots, err := r.plots(k)
	if err != nil {
		return err
	}
	return writePanels(w, plots, format)
}

// writePanels draws plots as tiles, two per row, and writes them to w in format "png" or "svg".
func writePanels(w io.Writer, plots []*plot.Plot, format string) error {
	cols := min(2, len(plots))
	rows := (len(plots) + cols - 1) / cols
	return writeCanvas(w, panelWidth*vg.Length(cols), panelHeight*vg.Length(rows), format, func(dc draw.Canvas) {
		tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
			PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
		for i, p := range plots {
			c := tiles.At(dc, i%cols, i/cols)
			p.Title.Text = fitTitle(p.Title.TextStyle, p.Title.Text, c.Max.X-c.Min.X)
			p.Draw(c)
		}
	})
}

// writeCanvas makes a width x height canvas in format "png" (PNGDPI, white background) or
// "svg", lets draw fill it and writes it to w. Errors: another format, or the write's.
func writeCanvas(w io.Writer, width, height vg.Length, format string, fill func(draw.Canvas)) error {
	var cw vg.CanvasWriterTo
	switch format {
	case "png":
		cw = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(PNGDPI),
			vgimg.UseBackgroundColor(color.White))}
	case "svg":
		cw = vgsvg.New(width, height)
	default:
		return fmt.Errorf("bad plot format %q: accepted png, svg", format)
	}
	fill(draw.New(cw))
	if _, err := cw.WriteTo(w); err != nil {
		return fmt.Errorf("write %s plot: %w", format, err)
	}
	return nil
}

// plots builds one panel per condition (or per heatmap slice, or per flow run). A report with
// flows but no page loads draws the goodput figure for ECDFPlot and BoxPlot.
func (r *Report) plots(k PlotKind) ([]*plot.Plot, error) {
	if k == GoodputPlot || k == QueuePlot || (r.Empty() && r.HasFlows() && (k == ECDFPlot || k == BoxPlot)) {
		return r.flowPlots(k)
	}
	if r.Empty() {
		return nil, ErrNoRecords
	}
	if k == HeatmapPlot {
		return r.heatmaps()
	}
	var out []*plot.Plot
	for _, c := range r.conditions() {
		var p *plot.Plot
		var err error
		switch k {
		case ECDFPlot:
			p, err = r.ecdfPanel(c)
		case BoxPlot:
			p, err = r.boxPanel(c)
		default:
			return nil, fmt.Errorf("bad plot kind %q: accepted %s", k, joinNames(PlotKinds))
		}
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", c.Title(), err)
		}
		out = append(out, p)
	}
	return out, nil
}

// ecdfPanel draws the ECDF of each protocol of c. With n loads in a group (timeouts
// included), the curve rises by 1/n at each completed load and stays below 1 by the share of
// timeouts: the x axis ends just after the slowest completed load, timeouts lie beyond it.
func (r *Report) ecdfPanel(c condition) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = c.Title()
	err := addECDF(p, c.Groups, r.Options.Metric, func(i int, g *Group) int { return styleIndex(g.Protocol, i) },
		func(_ int, g *Group) string { return groupLegend(g) })
	return p, err
}

// addECDF draws on p the ECDF of each group (ecdfPoints) against metric m, the x axis ending
// just after the slowest completed load; group i's line takes colour and dashes style(i, g) and
// is named name(i, g) in the legend.
func addECDF(p *plot.Plot, groups []*Group, m Metric, style func(int, *Group) int, name func(int, *Group) string) error {
	p.X.Label.Text = m.Label()
	p.Y.Label.Text = "fraction of loads (ECDF)"
	p.Y.Min, p.Y.Max = 0, 1.02
	p.Add(plotter.NewGrid())
	right := 0.0
	for _, g := range groups {
		if n := len(g.Completed); n > 0 {
			right = math.Max(right, g.Completed[n-1]*1.05)
		}
	}
	for i, g := range groups {
		xys := ecdfPoints(g, right)
		if len(xys) == 0 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return err
		}
		s := style(i, g)
		l.Color, l.Dashes, l.Width = plotutil.Color(s), plotutil.Dashes(s), vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(name(i, g), l)
	}
	p.Legend.XOffs, p.Legend.YOffs = -vg.Millimeter*2, vg.Millimeter*2
	return nil
}

// ecdfPoints returns the ECDF of g as a step line, flat from the last completed load to right.
func ecdfPoints(g *Group, right float64) plotter.XYs {
	n := float64(len(g.Sample))
	var xys plotter.XYs
	for i, v := range g.Completed {
		prev := float64(i) / n
		xys = append(xys, plotter.XY{X: v, Y: prev}, plotter.XY{X: v, Y: float64(i+1) / n})
	}
	if len(xys) > 0 && right > xys[len(xys)-1].X {
		xys = append(xys, plotter.XY{X: right, Y: xys[len(xys)-1].Y})
	}
	return xys
}

// styleIndex gives each protocol the same colour and dash pattern in every panel (the rows of
// protocol.Table first, in table order); unknown protocols follow in their order i.
func styleIndex(name string, i int) int {
	if r := protoRank(name); r < len(protocol.Table) {
		return r
	}
	return len(protocol.Table) + i
}

// boxFor returns the box plot of g at x = loc. gonum/plot computes its quartiles as medians of
// the halves of the sample (Tukey's hinges), which differ from the Hyndman-Fan type-7 quartiles
// the tables print (on 100..900: 250 against 300); so the box is set to the group's P25, Median
// and P75 (a censored quartile is drawn at the deadline), and the whiskers reach the most
// extreme completed load within 1.5 IQR of the box (Tukey), the others drawn as outside points.
func boxFor(g *Group, loc float64) (*plotter.BoxPlot, error) {
	b, err := plotter.NewBoxPlot(vg.Points(30), loc, plotter.Values(g.Completed))
	if err != nil || len(g.Completed) == 0 {
		return b, err
	}
	drawn := func(v float64) float64 {
		if math.IsInf(v, 1) {
			return g.DeadlineMs
		}
		return v
	}
	b.Quartile1, b.Median, b.Quartile3 = drawn(g.P25), drawn(g.Median), drawn(g.P75)
	iqr := b.Quartile3 - b.Quartile1
	low, high := b.Quartile1-1.5*iqr, b.Quartile3+1.5*iqr
	b.AdjLow, b.AdjHigh, b.Outside = math.Inf(1), math.Inf(-1), nil
	for i, v := range b.Values {
		if v < low || v > high {
			b.Outside = append(b.Outside, i)
			continue
		}
		b.AdjLow, b.AdjHigh = math.Min(b.AdjLow, v), math.Max(b.AdjHigh, v)
	}
	if math.IsInf(b.AdjLow, 0) { // every completed load is outside (a censored box)
		b.AdjLow, b.AdjHigh = b.Quartile1, b.Quartile3
	}
	return b, nil
}

func groupLegend(g *Group) string {
	s := fmt.Sprintf("%s (n=%d", g.Protocol, len(g.Sample))
	if g.TimedOut > 0 {
		s += fmt.Sprintf(", %d timed out", g.TimedOut)
	}
	if g.NetFailed > 0 {
		s += fmt.Sprintf(", %d failed", g.NetFailed)
	}
	return s + ")"
}

// boxPanel draws a box plot per protocol of c whose box is the table's quartiles (type 7, see
// boxFor); timed-out loads are counted in the labels, not drawn.
func (r *Report) boxPanel(c condition) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = c.Title()
	p.Y.Label.Text = r.Options.Metric.Label()
	p.X.Label.Text = "protocol"
	var names []string
	for i, g := range c.Groups {
		vals := plotter.Values(g.Completed)
		names = append(names, groupLegend(g))
		if len(vals) == 0 {
			continue
		}
		b, err := boxFor(g, float64(i))
		if err != nil {
			return nil, err
		}
		b.FillColor = plotutil.Color(styleIndex(g.Protocol, i))
		p.Add(b)
	}
	p.NominalX(names...)
	return p, nil
}

// fitTitle breaks each line of title (at ", " or spaces, greedily) so that no line drawn in
// style is wider than width: a panel's title ("page P, link L, cold [tcp_cc cubic, TLS 1.2,
// Chrome/..., pltlab ...]") stays inside its tile instead of running into its neighbour's. A word
// wider than width alone keeps its own line.
func fitTitle(style text.Style, title string, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(title, "\n") {
		if style.Width(line) <= width {
			out = append(out, line)
			continue
		}
		cur := ""
		for _, w := range strings.SplitAfter(line, " ") {
			if cur != "" && style.Width(strings.TrimRight(cur+w, " ")) > width {
				out = append(out, strings.TrimRight(cur, " "))
				cur = ""
			}
			cur += w
		}
		if cur = strings.TrimRight(cur, " "); cur != "" {
			out = append(out, cur)
		}
	}
	return strings.Join(out, "\n")
}
