package analysis

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/pltlab/pltlab/result"
)

// methodNote is the one-paragraph statement of the methods printed under every report.
func (r *Report) methodNote() []string {
	return []string{
		fmt.Sprintf("metric: %s; groups by page, link, mode, settings (congestion control, TLS, browser, pltlab version, cross traffic, device), protocol; warm-up loads and link checks excluded.", r.Options.Metric.Label()),
		"quantiles: Hyndman & Fan (1996) type 7; 95% CI of the median: distribution-free order-statistic interval (Conover 1999, sec. 3.2).",
		"timed-out loads and network failures (handshake timeouts, reset connections, QUIC errors) are censored (>= deadline): counted in quantiles, CI and Mann-Whitney; mean/sd/cv/Welch use completed loads only; lost to harness = scheduled loads the harness could not make (not measurements).",
		fmt.Sprintf("emulator late = loads during which the emulator released a packet more than the lateness bound (%g ms unless recorded) after its time: excluded; a load the emulator was late in is made once more and its line summarises the first attempt (earlier_attempts); lateness p50/max = the median and largest of the attempts' largest release lateness (ms).", result.LatenessBoundMs),
		fmt.Sprintf("ratio = median(protocol) / median(%s), 95%% CI by seeded percentile bootstrap (B=%d, seed %d; Efron & Tibshirani 1993).",
			r.Options.Baseline, r.Options.Bootstrap, r.Options.Seed),
		fmt.Sprintf("significant: two-sided Mann-Whitney U p < %g (Kakhki et al., IMC 2017); exact below %d per sample, else normal with tie correction. Welch's t-test is secondary.",
			r.Options.Alpha, MannWhitneyExactBelow),
	}
}

// WriteText writes the report as aligned plain-text tables, one block per (page, link, mode):
// the groups, then each protocol against the baseline, then the invalid loads by reason.
// Control characters read from the records are written escaped (escapeControls), as in every
// text format.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(escapeControls(w))
	fmt.Fprintf(bw, "pltlab report: %s, %s\n", r.Options.Metric, r.countsLine())
	for _, w := range r.allWarnings() {
		fmt.Fprintf(bw, "WARNING: %s\n", w)
	}
	if r.Empty() && !r.HasFlows() {
		fmt.Fprintln(bw, "no page loads to analyse")
	}
	r.writeFlowsText(bw)
	for _, c := range r.conditions() {
		fmt.Fprintf(bw, "\n== %s (%s, ms)\n", c.Title(), r.Options.Metric)
		groups, comparisons := r.conditionTables(c)
		writeAligned(bw, groups)
		if comparisons != nil {
			fmt.Fprintln(bw)
			writeAligned(bw, comparisons)
		}
		for _, n := range invalidNotes(c.Groups) {
			fmt.Fprintf(bw, "invalid loads excluded: %s\n", n)
		}
		for _, n := range netNotes(c.Groups) {
			fmt.Fprintf(bw, "network failures (censored at the deadline): %s\n", n)
		}
		for _, n := range redoneNotes(c.Groups) {
			fmt.Fprintf(bw, "made again because the emulator was late (first attempt excluded): %s\n", n)
		}
	}
	fmt.Fprintln(bw)
	for _, l := range r.methodNote() {
		fmt.Fprintln(bw, "# "+l)
	}
	return bw.Flush()
}

// countsLine says what was read: loads, warm-ups, harness losses, link checks, and what was
// left out (corrupt lines, duplicates, refused records).
func (r *Report) countsLine() string {
	line := fmt.Sprintf("%d loads (%d warm-up excluded), %d lost to harness, %d link checks, %d corrupt lines skipped, %d duplicates dropped, %d records refused",
		r.Context.Loads, r.Context.Warmups, r.Context.HarnessErrors, len(r.Context.LinkChecks), r.SkippedLines,
		r.Duplicates, r.RefusedCount)
	if n := r.Context.ArtifactsFailed; n > 0 {
		line += fmt.Sprintf(", %d artifacts not written whole (artifacts_failed)", n)
	}
	return line
}

// allWarnings returns the report's warnings followed by the refused records.
func (r *Report) allWarnings() []string {
	out := append([]string(nil), r.Warnings...)
	for _, s := range r.Refused {
		out = append(out, "refused record "+s)
	}
	if n := r.RefusedCount - len(r.Refused); n > 0 {
		out = append(out, fmt.Sprintf("and %d more refused records", n))
	}
	return out
}

// conditionTables returns the group table of c and its comparison table (nil when c has no
// comparison), each with its header row first.
func (r *Report) conditionTables(c condition) (groups, comparisons [][]string) {
	groups = [][]string{groupHeader}
	for _, g := range c.Groups {
		groups = append(groups, groupRow(g))
	}
	if len(c.Comparisons) > 0 {
		comparisons = [][]string{compareHeader}
		for _, cmp := range c.Comparisons {
			comparisons = append(comparisons, compareRow(cmp, r.Options.Alpha))
		}
	}
	return groups, comparisons
}

// writeAligned writes rows as space-aligned columns.
func writeAligned(w io.Writer, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
}

// WriteMarkdown writes the report as GitHub-flavoured markdown: a section per (page, link,
// mode) with the group and comparison tables, then the context and the methods.
func (r *Report) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriter(escapeControls(w))
	r.writeReproductionMarkdown(bw)
	fmt.Fprintf(bw, "# pltlab report: %s\n\n", r.Options.Metric.Label())
	fmt.Fprintf(bw, "%s.\n", r.countsLine())
	for _, w := range r.allWarnings() {
		fmt.Fprintf(bw, "\n**Warning:** %s\n", mdEscape(w))
	}
	if r.Empty() && !r.HasFlows() {
		fmt.Fprintln(bw, "\nNo page loads to analyse.")
	}
	r.writeFlowsMarkdown(bw)
	for _, c := range r.conditions() {
		fmt.Fprintf(bw, "\n## %s\n\n", c.Title())
		groups, comparisons := r.conditionTables(c)
		writeMarkdownTable(bw, groups)
		if comparisons != nil {
			fmt.Fprintln(bw)
			writeMarkdownTable(bw, comparisons)
		}
		for _, n := range invalidNotes(c.Groups) {
			fmt.Fprintf(bw, "\nInvalid loads excluded: %s\n", mdEscape(n))
		}
		for _, n := range netNotes(c.Groups) {
			fmt.Fprintf(bw, "\nNetwork failures (censored at the deadline): %s\n", mdEscape(n))
		}
		for _, n := range redoneNotes(c.Groups) {
			fmt.Fprintf(bw, "\nMade again because the emulator was late (first attempt excluded): %s\n", mdEscape(n))
		}
	}
	fmt.Fprintf(bw, "\n## Context\n\n")
	for _, kv := range r.Context.pairs() {
		fmt.Fprintf(bw, "- %s: %s\n", kv[0], mdEscape(kv[1]))
	}
	if len(r.Context.LinkChecks) > 0 {
		fmt.Fprintf(bw, "\n### Link checks\n\n")
		for _, lc := range r.Context.LinkChecks {
			fmt.Fprintf(bw, "- %s\n", mdEscape(linkCheckLine(lc)))
		}
	}
	fmt.Fprintf(bw, "\n## Methods\n\n")
	for _, l := range r.methodNote() {
		fmt.Fprintf(bw, "- %s\n", l)
	}
	return bw.Flush()
}

func writeMarkdownTable(w io.Writer, rows [][]string) {
	for i, row := range rows {
		cells := make([]string, len(row))
		for j, c := range row {
			cells[j] = mdEscape(c)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
		if i == 0 {
			fmt.Fprintf(w, "|%s\n", strings.Repeat("---|", len(row)))
		}
	}
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// pairs returns the context as (name, value) lines for the markdown and HTML reports.
func (c Context) pairs() [][2]string {
	j := func(xs []string) string {
		if len(xs) == 0 {
			return "unknown"
		}
		return strings.Join(xs, "; ")
	}
	date := "unknown"
	if !c.First.IsZero() {
		date = c.First.UTC().Format("2006-01-02 15:04:05Z") + " to " + c.Last.UTC().Format("2006-01-02 15:04:05Z")
	}
	return [][2]string{
		{"date", date}, {"experiments", j(c.Experiments)}, {"pages", j(c.Pages)}, {"links", j(c.Links)},
		{"browser", j(c.Browsers)}, {"kernel", j(c.Kernels)}, {"shaper", j(c.Shapers)},
		{"TCP congestion control", j(c.TCPCC)}, {"TLS", j(c.TLSVersions)}, {"QUIC", j(c.QUIC)},
		{"pltlab", j(c.Pltlab)}, {"hosts", j(c.Hosts)},
	}
}

// linkCheckLine summarises one link-check record in one line.
func linkCheckLine(r *result.Record) string {
	if r.Check == nil {
		return r.Link.Spec + ": no check data"
	}
	verdict := "FAIL"
	if r.Check.Pass {
		verdict = "pass"
	}
	return fmt.Sprintf("%s: %s, idle RTT median %.1f ms, down %.2f Mbit/s, up %.2f Mbit/s", orDash(r.Link.Spec),
		verdict, r.Check.RTTMedianMs, r.Check.DownBps/1e6, r.Check.UpBps/1e6)
}
