// Package analysis turns result records into statistics, comparison tables, plots and reports.
//
// It works offline on result streams (never importing browser, server or shaping): records are
// grouped by (page spec, link spec, mode, settings, protocol), the settings being everything that
// changes the measurement (TCP congestion control, TLS version, browser and pltlab version), each
// group is summarised (Group), each protocol is compared with a baseline protocol in the same
// (page, link, mode, settings) (Comparison), and
// the Report is written as text, markdown, CSV, JSON or one self-contained HTML file, with
// ECDF, box-plot and heatmap figures (PNG or SVG).
//
// Statistical choices (all documented where computed):
//   - quantiles: Hyndman & Fan (1996) definition 7, the default of R and NumPy (Quantile);
//   - 95% CI of a median: the distribution-free order-statistic interval from the Binomial(n, 1/2)
//     distribution (Conover, Practical Nonparametric Statistics, 3rd ed. 1999, section 3.2;
//     Hahn & Meeker, Statistical Intervals, 1991, section 5.2) (MedianCI);
//   - 95% CI of a ratio of medians: seeded percentile bootstrap (Efron & Tibshirani, An
//     Introduction to the Bootstrap, 1993, chapter 13) (RatioCI);
//   - tests: two-sided Mann-Whitney U (exact permutation distribution below 20 per sample,
//     normal approximation with tie correction otherwise) (MannWhitney), and Welch's t-test with
//     Welch-Satterthwaite degrees of freedom as a secondary line (Welch);
//   - significance only at p < 0.01 on the Mann-Whitney test (Kakhki et al., "Taking a Long Look at
//     QUIC", IMC 2017).
//
// Censoring: a timed-out load's metric is only known to be >= its deadline, and a load the
// network made fail (result.OutcomeNetworkFailed) is treated the same way. Such loads take part
// in the quantiles, the median CI, the bootstrap and the Mann-Whitney test as values above every
// completed load (+Inf internally); a quantile that falls among them is shown as ">= DEADLINE".
// Mean, standard deviation, CV and Welch's test use completed loads only.
package analysis

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/result"
)

// ErrNoRecords is returned when the input holds no page-load records to analyse (after
// excluding warm-up loads and link checks).
var ErrNoRecords = errors.New("no page-load records in the input")

// Metric names the record field a report analyses; its value is the field's JSON name.
type Metric string

// The metrics a report can analyse, all in milliseconds from navigation start.
const (
	PLT  Metric = "plt_ms"  // page-load time, loadEventEnd - startTime
	TTFB Metric = "ttfb_ms" // time to first byte of the page
	FCP  Metric = "fcp_ms"  // first contentful paint
	DCL  Metric = "dcl_ms"  // DOMContentLoaded event end
	// SpeedIndex is result.Visual.SpeedIndexMs (loads measured with --visual).
	SpeedIndex Metric = "speed_index_ms"
	// VisuallyComplete is result.Visual.VisuallyCompleteMs (loads measured with --visual).
	VisuallyComplete Metric = "visually_complete_ms"
)

// Metrics lists the accepted metrics in the order shown in help texts.
var Metrics = []Metric{PLT, TTFB, FCP, DCL, SpeedIndex, VisuallyComplete}

// ParseMetric parses a metric name (see Metrics). The error is one line naming the bad value and
// the accepted ones.
func ParseMetric(s string) (Metric, error) {
	for _, m := range Metrics {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("bad metric %q: accepted %s", s, joinNames(Metrics))
}

// Label returns a human-readable axis label with the unit, e.g. "page-load time (ms)".
func (m Metric) Label() string {
	switch m {
	case TTFB:
		return "time to first byte (ms)"
	case FCP:
		return "first contentful paint (ms)"
	case DCL:
		return "DOMContentLoaded (ms)"
	case SpeedIndex:
		return "SpeedIndex (ms)"
	case VisuallyComplete:
		return "visually complete (ms)"
	}
	return "page-load time (ms)"
}

// value returns the metric of r in ms.
func (m Metric) value(r *result.Record) float64 {
	switch m {
	case TTFB:
		return r.TTFBMs
	case FCP:
		return r.FCPMs
	case DCL:
		return r.DCLMs
	case SpeedIndex, VisuallyComplete:
		if r.Visual == nil {
			return 0
		}
		if m == SpeedIndex {
			return r.Visual.SpeedIndexMs
		}
		return r.Visual.VisuallyCompleteMs
	}
	return r.PLTMs
}

// Defaults of Options.
const (
	// DefaultBaseline is the protocol others are compared with when it was measured; otherwise
	// the first measured protocol in protocol.Table order is (BaselineFor).
	DefaultBaseline = "h1"
	// DefaultAlpha is the significance threshold (Kakhki et al., IMC 2017, use p < 0.01).
	DefaultAlpha = 0.01
	// DefaultBootstrap is the number of bootstrap resamples for the ratio CI.
	DefaultBootstrap = 2000
	// DefaultSeed seeds the bootstrap so reports are reproducible.
	DefaultSeed = 1
	// Confidence is the level of every confidence interval in a report.
	Confidence = 0.95
)

// Options configures Analyze. The zero value means the defaults above with the PLT metric.
type Options struct {
	// Metric is the analysed field; "" means PLT.
	Metric Metric
	// Baseline is the protocol compared against ("" means BaselineFor the measured protocols).
	Baseline string
	// Alpha is the significance threshold for the Mann-Whitney p-value (0 means DefaultAlpha).
	Alpha float64
	// Bootstrap is the number of bootstrap resamples (0 means DefaultBootstrap).
	Bootstrap int
	// Seed seeds the bootstrap (0 means DefaultSeed).
	Seed int64
}

func (o Options) withDefaults() Options {
	o.Metric = cmp.Or(o.Metric, PLT)
	o.Alpha = cmp.Or(o.Alpha, DefaultAlpha)
	o.Bootstrap = cmp.Or(o.Bootstrap, DefaultBootstrap)
	o.Seed = cmp.Or(o.Seed, DefaultSeed)
	return o
}

// Report is the analysis of a set of records: per-group statistics, comparisons with the
// baseline, and the run context.
type Report struct {
	// Options are the options used, defaults filled in.
	Options Options
	// Groups are sorted by page, link, mode, then protocol (h1, h2, h3, then others).
	Groups []*Group
	// Comparisons compare each non-baseline group with the baseline group of the same page,
	// link and mode, in the order of Groups.
	Comparisons []*Comparison
	// SkippedLines counts corrupt or truncated input lines that were skipped (set by the reader;
	// Analyze leaves it 0).
	SkippedLines int
	// Duplicates counts records read twice and dropped (set by the reader; not corrupt).
	Duplicates int
	// Refused lists the records refused on read because a value was out of range (set by the
	// reader; see ValidateRecord), one line each, capped at MaxWarnings.
	Refused []string
	// RefusedCount is the number of refused records (Refused may be capped).
	RefusedCount int
	// Warnings are what a reader must know before trusting the tables: settings that split a
	// condition, loads lost to harness unbalanced between protocols, partial experiments.
	Warnings []string
	// Partial is true when an experiment made fewer loads than it scheduled (interrupted).
	Partial bool
	// Context describes where and how the records were measured.
	Context Context
	// Reproduction, when set by the caller, puts the report beside a published experiment.
	Reproduction *Reproduction
	// Flows summarises the bulk-flow records (kind "flow") per (link, mix, flow) across runs;
	// FlowRuns holds those records run by run (for the per-run table and the time plots).
	Flows    []*FlowGroup
	FlowRuns []FlowRun
}

// Analyze groups the page-load records of recs (warm-up loads and link checks excluded),
// summarises each group and compares each protocol with the baseline. It never fails: an input
// without loads gives a Report without groups (see Report.Empty).
func Analyze(recs []*result.Record, opts Options) *Report {
	opts = opts.withDefaults()
	rep := &Report{Options: opts, Context: buildContext(recs)}
	rep.Groups = groupRecords(recs, opts.Metric)
	if rep.Options.Baseline == "" {
		var ps []string
		for _, g := range rep.Groups {
			if !slices.Contains(ps, g.Protocol) {
				ps = append(ps, g.Protocol)
			}
		}
		rep.Options.Baseline = cmp.Or(BaselineFor(ps), DefaultBaseline)
	}
	rep.Comparisons = compareGroups(rep.Groups, rep.Options)
	rep.Warnings = rep.warnings(recs)
	for _, w := range rep.Warnings {
		rep.Partial = rep.Partial || strings.HasPrefix(w, "PARTIAL")
	}
	rep.Flows, rep.FlowRuns = flowGroups(recs), flowRuns(recs)
	return rep
}

// Empty reports whether the report has no page loads at all (it may still have flows).
func (r *Report) Empty() bool { return len(r.Groups) == 0 }

// HasFlows reports whether the report has bulk-flow records.
func (r *Report) HasFlows() bool { return len(r.Flows) > 0 }

func joinNames[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}
