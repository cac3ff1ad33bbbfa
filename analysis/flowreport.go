package analysis

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/pltlab/pltlab/result"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Flow figures.
const (
	// GoodputPlot is the goodput over time of every flow of a run (one panel per run), with
	// the bottleneck rate as a reference line.
	GoodputPlot PlotKind = "goodput"
	// QueuePlot is the link's down-direction queueing delay over time (one panel per run).
	QueuePlot PlotKind = "queue"
)

// MaxFlowPanels bounds the panels of a flow figure: the first runs are drawn.
const MaxFlowPanels = 16

// ErrNoFlows is returned for a flow figure of a report without flow records.
var ErrNoFlows = errors.New("no flow records in the input")

// writeFlowsText writes the flow tables and their method notes (nothing without flows).
func (r *Report) writeFlowsText(w io.Writer) {
	if !r.HasFlows() {
		return
	}
	fmt.Fprintf(w, "\n== bulk flows: medians across runs\n")
	writeAligned(w, r.flowTable())
	fmt.Fprintf(w, "\n== bulk flows: every run\n")
	writeAligned(w, r.flowRunTable())
	for _, n := range flowMethodNote() {
		fmt.Fprintln(w, "# "+n)
	}
}

// writeFlowsMarkdown writes the flow tables as markdown sections (nothing without flows).
func (r *Report) writeFlowsMarkdown(w io.Writer) {
	if !r.HasFlows() {
		return
	}
	fmt.Fprintf(w, "\n## Bulk flows: medians across runs\n\n")
	writeMarkdownTable(w, r.flowTable())
	fmt.Fprintf(w, "\n## Bulk flows: every run\n\n")
	writeMarkdownTable(w, r.flowRunTable())
	fmt.Fprintln(w)
	for _, n := range flowMethodNote() {
		fmt.Fprintf(w, "- %s\n", n)
	}
}

// flowHTMLSection is the HTML section of the flow tables.
func (r *Report) flowHTMLSection() htmlSection {
	t, runs := r.flowTable(), r.flowRunTable()
	return htmlSection{Title: "Bulk flows", Tables: []htmlTable{
		{Class: "flows", Header: t[0], Rows: t[1:]},
		{Class: "flow-runs", Header: runs[0], Rows: runs[1:]},
	}, Notes: flowMethodNote()}
}

// flowPlots builds one panel per run (at most MaxFlowPanels) of a goodput or queue figure.
func (r *Report) flowPlots(k PlotKind) ([]*plot.Plot, error) {
	if !r.HasFlows() {
		return nil, ErrNoFlows
	}
	var out []*plot.Plot
	for i, fr := range r.FlowRuns {
		if i == MaxFlowPanels {
			break
		}
		var p *plot.Plot
		var err error
		if k == QueuePlot {
			p, err = queuePanel(fr)
		} else {
			p, err = goodputPanel(fr)
		}
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", fr.Title(), err)
		}
		out = append(out, p)
	}
	return out, nil
}

// timeLine returns series (one value per bin of binMs) as points at the bins' centres in
// seconds, scaled by scale.
func timeLine(series []float64, binMs, scale float64) plotter.XYs {
	xys := make(plotter.XYs, len(series))
	for i, v := range series {
		xys[i] = plotter.XY{X: (float64(i) + 0.5) * binMs / 1000, Y: v * scale}
	}
	return xys
}

// goodputPanel draws every flow's goodput (Mbit/s) over time, and the bottleneck rate.
func goodputPanel(fr FlowRun) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fr.Title()
	p.X.Label.Text = "time since the run's start (s)"
	p.Y.Label.Text = "goodput per bin (Mbit/s)"
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	end := 0.0
	for i, rec := range fr.Records {
		l, err := plotter.NewLine(timeLine(rec.Series, rec.BinMs, 1e-6))
		if err != nil {
			return nil, err
		}
		l.Color, l.Dashes, l.Width = plotutil.Color(i), plotutil.Dashes(i), vg.Points(1.2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("flow %d: %s:%s", rec.FlowIndex, rec.Protocol, rec.CC), l)
		end = max(end, float64(len(rec.Series))*rec.BinMs/1000)
	}
	if rate := fr.Records[0].Link.DownBps; rate > 0 && end > 0 {
		ref, err := plotter.NewLine(plotter.XYs{{X: 0, Y: float64(rate) / 1e6}, {X: end, Y: float64(rate) / 1e6}})
		if err != nil {
			return nil, err
		}
		ref.Color, ref.Dashes = color.Gray{Y: 96}, []vg.Length{vg.Points(6), vg.Points(3)}
		p.Add(ref)
		p.Legend.Add(fmt.Sprintf("bottleneck %.3g Mbit/s", float64(rate)/1e6), ref)
	}
	p.Legend.Top = true
	return p, nil
}

// queuePanel draws the down-direction queueing delay (median and maximum per bin) over time.
func queuePanel(fr FlowRun) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fr.Title()
	p.X.Label.Text = "time since the run's start (s)"
	p.Y.Label.Text = "queueing delay, down (ms)"
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	rec := fr.Records[0]
	if len(rec.QueueDelayMs) == 0 {
		p.Title.Text += " (unshaped: no queue)"
		return p, nil
	}
	for i, s := range []struct {
		name string
		v    []float64
	}{{"median per bin", rec.QueueDelayMs}, {"maximum per bin", rec.QueueDelayMaxMs}} {
		l, err := plotter.NewLine(timeLine(s.v, rec.BinMs, 1))
		if err != nil {
			return nil, err
		}
		l.Color, l.Dashes = plotutil.Color(i), plotutil.Dashes(i)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	p.Legend.Top = true
	return p, nil
}

// FlowSummary writes the flow tables of recs (medians across runs, then every run) as aligned
// text to w: the call for `pltlab flows` after its runs. It returns ErrNoFlows when recs hold
// no flow records.
func FlowSummary(w io.Writer, recs []*result.Record) error {
	r := &Report{Flows: flowGroups(recs), FlowRuns: flowRuns(recs)}
	if !r.HasFlows() {
		return ErrNoFlows
	}
	bw := bufio.NewWriter(w)
	r.writeFlowsText(bw)
	return bw.Flush()
}
