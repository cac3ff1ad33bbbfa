package analysis

import (
	"bufio"
	"fmt"
	"io"
	"math"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
)

// Reference is one published value beside ours: the one type pltlab keeps a published figure
// in (a reproduction's side-by-side table, a study's reference values).
type Reference struct {
	// Part, Page and Link select our loads for a study (Page and Link as given in the part's
	// experiment; "" means the study's first part or the report's only page and link).
	Part, Page, Link string
	// Protocol and Mode select our group.
	Protocol string
	Mode     result.Mode
	// Label names the published protocol or arm, e.g. "SPDY (now HTTP/2)" or "TCP BBR".
	Label string
	// PaperMs is the published value in ms.
	PaperMs float64
	// Stat is the published statistic: "median" or "mean" ("" when not said).
	Stat string
	// Source says where the value was published: paper table or figure, or the authors' scripts.
	Source string
	// BoundMs is the ideal lower bound of the PLT in ms (0 = none given).
	BoundMs float64
}

// ReferenceRow is one row of a reference table: a published figure and ours.
type ReferenceRow struct {
	Reference
	// Group is our group (nil when we have no load of that protocol and mode).
	Group *Group
	// PaperRatio is PaperMs over the baseline reference's PaperMs.
	PaperRatio float64
	// Ratio is our median over the baseline group's median, with its 95% bootstrap CI
	// (RatioCI); NaN when either is missing or censored.
	Ratio, RatioLow, RatioHigh float64
}

// ReferenceRows matches refs with r's groups. The baseline is the first reference (its ratio is
// 1); every ratio compares medians across modes too (warm h3 against cold h1), which the
// per-condition comparisons never do. Groups must come from one page and one link.
func (r *Report) ReferenceRows(refs []Reference) []ReferenceRow {
	rows := make([]ReferenceRow, len(refs))
	var base *Group
	for i, ref := range refs {
		rows[i] = ReferenceRow{Reference: ref, Ratio: math.NaN(), RatioLow: math.NaN(), RatioHigh: math.NaN()}
		for _, g := range r.Groups {
			if g.Protocol == ref.Protocol && g.Mode == ref.Mode {
				rows[i].Group = g
			}
		}
		if i == 0 {
			base = rows[i].Group
		}
		rows[i].PaperRatio = ref.PaperMs / refs[0].PaperMs
		g := rows[i].Group
		if g == nil || base == nil || len(g.Sample) == 0 || len(base.Sample) == 0 {
			continue
		}
		rows[i].Ratio = ratio(g.Median, base.Median)
		rows[i].RatioLow, rows[i].RatioHigh = RatioCI(g.Sample, base.Sample, r.Options.Bootstrap, seedFor(r.Options.Seed, g.Key))
	}
	return rows
}

// Reproduction sets a report beside a published experiment: Markdown, HTML and JSON output
// then open with its title, the side-by-side table of References and the Notes.
type Reproduction struct {
	// Title names the reproduced work, e.g. "Carlucci et al., SAC 2015, reproduced with pltlab".
	Title string
	// References are the published figures; the first is the baseline of the ratios.
	References []Reference
	// Notes list what differs between the published testbed and this one.
	Notes []string
}

// referenceTable returns the side-by-side table of refs and our figures, header first:
// protocol | in the paper | paper PLT | our median [95% CI] | paper ratio | our ratio [95% CI] |
// ideal lower bound | valid/runs. Times in seconds.
func (r *Report) referenceTable(refs []Reference) [][]string {
	header := []string{"protocol", "in the paper", "paper PLT", "our median [95% CI]", "paper ratio to " + refs[0].Protocol,
		"our ratio [95% CI]", "ideal lower bound", "valid/runs"}
	rows := [][]string{header}
	for _, row := range r.ReferenceRows(refs) {
		rows = append(rows, referenceCells(row))
	}
	return rows
}

// WriteReferenceTable writes the side-by-side table of refs and our figures (see
// referenceTable) to w, as aligned text or (markdown true) a markdown table.
func (r *Report) WriteReferenceTable(w io.Writer, refs []Reference, markdown bool) error {
	rows := r.referenceTable(refs)
	bw := bufio.NewWriter(escapeControls(w))
	if markdown {
		writeMarkdownTable(bw, rows)
	} else {
		writeAligned(bw, rows)
	}
	return bw.Flush()
}

// writeReproductionMarkdown writes r.Reproduction's title, table and notes, if any.
func (r *Report) writeReproductionMarkdown(w io.Writer) {
	rp := r.Reproduction
	if rp == nil || len(rp.References) == 0 {
		return
	}
	fmt.Fprintf(w, "# %s\n\n", rp.Title)
	writeMarkdownTable(w, r.referenceTable(rp.References))
	if len(rp.Notes) > 0 {
		fmt.Fprintf(w, "\n## What differs from the published testbed\n\n")
		for _, n := range rp.Notes {
			fmt.Fprintf(w, "- %s\n", mdEscape(n))
		}
	}
	fmt.Fprintln(w)
}

// jsonReference is one row of the reproduction table in the JSON report.
type jsonReference struct {
	Protocol   string   `json:"protocol"`
	Mode       string   `json:"mode"`
	Label      string   `json:"label"`
	PaperMs    float64  `json:"paper_ms"`
	BoundMs    *float64 `json:"bound_ms"`
	MedianMs   *float64 `json:"median_ms"`
	PaperRatio float64  `json:"paper_ratio"`
	Ratio      *float64 `json:"ratio"`
	RatioLow   *float64 `json:"ratio_ci_low"`
	RatioHigh  *float64 `json:"ratio_ci_high"`
}

// jsonReferences returns the reproduction table for the JSON report (nil without one).
func (r *Report) jsonReferences() []jsonReference {
	if r.Reproduction == nil {
		return nil
	}
	var out []jsonReference
	for _, row := range r.ReferenceRows(r.Reproduction.References) {
		j := jsonReference{Protocol: row.Protocol, Mode: string(row.Mode), Label: row.Label, PaperMs: row.PaperMs,
			BoundMs: num(row.BoundMs), PaperRatio: row.PaperRatio, Ratio: num(row.Ratio),
			RatioLow: num(row.RatioLow), RatioHigh: num(row.RatioHigh)}
		if row.Group != nil {
			j.MedianMs = num(row.Group.Median)
		}
		out = append(out, j)
	}
	return out
}

func referenceCells(row ReferenceRow) []string {
	name := row.Protocol
	if row.Mode == result.Warm {
		name += " warm"
	}
	cells := []string{name, row.Label, quantity.FormatSec(row.PaperMs, 0),
		"no loads", quantity.FormatRatio(row.PaperRatio), "n/a", "-", "0/0"}
	if row.BoundMs > 0 {
		cells[6] = quantity.FormatSec(row.BoundMs, 0)
	}
	g := row.Group
	if g == nil {
		return cells
	}
	cells[3] = quantity.FormatSec(g.Median, g.DeadlineMs)
	if !math.IsNaN(g.CILow) {
		cells[3] += fmt.Sprintf(" [%s, %s]", quantity.FormatSec(g.CILow, g.DeadlineMs), quantity.FormatSec(g.CIHigh, g.DeadlineMs))
	}
	if !math.IsNaN(row.Ratio) {
		cells[5] = fmt.Sprintf("%.2f [%s, %s]", row.Ratio, fmtFloat(row.RatioLow, 2), fmtFloat(row.RatioHigh, 2))
	}
	cells[7] = fmt.Sprintf("%d/%d", g.Valid, g.Runs)
	return cells
}

// ReferenceTable returns the side-by-side table of refs and our figures, header first (the
// table `pltlab reproduce carlucci2015` prints): protocol | in the paper | paper PLT | our median
// [95% CI] | paper ratio | our ratio [95% CI] | ideal lower bound | valid/runs, times in seconds.
func (r *Report) ReferenceTable(refs []Reference) [][]string { return r.referenceTable(refs) }
