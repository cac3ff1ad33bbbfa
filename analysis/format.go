package analysis

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pltlab/pltlab/internal/quantity"
)

// Format is a report output format.
type Format string

// The report formats.
const (
	Text     Format = "text"
	Markdown Format = "markdown"
	CSV      Format = "csv"
	JSON     Format = "json"
	HTML     Format = "html"
)

// Formats lists the accepted formats.
var Formats = []Format{Text, Markdown, CSV, JSON, HTML}

// ParseFormat parses a format name (see Formats); "md" is accepted for markdown. The error is
// one line naming the bad value and the accepted ones.
func ParseFormat(s string) (Format, error) {
	if s == "md" {
		return Markdown, nil
	}
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("bad format %q: accepted %s", s, joinNames(Formats))
}

// Write writes the report to w in format f.
func (r *Report) Write(w io.Writer, f Format) error {
	switch f {
	case Text:
		return r.WriteText(w)
	case Markdown:
		return r.WriteMarkdown(w)
	case CSV:
		return r.WriteCSV(w)
	case JSON:
		return r.WriteJSON(w)
	case HTML:
		return r.WriteHTML(w)
	}
	return fmt.Errorf("write report: unknown format %q", f)
}

// fmtFloat formats v with prec decimals, "n/a" for NaN and "inf" for +Inf.
func fmtFloat(v float64, prec int) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 1):
		return "inf"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// groupHeader names the columns of groupRow.
var groupHeader = []string{"protocol", "runs", "valid", "invalid", "timeouts", "net failures", "emulator late", "lost to harness", "median", "95% CI of median",
	"mean", "sd", "cv", "min", "p5", "p25", "p75", "p95", "max", "lateness p50", "lateness max"}

// groupRow formats one group for the text, markdown and HTML tables.
func groupRow(g *Group) []string {
	d := g.DeadlineMs
	return []string{g.Protocol, strconv.Itoa(g.Runs), strconv.Itoa(g.Valid), strconv.Itoa(g.InvalidTotal()),
		strconv.Itoa(g.TimedOut), strconv.Itoa(g.NetFailed), strconv.Itoa(g.EmulatorLate), strconv.Itoa(g.Lost), quantity.FormatMs(g.Median, d), quantity.FormatCI(g.CILow, g.CIHigh, d), quantity.FormatMs(g.Mean, d),
		quantity.FormatMs(g.SD, d), fmtFloat(g.CV, 3), quantity.FormatMs(g.Min, d), quantity.FormatMs(g.P5, d), quantity.FormatMs(g.P25, d),
		quantity.FormatMs(g.P75, d), quantity.FormatMs(g.P95, d), quantity.FormatMs(g.Max, d), fmtFloat(g.LateP50Ms, 2), fmtFloat(g.LateMaxMs, 2)}
}

// compareHeader names the columns of compareRow.
var compareHeader = []string{"protocol", "vs", "ratio of medians", "95% CI", "diff", "p Mann-Whitney",
	"p Welch", "significant"}

// compareRow formats one comparison for the text, markdown and HTML tables.
func compareRow(c *Comparison, alpha float64) []string {
	mw := quantity.FormatP(c.MannWhitney.P)
	if c.MannWhitney.Exact {
		mw += " (exact)"
	}
	sig := "no"
	if c.Significant {
		sig = fmt.Sprintf("yes (p < %g)", alpha)
	}
	return []string{c.Protocol, c.Baseline, fmtFloat(c.Ratio, 3), fmtRatioCI(c.RatioLow, c.RatioHigh),
		quantity.FormatPct(c.DiffPct), mw, quantity.FormatP(c.Welch.P), sig}
}

// fmtRatioCI formats a ratio CI as "[lo, hi]", or "n/a" when it could not be computed (too
// few loads) or says nothing (from 0 to infinity: the medians are censored).
func fmtRatioCI(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsNaN(hi) || (lo == 0 && math.IsInf(hi, 1)) {
		return "n/a"
	}
	return "[" + fmtFloat(lo, 3) + ", " + fmtFloat(hi, 3) + "]"
}

// netNotes lists the network failures of the groups by Chromium error, one string per group
// that has any.
func netNotes(gs []*Group) []string {
	return countNotes(gs, func(g *Group) map[string]int { return g.NetErrors })
}

// invalidNotes lists the invalid reasons of the groups, one string per group that has any.
func invalidNotes(gs []*Group) []string {
	return countNotes(gs, func(g *Group) map[string]int { return g.Invalid })
}

// countNotes lists the counts of each group ("h2: a x2, b x1", names sorted), one string per
// group that has any.
func countNotes(gs []*Group, counts func(*Group) map[string]int) []string {
	var notes []string
	for _, g := range gs {
		m := counts(g)
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, fmt.Sprintf("%s x%d", k, m[k]))
		}
		if len(parts) > 0 {
			notes = append(notes, g.Protocol+": "+strings.Join(parts, ", "))
		}
	}
	return notes
}

// redoneNotes lists, per protocol, the loads made again because the emulator was late in their
// first attempt (Group.Redone).
func redoneNotes(gs []*Group) []string {
	var parts []string
	for _, g := range gs {
		if g.Redone > 0 {
			parts = append(parts, fmt.Sprintf("%s x%d", g.Protocol, g.Redone))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return []string{strings.Join(parts, ", ")}
}

// condition is the groups and comparisons of one (page, link, mode).
type condition struct {
	Key         Key
	Groups      []*Group
	Comparisons []*Comparison
}

// Title returns "page P, link L, mode M [settings]".
func (c condition) Title() string {
	t := fmt.Sprintf("page %s, link %s, %s", orDash(c.Key.Page), orDash(c.Key.Link), orDash(string(c.Key.Mode)))
	if c.Key.Settings != "" {
		t += " [" + c.Key.Settings + "]"
	}
	return t
}

// conditions splits the report by (page, link, mode), in the order of Groups.
func (r *Report) conditions() []condition {
	var out []condition
	for _, g := range r.Groups {
		k := g.condition()
		if len(out) == 0 || out[len(out)-1].Key != k {
			out = append(out, condition{Key: k})
		}
		out[len(out)-1].Groups = append(out[len(out)-1].Groups, g)
	}
	for _, c := range r.Comparisons {
		for i := range out {
			if out[i].Key == c.condition() {
				out[i].Comparisons = append(out[i].Comparisons, c)
			}
		}
	}
	return out
}

func orDash(s string) string { return cmp.Or(s, "-") }
