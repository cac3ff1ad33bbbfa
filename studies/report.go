package studies

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"strings"

	"github.com/pltlab/pltlab/internal/fileout"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// Section is one section of a study report, rendered to Markdown and HTML alike.
type Section struct {
	// ID is the section's anchor, e.g. "lossy"; findings refer to sections by Title.
	ID string
	// Title is the heading.
	Title string
	// Text are paragraphs.
	Text []string
	// Tables are shown in order after the text.
	Tables []Table
	// Figures are written next to the report (FILE.svg and FILE.png) and shown after the tables.
	Figures []Figure
	// Bullets are a list shown last.
	Bullets []string
}

// Table is a table of a section, header first.
type Table struct {
	// Caption says what the table shows (may be empty).
	Caption string
	// Header names the columns.
	Header []string
	// Rows are the table's rows, each with as many cells as Header.
	Rows [][]string
}

// Figure is a plot of a section.
type Figure struct {
	// File is the base name without extension, e.g. "heatmap-link1".
	File string
	// Caption says what the figure shows and how to read it.
	Caption string
	// Render writes the figure in format "svg" or "png".
	Render func(w io.Writer, format string) error
}

// ReportFiles are the files WriteReport writes at the top of its directory (figures and each
// part's analysis directory come in addition).
var ReportFiles = []string{"report.md", "report.html", "findings.json"}

// Judge returns the findings table: every finding of the study with its judgement.
func (e *Support) Judge() []Judgement {
	out := make([]Judgement, len(e.Study.Findings))
	partial := e.Partial()
	for i, f := range e.Study.Findings {
		out[i] = f.Judge(e)
		if len(partial) > 0 {
			// Judged on the shards that are there: the verdict's evidence says so.
			out[i].Evidence += " [PARTIAL: judged on the shards merged; " + strings.Join(partial, "; ") + "]"
		}
	}
	return out
}

// Partial returns what the merge that made the records lacked (result.MergeNotes: missing
// shards, shards short of loads); empty for a complete run or merge.
func (e *Support) Partial() []string { return result.MergeNotes(e.Records) }

// findingsTable is the table every study report opens with.
func (e *Support) findingsTable(js []Judgement) Table {
	t := Table{Header: []string{"#", "published finding", "source", "verdict", "evidence", "how judged", "cells used", "see"}}
	for i, f := range e.Study.Findings {
		j := js[i]
		t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), f.Claim, f.Source, string(j.Verdict), j.Evidence, f.Criterion, strings.Join(j.Cells, "; "), joinSee(j.See)})
	}
	return t
}

// sections returns the report's sections in order: findings, the study's own, what was scaled
// down or not run, testbed differences.
func (e *Support) sections(js []Judgement) []Section {
	scale := Section{ID: "scale", Title: "Scale: what was run and what was scaled down",
		Text: []string{fmt.Sprintf("Scale %s: %d page loads (warm-ups included) in %d part(s)%s; %s.",
			e.Plan.Scale, e.Plan.Loads(), len(e.Plan.Parts), e.Plan.Custom.countRuns(e.Plan.FlowRuns(), customRuns(e.Plan.Custom), "bulk-flow run(s)", " and "), e.estimatedTook())},
		Bullets: append(append(scaledNotes(e.Plan), e.Plan.ScaledDown...), e.Plan.NotRun...)}
	out := []Section{{ID: "findings", Title: "Findings", Tables: []Table{e.findingsTable(js)},
		Text: []string{VerdictsText}}}
	if ws := e.Warnings(); len(ws) > 0 {
		out = append(out, Section{ID: "warnings", Title: "Warnings", Bullets: ws,
			Text: []string{"What a reader must know before trusting the tables (from each part's analysis)."}})
	}
	if e.Study.Sections != nil {
		out = append(out, e.Study.Sections(e)...)
	}
	out = append(out, scale)
	if e.Study.Differences != nil {
		out = append(out, Section{ID: "differences", Title: "What differs from the published testbed", Bullets: e.Study.Differences(e)})
	}
	return out
}

// WriteReport writes the study report into dir: report.md and report.html (findings table
// first), findings.json, every figure as SVG and PNG, and each part's full analysis report in
// dir/PART/ (analysis.DirFiles). It returns the judgements.
func WriteReport(dir string, e *Support) ([]Judgement, error) {
	js := e.Judge()
	secs := e.sections(js)
	var errs []error
	for _, s := range secs {
		for _, f := range s.Figures {
			for _, ext := range []string{"svg", "png"} {
				errs = append(errs, fileout.Create(filepath.Join(dir, f.File+"."+ext), func(w io.Writer) error { return f.Render(w, ext) }))
			}
		}
	}
	for _, p := range e.Plan.Parts {
		if pr := e.Part(p.Name); pr != nil {
			errs = append(errs, pr.Report.WriteDir(filepath.Join(dir, p.Name)))
		}
	}
	errs = append(errs,
		fileout.Create(filepath.Join(dir, "report.md"), func(w io.Writer) error { return e.writeMarkdown(w, secs) }),
		fileout.Create(filepath.Join(dir, "report.html"), func(w io.Writer) error { return e.writeHTML(w, secs) }),
		fileout.Create(filepath.Join(dir, "findings.json"), func(w io.Writer) error { return e.writeJSON(w, js) }))
	return js, errors.Join(errs...)
}

// Warnings returns every part's analysis warnings (settings that split a condition, loads lost
// to the harness unequally, partial experiments), each prefixed with the part's name.
func (e *Support) Warnings() []string {
	out := e.Partial()
	for _, p := range e.Plan.Parts {
		if pr := e.Part(p.Name); pr != nil {
			for _, w := range pr.Report.Warnings {
				out = append(out, p.Name+": "+w)
			}
		}
		if n := e.decided[p.Name]; n > 0 {
			out = append(out, fmt.Sprintf("%s: %d loads were added by `reproduce --decide` after a first judgement; they are pooled with the part's loads of the same settings "+
				"(pltlab and browser versions included; otherwise reported separately): a test after a second look is sequential, and its p < 0.01 is not adjusted for the first look "+
				"(optional stopping raises the false-positive rate)", p.Name, n))
		}
	}
	for _, f := range e.Plan.Flows {
		if xs := decideExperiments(e.Records, PartExperiment(e.Study.Name, f.Name)); len(xs) > 0 {
			out = append(out, fmt.Sprintf("%s: flow runs were added by `reproduce --decide` after a first judgement (%s); they are pooled with the part's runs: "+
				"an interval after a second look is sequential, and its level is not adjusted for the first look (optional stopping raises the false-positive rate)",
				f.Name, strings.Join(xs, ", ")))
		}
	}
	// Shards that shared a node beyond the rule (plan.CPUsPerShard) may have starved each
	// other's timing.
	return append(out, plan.NodeOverlaps(e.Records)...)
}

// title is the report's heading.
func (e *Support) title() string {
	return fmt.Sprintf("%s, reproduced with pltlab (scale %s)", e.Study.Title, e.Plan.Scale)
}

// writeMarkdown writes the report as Markdown.
func (e *Support) writeMarkdown(w io.Writer, secs []Section) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s\n\n%s\n\n", e.title(), mdCell(e.Study.Citation))
	for _, p := range e.Partial() {
		fmt.Fprintf(bw, "**%s**\n\n", mdCell(p))
	}
	for _, s := range secs {
		fmt.Fprintf(bw, "## %s\n\n", s.Title)
		for _, t := range s.Text {
			fmt.Fprintf(bw, "%s\n\n", t)
		}
		for _, t := range s.Tables {
			if t.Caption != "" {
				fmt.Fprintf(bw, "%s\n\n", t.Caption)
			}
			writeMarkdownTable(bw, t)
			fmt.Fprintln(bw)
		}
		for _, f := range s.Figures {
			fmt.Fprintf(bw, "![%s](%s.svg)\n\n*%s*\n\n", f.File, f.File, f.Caption)
		}
		for _, b := range s.Bullets {
			fmt.Fprintf(bw, "- %s\n", b)
		}
		if len(s.Bullets) > 0 {
			fmt.Fprintln(bw)
		}
	}
	return bw.Flush()
}

// writeMarkdownTable writes t as a Markdown table.
func writeMarkdownTable(w io.Writer, t Table) {
	row := func(cells []string) {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = mdCell(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(esc, " | "))
	}
	row(t.Header)
	sep := make([]string, len(t.Header))
	for i := range sep {
		sep[i] = "---"
	}
	fmt.Fprintf(w, "|%s|\n", strings.Join(sep, "|"))
	for _, r := range t.Rows {
		row(r)
	}
}

// mdCell escapes the characters that break a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

var reportTmpl = template.Must(template.New("study").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:0.8em 0;font-size:0.9em}
th,td{border:1px solid #ccc;padding:0.25em 0.6em;vertical-align:top}
th{background:#f0f0f0}figure img{max-width:100%}
</style></head><body>
<h1>{{.Title}}</h1><p>{{.Citation}}</p>{{range .Partial}}<p><strong>{{.}}</strong></p>{{end}}
{{range .Sections}}<section id="{{.ID}}"><h2>{{.Title}}</h2>
{{range .Text}}<p>{{.}}</p>{{end}}
{{range .Tables}}{{if .Caption}}<p>{{.Caption}}</p>{{end}}<table><thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody></table>
{{end}}{{range .Figures}}<figure><img src="{{.File}}.svg" alt="{{.File}}"><figcaption>{{.Caption}}</figcaption></figure>
{{end}}{{if .Bullets}}<ul>{{range .Bullets}}<li>{{.}}</li>{{end}}</ul>{{end}}
</section>
{{end}}<p>Each part's full analysis (tables, ECDF, box plots, run context) is in its own directory:
{{range .Parts}}<a href="{{.}}/report.html">{{.}}</a> {{end}}</p>
</body></html>
`))

// writeHTML writes the report as one HTML file that shows the figures written next to it.
func (e *Support) writeHTML(w io.Writer, secs []Section) error {
	var parts []string
	for _, p := range e.Plan.Parts {
		if e.Part(p.Name) != nil {
			parts = append(parts, p.Name)
		}
	}
	return reportTmpl.Execute(w, map[string]any{"Title": e.title(), "Citation": e.Study.Citation, "Sections": secs, "Parts": parts, "Partial": e.Partial()})
}

// jsonFinding is one row of findings.json.
type jsonFinding struct {
	ID        string     `json:"id"`
	Claim     string     `json:"claim"`
	Source    string     `json:"source"`
	Criterion string     `json:"criterion"`
	Verdict   Verdict    `json:"verdict"`
	Evidence  string     `json:"evidence"`
	See       []string   `json:"see,omitempty"`
	Cells     []string   `json:"cells,omitempty"`
	Needs     []Need     `json:"needs,omitempty"`
	FlowNeeds []FlowNeed `json:"flow_needs,omitempty"`
}

// writeJSON writes the findings table as JSON: study, scale and the findings.
func (e *Support) writeJSON(w io.Writer, js []Judgement) error {
	out := struct {
		Study    string        `json:"study"`
		Scale    Scale         `json:"scale"`
		Partial  []string      `json:"partial,omitempty"`
		Findings []jsonFinding `json:"findings"`
	}{Study: e.Study.Name, Scale: e.Plan.Scale, Partial: e.Partial()}
	for i, f := range e.Study.Findings {
		out.Findings = append(out.Findings, jsonFinding{ID: f.ID, Claim: f.Claim, Source: f.Source, Criterion: f.Criterion,
			Verdict: js[i].Verdict, Evidence: js[i].Evidence, See: js[i].See, Cells: js[i].Cells, Needs: js[i].Needs, FlowNeeds: js[i].FlowNeeds})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// WriteFindings prints the findings table as text (verdict, finding, evidence), then what this
// scale left out and the testbed differences derived from the records.
func WriteFindings(w io.Writer, e *Support, js []Judgement) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Findings (%s, scale %s):\n", e.Study.Title, e.Plan.Scale)
	for _, p := range e.Partial() {
		fmt.Fprintf(bw, "%s\n", p)
	}
	for i, f := range e.Study.Findings {
		fmt.Fprintf(bw, "%2d. [%s] %s\n    %s\n", i+1, js[i].Verdict, f.Claim, js[i].Evidence)
		if len(js[i].Cells) > 0 {
			fmt.Fprintf(bw, "    cells: %s\n", strings.Join(js[i].Cells, "; "))
		}
	}

	for _, s := range e.sections(js) {
		if s.ID != "scale" && s.ID != "differences" {
			continue
		}
		fmt.Fprintf(bw, "\n%s:\n", s.Title)
		for _, t := range s.Text {
			fmt.Fprintf(bw, "  %s\n", t)
		}
		for _, b := range s.Bullets {
			fmt.Fprintf(bw, "  - %s\n", b)
		}
	}
	return bw.Flush()
}

// scaledNotes are the "scaled down" lines the plan as applied gives: --runs when it replaced the
// scale's loads per cell, and the Custom schedule's repetitions as run.
func scaledNotes(p Plan) []string {
	var out []string
	if p.Options.Runs > 0 && len(p.Parts) > 0 {
		out = append(out, fmt.Sprintf("--runs %d: %d measured loads per cell replace the scale's (the lines below say the scale's)", p.Options.Runs, p.Options.Runs))
	}
	if c := p.Custom; c != nil && c.Note != nil {
		out = append(out, c.Note(c.Reps))
	}
	return out
}
