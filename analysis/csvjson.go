package analysis

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
)

// jsonReport is the --format json contract (issue 6): groups, comparisons, skipped_lines; the
// other fields are additions.
type jsonReport struct {
	Metric       Metric        `json:"metric"`
	Baseline     string        `json:"baseline"`
	Alpha        float64       `json:"alpha"`
	Groups       []jsonGroup   `json:"groups"`
	Comparisons  []jsonCompare `json:"comparisons"`
	SkippedLines int           `json:"skipped_lines"`
	Duplicates   int           `json:"duplicates"`
	Refused      []string      `json:"refused,omitempty"`
	Warnings     []string      `json:"warnings,omitempty"`
	Partial      bool          `json:"partial"`
	Context      Context       `json:"context"`
	// References is the reproduction table, present only for a reproduction.
	References []jsonReference `json:"references,omitempty"`
	// Flows summarises the bulk flows per (link, mix, flow), present only with flow records.
	Flows []jsonFlow `json:"flows,omitempty"`
}

// jsonFlow is one flow group: medians across valid runs with 95% CI bounds (null when n < 6).
// Goodputs are bit/s; loss ratio, utilizations are fractions; converge is seconds.
type jsonFlow struct {
	Link          string         `json:"link"`
	Mix           string         `json:"mix"`
	Flow          int            `json:"flow"`
	Settings      string         `json:"settings,omitempty"`
	Protocol      string         `json:"protocol"`
	CC            string         `json:"cc"`
	Runs          int            `json:"runs"`
	Valid         int            `json:"valid"`
	Invalid       map[string]int `json:"invalid"`
	GoodputBps    jsonEstimate   `json:"goodput_bps"`
	LossRatio     jsonEstimate   `json:"loss_ratio"`
	LossSource    string         `json:"loss_source"`
	Utilization   jsonEstimate   `json:"utilization"`
	IPUtilization jsonEstimate   `json:"ip_utilization"`
	Jain          jsonEstimate   `json:"jain"`
	ConvergeS     jsonEstimate   `json:"converge_s"`
}

// jsonEstimate is a median with its CI; null where not computable.
type jsonEstimate struct {
	Median *float64 `json:"median"`
	Low    *float64 `json:"ci_low"`
	High   *float64 `json:"ci_high"`
}

func toJSONEstimate(e Estimate) jsonEstimate {
	return jsonEstimate{Median: num(e.Median), Low: num(e.Low), High: num(e.High)}
}

func toJSONFlow(g *FlowGroup) jsonFlow {
	return jsonFlow{Link: g.Link, Mix: g.Mix, Flow: g.Flow, Settings: g.Settings, Protocol: g.Protocol, CC: g.CC, Runs: g.Runs,
		Valid: g.Valid, Invalid: g.Invalid, GoodputBps: toJSONEstimate(g.Goodput), LossRatio: toJSONEstimate(g.LossRatio),
		LossSource: g.LossSource, Utilization: toJSONEstimate(g.Utilization), IPUtilization: toJSONEstimate(g.IPUtilization),
		Jain: toJSONEstimate(g.Jain), ConvergeS: toJSONEstimate(g.ConvergeS)}
}

// jsonGroup is one group. Times are ms; null means not computable (too few values); a censored
// statistic holds the deadline (a lower bound) and its name is listed in Censored.
type jsonGroup struct {
	Page       string         `json:"page"`
	Link       string         `json:"link"`
	Mode       string         `json:"mode"`
	Protocol   string         `json:"protocol"`
	Settings   string         `json:"settings,omitempty"`
	Runs       int            `json:"runs"`
	Valid      int            `json:"valid"`
	TimedOut   int            `json:"timed_out"`
	NetFailed  int            `json:"network_failures"`
	Lost       int            `json:"lost_to_harness"`
	Invalid    map[string]int `json:"invalid"`
	DeadlineMs *float64       `json:"deadline_ms,omitempty"`
	MedianMs   *float64       `json:"median_ms"`
	MeanMs     *float64       `json:"mean_ms"`
	SDMs       *float64       `json:"sd_ms"`
	CV         *float64       `json:"cv"`
	MinMs      *float64       `json:"min_ms"`
	P5Ms       *float64       `json:"p5_ms"`
	P25Ms      *float64       `json:"p25_ms"`
	P75Ms      *float64       `json:"p75_ms"`
	P95Ms      *float64       `json:"p95_ms"`
	MaxMs      *float64       `json:"max_ms"`
	CILowMs    *float64       `json:"ci_low_ms"`
	CIHighMs   *float64       `json:"ci_high_ms"`
	CICoverage *float64       `json:"ci_coverage"`
	Censored   []string       `json:"censored,omitempty"`
}

type jsonCompare struct {
	Page          string   `json:"page"`
	Link          string   `json:"link"`
	Mode          string   `json:"mode"`
	Protocol      string   `json:"protocol"`
	Baseline      string   `json:"baseline"`
	N             int      `json:"n"`
	BaselineN     int      `json:"baseline_n"`
	Ratio         *float64 `json:"ratio"`
	RatioCILow    *float64 `json:"ratio_ci_low"`
	RatioCIHigh   *float64 `json:"ratio_ci_high"`
	DiffPct       *float64 `json:"diff_pct"`
	U             *float64 `json:"u"`
	PMannWhitney  *float64 `json:"p_mann_whitney"`
	MannWhitneyEx bool     `json:"mann_whitney_exact"`
	WelchT        *float64 `json:"welch_t"`
	WelchDF       *float64 `json:"welch_df"`
	PWelch        *float64 `json:"p_welch"`
	Significant   bool     `json:"significant"`
}

// num returns &v, nil for NaN and +Inf (JSON has neither).
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// WriteJSON writes the report as one indented JSON object (see jsonReport for the contract).
func (r *Report) WriteJSON(w io.Writer) error {
	out := jsonReport{Metric: r.Options.Metric, Baseline: r.Options.Baseline, Alpha: r.Options.Alpha,
		Groups: []jsonGroup{}, Comparisons: []jsonCompare{}, SkippedLines: r.SkippedLines, Context: r.Context,
		Duplicates: r.Duplicates, Refused: r.Refused, Warnings: r.Warnings, Partial: r.Partial,
		References: r.jsonReferences()}
	for _, g := range r.Groups {
		out.Groups = append(out.Groups, toJSONGroup(g))
	}
	for _, c := range r.Comparisons {
		out.Comparisons = append(out.Comparisons, toJSONCompare(c))
	}
	for _, g := range r.Flows {
		out.Flows = append(out.Flows, toJSONFlow(g))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}

func toJSONGroup(g *Group) jsonGroup {
	j := jsonGroup{Page: g.Page, Link: g.Link, Mode: string(g.Mode), Protocol: g.Protocol, Runs: g.Runs,
		Settings: g.Settings, NetFailed: g.NetFailed, Lost: g.Lost, Valid: g.Valid, TimedOut: g.TimedOut, Invalid: g.Invalid, DeadlineMs: num(g.DeadlineMs),
		MeanMs: num(g.Mean), SDMs: num(g.SD), CV: num(g.CV), CICoverage: num(g.CICoverage)}
	if g.Censored() == 0 {
		j.DeadlineMs = nil
	}
	cens := func(name string, v float64) *float64 {
		if math.IsInf(v, 1) {
			j.Censored = append(j.Censored, name)
			return num(g.DeadlineMs)
		}
		return num(v)
	}
	j.MedianMs, j.MinMs, j.P5Ms = cens("median_ms", g.Median), cens("min_ms", g.Min), cens("p5_ms", g.P5)
	j.P25Ms, j.P75Ms, j.P95Ms = cens("p25_ms", g.P25), cens("p75_ms", g.P75), cens("p95_ms", g.P95)
	j.MaxMs, j.CILowMs, j.CIHighMs = cens("max_ms", g.Max), cens("ci_low_ms", g.CILow), cens("ci_high_ms", g.CIHigh)
	return j
}

func toJSONCompare(c *Comparison) jsonCompare {
	return jsonCompare{Page: c.Page, Link: c.Link, Mode: string(c.Mode), Protocol: c.Protocol,
		Baseline: c.Baseline, N: c.N, BaselineN: c.BaselineN, Ratio: num(c.Ratio), RatioCILow: num(c.RatioLow),
		RatioCIHigh: num(c.RatioHigh), DiffPct: num(c.DiffPct), U: num(c.MannWhitney.U),
		PMannWhitney: num(c.MannWhitney.P), MannWhitneyEx: c.MannWhitney.Exact, WelchT: num(c.Welch.T),
		WelchDF: num(c.Welch.DF), PWelch: num(c.Welch.P), Significant: c.Significant}
}

// csvHeader names the CSV columns: one row per group, with its comparison against the
// baseline on the same row (empty for the baseline itself).
var csvHeader = []string{"page", "link", "mode", "protocol", "runs", "valid", "invalid", "timed_out",
	"deadline_ms", "median_ms", "ci_low_ms", "ci_high_ms", "mean_ms", "sd_ms", "cv", "min_ms", "p5_ms",
	"p25_ms", "p75_ms", "p95_ms", "max_ms", "baseline", "ratio", "ratio_ci_low", "ratio_ci_high",
	"diff_pct", "p_mann_whitney", "p_welch", "significant", "network_failures", "lost_to_harness", "settings"}

// WriteCSV writes the report as RFC 4180 CSV with the csvHeader columns. A censored statistic
// is written as ">=DEADLINE"; a value that cannot be computed is empty.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(escapeControls(w))
	cw.Write(csvHeader)
	cmp := map[Key]*Comparison{}
	for _, c := range r.Comparisons {
		cmp[c.Key] = c
	}
	for _, g := range r.Groups {
		cw.Write(csvRow(g, cmp[g.Key]))
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv report: %w", err)
	}
	return nil
}

func csvRow(g *Group, c *Comparison) []string {
	d := g.DeadlineMs
	ms := func(v float64) string {
		if math.IsInf(v, 1) {
			return ">=" + csvNum(d)
		}
		return csvNum(v)
	}
	deadline := ""
	if g.Censored() > 0 {
		deadline = csvNum(d)
	}
	row := []string{g.Page, g.Link, string(g.Mode), g.Protocol, strconv.Itoa(g.Runs), strconv.Itoa(g.Valid),
		strconv.Itoa(g.InvalidTotal()), strconv.Itoa(g.TimedOut), deadline, ms(g.Median), ms(g.CILow),
		ms(g.CIHigh), csvNum(g.Mean), csvNum(g.SD), csvNum(g.CV), ms(g.Min), ms(g.P5), ms(g.P25), ms(g.P75),
		ms(g.P95), ms(g.Max)}
	added := []string{strconv.Itoa(g.NetFailed), strconv.Itoa(g.Lost), g.Settings} // columns added at the end
	if c == nil {
		return append(append(row, "", "", "", "", "", "", "", ""), added...)
	}
	return append(append(row, c.Baseline, csvNum(c.Ratio), csvNum(c.RatioLow), csvNum(c.RatioHigh), csvNum(c.DiffPct),
		csvNum(c.MannWhitney.P), csvNum(c.Welch.P), strconv.FormatBool(c.Significant)), added...)
}

// csvNum formats v with up to 6 significant decimals; NaN is empty, +Inf is "inf".
func csvNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return ""
	case math.IsInf(v, 1):
		return "inf"
	}
	return strconv.FormatFloat(v, 'g', 10, 64)
}
