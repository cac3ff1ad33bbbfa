package analysis

import (
	"bytes"
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotutil"

	"github.com/pltlab/pltlab/result"
)

// HTMLBody returns what WriteHTML writes between <body> and </body>: the same report for a page
// that has its own head and style (pltlab view).
func (r *Report) HTMLBody() (string, error) {
	var buf bytes.Buffer
	if err := r.WriteHTML(&buf); err != nil {
		return "", err
	}
	doc := buf.String()
	start, end := bytes.Index(buf.Bytes(), []byte("<body>")), bytes.LastIndex(buf.Bytes(), []byte("</body>"))
	if start < 0 || end < start {
		return "", fmt.Errorf("html report: no <body> element")
	}
	return doc[start+len("<body>") : end], nil
}

// Loads returns every load of the group (valid, censored and invalid; not the warm-ups), in
// the order they were read.
func (g *Group) Loads() []*result.Record { return g.loads }

// Compare compares group g with group b as a report compares a protocol with its baseline
// (ratio of medians with its bootstrap CI, Mann-Whitney U and Welch tests), for any two groups,
// e.g. the same protocol in two result sets. opts' zero fields take their defaults.
func Compare(g, b *Group, opts Options) *Comparison { return compare(g, b, opts.withDefaults()) }

// EffectSizeA returns the Vargha-Delaney A of a Mann-Whitney comparison of x (n1 values) with y
// (n2 values): A = U/(n1 n2), the probability that a load of x is slower than one of y, ties
// counting one half (Vargha & Delaney, J. Educ. Behav. Stat. 25(2), 2000, eq. 14). 0.5 means no
// effect; Vargha and Delaney call |A - 0.5| >= 0.06 small, 0.14 medium and 0.21 large. NaN when
// either sample is empty.
func EffectSizeA(mw MWResult, n1, n2 int) float64 {
	if n1 == 0 || n2 == 0 {
		return math.NaN()
	}
	return mw.U / float64(n1*n2)
}

// WriteGroupPlot draws groups in one panel titled title, each with its label and its own colour
// (by position, not by protocol, so two sets' h2 loads differ): kind ECDFPlot draws the ECDFs on
// one axis (censored loads as in the report: the curve stays below 1 by their share), BoxPlot
// the box plots side by side (boxes at the report's type-7 quartiles). m labels the axis; format
// is "svg" or "png".
func WriteGroupPlot(w io.Writer, kind PlotKind, title string, labels []string, groups []*Group, m Metric, format string) error {
	if len(labels) != len(groups) {
		return fmt.Errorf("group plot: %d labels for %d groups", len(labels), len(groups))
	}
	p := plot.New()
	p.Title.Text = title
	var err error
	switch kind {
	case ECDFPlot:
		err = ecdfLines(p, labels, groups, m)
	case BoxPlot:
		err = boxes(p, labels, groups, m)
	default:
		err = fmt.Errorf("bad group plot kind %q: accepted %s, %s", kind, ECDFPlot, BoxPlot)
	}
	if err != nil {
		return err
	}
	return writePanels(w, []*plot.Plot{p}, format)
}

func ecdfLines(p *plot.Plot, labels []string, groups []*Group, m Metric) error {
	p.Legend.Top, p.Legend.Left = false, false
	return addECDF(p, groups, m, func(i int, _ *Group) int { return i },
		func(i int, g *Group) string { return fmt.Sprintf("%s (n=%d)", labels[i], len(g.Sample)) })
}

func boxes(p *plot.Plot, labels []string, groups []*Group, m Metric) error {
	p.Y.Label.Text = m.Label()
	var names []string
	for i, g := range groups {
		names = append(names, fmt.Sprintf("%s (n=%d)", labels[i], len(g.Sample)))
		if len(g.Completed) == 0 {
			continue
		}
		b, err := boxFor(g, float64(i))
		if err != nil {
			return err
		}
		b.FillColor = plotutil.Color(i)
		p.Add(b)
	}
	p.NominalX(names...)
	return nil
}
