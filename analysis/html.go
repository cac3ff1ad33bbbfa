package analysis

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
)

// htmlFigure is one inline SVG figure of the HTML report.
type htmlFigure struct {
	ID, Caption string
	SVG         template.HTML
}

// htmlTable is one table of the HTML report.
type htmlTable struct {
	Class  string
	Header []string
	Rows   [][]string
}

type htmlReproduction struct {
	Title string
	Table htmlTable
	Notes []string
}

type htmlSection struct {
	Title   string
	Tables  []htmlTable
	Invalid []string
	// NetFailures are the network failures by group (censored, not excluded).
	NetFailures []string
	// Notes are plain notes under the tables (the flow section's methods).
	Notes []string
	// Waterfalls has one waterfall (and filmstrip) per group with a median load to draw.
	Waterfalls []htmlFigure
}

type htmlData struct {
	Reproduction *htmlReproduction
	Title        string
	Summary      string
	Warnings     []string
	Sections     []htmlSection
	Figures      []htmlFigure
	Context      [][2]string
	LinkChecks   []string
	Methods      []string
}

var htmlTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:0.8em 0;font-size:0.9em}
th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:right;white-space:nowrap}
th{background:#f0f0f0}td:first-child,th:first-child{text-align:left}
figure{margin:1em 0}figure svg{max-width:100%;height:auto;border:1px solid #eee}
.note{color:#555;font-size:0.9em}dl{display:grid;grid-template-columns:max-content auto;gap:0.2em 1em}
dt{font-weight:bold}dd{margin:0}
</style></head><body>
{{with .Reproduction}}<h1>{{.Title}}</h1>
<table class="reproduction"><thead><tr>{{range .Table.Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Table.Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{if .Notes}}<h2>What differs from the published testbed</h2><ul class="note">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{end}}<h1>{{.Title}}</h1>
<p>{{.Summary}}</p>
{{range .Warnings}}<p class="warning"><strong>Warning:</strong> {{.}}</p>
{{end}}
{{range .Sections}}<section><h2>{{.Title}}</h2>
{{range .Tables}}<table class="{{.Class}}"><thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{end}}{{range .Invalid}}<p class="note">Invalid loads excluded: {{.}}</p>
{{end}}{{range .NetFailures}}<p class="note">Network failures (censored at the deadline): {{.}}</p>
{{end}}{{range .Notes}}<p class="note">{{.}}</p>
{{end}}{{range .Waterfalls}}<figure id="{{.ID}}" class="waterfall">{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}</section>
{{end}}<h2>Figures</h2>
{{range .Figures}}<figure id="{{.ID}}">{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}<h2>Run context</h2>
<dl class="context">{{range .Context}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>
{{end}}</dl>
{{if .LinkChecks}}<h3>Link checks</h3><ul>{{range .LinkChecks}}<li>{{.}}</li>{{end}}</ul>{{end}}
<h2>Methods</h2><ul class="note">{{range .Methods}}<li>{{.}}</li>{{end}}</ul>
</body></html>
`))

// WriteHTML writes the report as one self-contained HTML file (no external fetch): the tables
// per (page, link, mode), the ECDF and box-plot figures (and the heatmap when the links span a
// grid) as inline SVG, the run context, the link checks and the methods.
func (r *Report) WriteHTML(w io.Writer) error {
	d := htmlData{
		Title:    "pltlab report: " + r.Options.Metric.Label(),
		Summary:  r.countsLine() + ".",
		Warnings: r.allWarnings(),
		Context:  r.Context.pairs(),
		Methods:  r.methodNote(),
	}
	if rp := r.Reproduction; rp != nil && len(rp.References) > 0 {
		rows := r.referenceTable(rp.References)
		d.Reproduction = &htmlReproduction{Title: rp.Title, Table: htmlTable{Class: "reproduction", Header: rows[0], Rows: rows[1:]}, Notes: rp.Notes}
	}
	if r.HasFlows() {
		d.Sections = append(d.Sections, r.flowHTMLSection())
	}
	for _, c := range r.conditions() {
		d.Sections = append(d.Sections, r.htmlSection(c))
	}
	for _, lc := range r.Context.LinkChecks {
		d.LinkChecks = append(d.LinkChecks, linkCheckLine(lc))
	}
	figs, err := r.htmlFigures()
	if err != nil {
		return err
	}
	d.Figures = figs
	if err := htmlTmpl.Execute(w, d); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

func (r *Report) htmlSection(c condition) htmlSection {
	s := htmlSection{Title: c.Title(), Invalid: invalidNotes(c.Groups), NetFailures: netNotes(c.Groups),
		Waterfalls: waterfalls(c.Groups)}
	groups, comparisons := r.conditionTables(c)
	s.Tables = append(s.Tables, htmlTable{Class: "groups", Header: groups[0], Rows: groups[1:]})
	if comparisons != nil {
		s.Tables = append(s.Tables, htmlTable{Class: "comparisons", Header: comparisons[0], Rows: comparisons[1:]})
	}
	return s
}

// figKind is one figure of the HTML report with its caption.
type figKind struct {
	kind    PlotKind
	caption string
}

// htmlFigures renders every figure that applies as inline SVG.
func (r *Report) htmlFigures() ([]htmlFigure, error) {
	var kinds []figKind
	if r.HasFlows() {
		kinds = append(kinds, figKind{GoodputPlot, "Goodput over time per run: one line per flow (HTTP body bytes per 100 ms bin); the dashed line is the bottleneck rate."},
			figKind{QueuePlot, "Queueing delay over time per run: median and maximum per bin of the packets entering the link's down queue."})
	}
	if !r.Empty() {
		kinds = append(kinds, r.loadFigureKinds()...)
	}
	var figs []htmlFigure
	for _, k := range kinds {
		var buf bytes.Buffer
		err := r.WritePlot(&buf, k.kind, "svg")
		if errors.Is(err, ErrNoGrid) {
			continue
		}
		if err != nil {
			return nil, err
		}
		figs = append(figs, htmlFigure{ID: "fig-" + string(k.kind), Caption: k.caption, SVG: template.HTML(InlineSVG(buf.String()))})
	}
	return figs, nil
}

// loadFigureKinds are the figures of page loads.
func (r *Report) loadFigureKinds() []figKind {
	return []figKind{
		{ECDFPlot, "Empirical CDF of " + r.Options.Metric.Label() + " per protocol; curves stay below 1 by the share of timed-out loads (censored beyond the right edge)."},
		{BoxPlot, "Box plots per protocol of the completed loads (box: quartiles, whiskers: 1.5 IQR; timed-out loads counted in the labels, not drawn)."},
		{HeatmapPlot, "Percent difference of the median vs " + r.Options.Baseline + " over the link grid; grey cells are not significant."},
	}
}

// InlineSVG strips what precedes <svg (the XML declaration and doctype) so the SVG can sit
// inside HTML.
func InlineSVG(s string) string {
	if i := strings.Index(s, "<svg"); i >= 0 {
		return s[i:]
	}
	return s
}

// waterfalls draws the waterfall of each group's median load (Group.MedianLoad), for the groups
// whose median load has resources.
func waterfalls(groups []*Group) []htmlFigure {
	var figs []htmlFigure
	for _, g := range groups {
		rec := g.MedianLoad
		if rec == nil || len(rec.Resources) == 0 {
			continue
		}
		var buf bytes.Buffer
		if err := WriteWaterfall(&buf, rec); err != nil {
			continue
		}
		n := len(connNumbers(waterfallRows(rec)))
		if f, ok := filmstrip(g); ok {
			figs = append(figs, f)
		}
		figs = append(figs, htmlFigure{
			ID:  fmt.Sprintf("waterfall-%s-%d", g.Protocol, rec.Run),
			SVG: template.HTML(buf.String()),
			Caption: fmt.Sprintf("Waterfall of the median load of %s (%s %s, run %d, PLT %.0f ms): %d fetches over %d connection(s); milestones TTFB, FCP, DCL and load. Phases from Resource Timing; connections from DevTools connectionId.",
				g.Protocol, rec.Experiment, rec.Mode, rec.Run, rec.PLTMs, len(rec.Resources)+1, n),
		})
	}
	return figs
}

// filmstrip shows the median load's filmstrip (result.Visual.Filmstrip) with the group's median
// SpeedIndex and visually complete time over its loads that have visual metrics.
func filmstrip(g *Group) (htmlFigure, bool) {
	rec := g.MedianLoad
	if rec.Visual == nil || len(rec.Visual.Filmstrip) == 0 {
		return htmlFigure{}, false
	}
	var si, vc []float64
	for _, r := range g.valid {
		if r.Visual != nil && r.Visual.VisuallyCompleteMs > 0 {
			si = append(si, r.Visual.SpeedIndexMs)
			vc = append(vc, r.Visual.VisuallyCompleteMs)
		}
	}
	slices.Sort(si)
	slices.Sort(vc)
	var b strings.Builder
	b.WriteString(`<div class="filmstrip" style="display:flex;gap:6px;overflow-x:auto">`)
	for _, t := range rec.Visual.Filmstrip {
		fmt.Fprintf(&b, `<div style="text-align:center;font-size:0.8em"><img alt="%.0f ms" src="data:image/jpeg;base64,%s" style="border:1px solid #ccc"><br>%.0f ms, %d %%</div>`,
			t.Ms, base64.StdEncoding.EncodeToString(t.JPEG), t.Ms, t.Pct)
	}
	b.WriteString(`</div>`)
	return htmlFigure{
		ID:  fmt.Sprintf("filmstrip-%s-%d", g.Protocol, rec.Run),
		SVG: template.HTML(b.String()),
		Caption: fmt.Sprintf("Filmstrip of the median load of %s (run %d): frames where visual completeness changed. This load: SpeedIndex %.0f ms, visually complete %.0f ms; group medians over %d loads: SpeedIndex %.0f ms, visually complete %.0f ms (histogram-based completeness as WebPageTest's visualmetrics.py).",
			g.Protocol, rec.Run, rec.Visual.SpeedIndexMs, rec.Visual.VisuallyCompleteMs, len(si), Quantile(si, 0.5), Quantile(vc, 0.5)),
	}, true
}
