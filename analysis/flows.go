package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pltlab/pltlab/result"
)

// FlowKey identifies a flow position across the runs of a flows experiment: the same link,
// the same mix and the same place in it, made with the same settings.
type FlowKey struct {
	// Link is the link spec (Record.Link.Spec).
	Link string
	// Mix is the run's mix (result.Flow.Mix), e.g. "h3:newreno+h1:cubic".
	Mix string
	// Flow is the flow's index in the mix.
	Flow int
	// Settings names every setting that changes the measurement and that the flows of the
	// group shared, by the label of loads' groups (Key.Settings: the h3 stack and its QUIC
	// controller, the pltlab version, the shielded CPU, ...) with the flow's own start,
	// duration, bins and host stack: flows made with different settings are never pooled.
	Settings string
}

// Estimate is a median across runs with its 95% distribution-free CI (MedianCI; NaN bounds
// with fewer than 6 runs).
type Estimate struct {
	Median, Low, High float64
}

// estimate returns the median and CI of xs (any order); NaN for an empty sample.
func estimate(xs []float64) Estimate {
	s := slices.Sorted(slices.Values(xs))
	lo, hi, _ := MedianCI(s, Confidence)
	return Estimate{Median: median(s), Low: lo, High: hi}
}

// FlowGroup summarises one flow position over the valid runs (invalid runs are counted, not
// used). Goodputs are bit/s; utilizations and loss ratios are fractions.
type FlowGroup struct {
	FlowKey
	// Protocol and CC are the flow's protocol and congestion control (of its first record).
	Protocol, CC string
	// Runs counts every record of the group; Valid the valid ones.
	Runs, Valid int
	// Invalid counts the invalid records by reason, starved ones excepted.
	Invalid map[string]int
	// Starved counts the runs in which the flow connected but read no body byte
	// (result.Flow.Starved): not valid, and counted apart from the harness's failures.
	Starved int
	// Goodput is the steady-state goodput (result.Flow.GoodputBps).
	Goodput Estimate
	// LossRatio is the flow's loss ratio (result.Flow.LossRatio); LossSource says whose count.
	LossRatio  Estimate
	LossSource string
	// Utilization, IPUtilization and Jain are the run-level figures (the same on every flow of
	// a run), ConvergeS the time to a fair share (NaN for a single flow or when never reached).
	Utilization, IPUtilization, Jain Estimate
	ConvergeS                        Estimate
	// DownBps is the link's bottleneck rate towards the client, bit/s (0 = unshaped).
	DownBps int64
	// Split is true when another group has the same link, mix and flow with other Settings:
	// the tables then name the group's Settings beside its mix.
	Split bool
	// First is the group's first record, whose settings are the group's (view's compare reads
	// them through result.SettingDiffs).
	First *result.Record
}

// FlowRun is the records of one run of one flows experiment, ordered by flow index.
type FlowRun struct {
	// Experiment and Run identify the run; Link and Mix describe it.
	Experiment string
	Run        int
	Link, Mix  string
	// Records are the run's flow records, by flow index.
	Records []*result.Record
}

// Title returns "link L, mix M, run N".
func (fr FlowRun) Title() string {
	return fmt.Sprintf("link %s, %s, run %d", orDash(fr.Link), orDash(fr.Mix), fr.Run)
}

// flowRuns collects the flow records of recs by (experiment, run, link, mix), in input order.
func flowRuns(recs []*result.Record) []FlowRun {
	var out []FlowRun
	idx := map[[4]string]int{}
	for _, r := range recs {
		if r == nil || !r.IsFlow() {
			continue
		}
		k := [4]string{r.Experiment, strconv.Itoa(r.Run), r.Link.Spec, r.Mix}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, FlowRun{Experiment: r.Experiment, Run: r.Run, Link: r.Link.Spec, Mix: r.Mix})
		}
		out[i].Records = append(out[i].Records, r)
	}
	for _, fr := range out {
		slices.SortStableFunc(fr.Records, func(a, b *result.Record) int { return cmp.Compare(a.FlowIndex, b.FlowIndex) })
	}
	return out
}

// flowGroups summarises the flow records of recs per FlowKey, sorted by link, mix, flow.
func flowGroups(recs []*result.Record) []*FlowGroup {
	byKey := map[FlowKey]*FlowGroup{}
	vals := map[FlowKey]map[string][]float64{}
	settings := newSettingsIndex(recs)
	for _, r := range recs {
		if r == nil || !r.IsFlow() {
			continue
		}
		k := FlowKey{Link: r.Link.Spec, Mix: r.Mix, Flow: r.FlowIndex, Settings: settings.of(r)}
		g := byKey[k]
		if g == nil {
			g = &FlowGroup{FlowKey: k, Protocol: r.Protocol, CC: r.CC, Invalid: map[string]int{}, DownBps: r.Link.DownBps, First: r}
			byKey[k] = g
			vals[k] = map[string][]float64{}
		}
		g.Runs++
		if r.Starved {
			g.Starved++
			continue
		}
		if !r.Valid {
			g.Invalid[r.InvalidReason]++
			continue
		}
		g.Valid++
		g.LossSource = r.LossSource
		v := vals[k]
		v["goodput"] = append(v["goodput"], r.GoodputBps)
		v["loss"] = append(v["loss"], r.LossRatio)
		v["util"] = append(v["util"], r.Utilization)
		v["iputil"] = append(v["iputil"], r.IPUtilization)
		v["jain"] = append(v["jain"], r.Jain)
		if r.ConvergeS != nil && *r.ConvergeS >= 0 {
			v["converge"] = append(v["converge"], *r.ConvergeS)
		}
	}
	out := make([]*FlowGroup, 0, len(byKey))
	for k, g := range byKey {
		v := vals[k]
		g.Goodput, g.LossRatio = estimate(v["goodput"]), estimate(v["loss"])
		g.Utilization, g.IPUtilization, g.Jain = estimate(v["util"]), estimate(v["iputil"]), estimate(v["jain"])
		g.ConvergeS = estimate(v["converge"])
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b *FlowGroup) int {
		return cmp.Or(cmp.Compare(a.Link, b.Link), cmp.Compare(a.Mix, b.Mix), cmp.Compare(a.Flow, b.Flow), cmp.Compare(a.Settings, b.Settings))
	})
	for i, g := range out {
		same := func(o *FlowGroup) bool { return o.Link == g.Link && o.Mix == g.Mix && o.Flow == g.Flow }
		g.Split = (i > 0 && same(out[i-1])) || (i+1 < len(out) && same(out[i+1]))
	}
	return out
}

// MixLabel returns the group's mix, with its Settings in brackets when the group is Split.
func (g *FlowGroup) MixLabel() string {
	if !g.Split {
		return g.Mix
	}
	return g.Mix + " [" + g.Settings + "]"
}

// FlowHeader names the columns of FlowGroup.Row.
var FlowHeader = []string{"link", "mix", "flow", "protocol", "cc", "runs", "valid", "starved", "goodput Mbit/s",
	"95% CI", "loss %", "utilization %", "IP util. %", "Jain", "95% CI", "converge s"}

// Row formats the group as a row of the text, markdown and HTML flow tables and of view's
// compare, under FlowHeader: goodputs in Mbit/s, loss and utilizations in %.
func (g *FlowGroup) Row() []string {
	mbit := func(v float64) string { return fmtFloat(v/1e6, 3) }
	ci := func(e Estimate, f func(float64) string) string {
		if math.IsNaN(e.Low) {
			return "n/a (n<6)"
		}
		return "[" + f(e.Low) + ", " + f(e.High) + "]"
	}
	pct := func(v float64) string { return fmtFloat(v*100, 2) }
	jain := func(v float64) string { return fmtFloat(v, 4) }
	util, ipUtil := pct(g.Utilization.Median), pct(g.IPUtilization.Median)
	if g.DownBps == 0 {
		util, ipUtil = "n/a (unshaped)", "n/a"
	}
	conv := "n/a"
	if g.FlowsInMix() > 1 {
		conv = fmtFloat(g.ConvergeS.Median, 1)
	}
	return []string{orDash(g.Link), g.MixLabel(), strconv.Itoa(g.Flow), g.Protocol, g.CC, strconv.Itoa(g.Runs),
		strconv.Itoa(g.Valid), strconv.Itoa(g.Starved), mbit(g.Goodput.Median), ci(g.Goodput, mbit), pct(g.LossRatio.Median) + " (" + orDash(g.LossSource) + ")",
		util, ipUtil, jain(g.Jain.Median), ci(g.Jain, jain), conv}
}

// FlowsInMix returns the number of flows in the group's mix.
func (g *FlowGroup) FlowsInMix() int {
	return 1 + strings.Count(g.Mix, "+")
}

// flowTable returns the flow groups as a table, header first (nil when there are none).
func (r *Report) flowTable() [][]string {
	if len(r.Flows) == 0 {
		return nil
	}
	rows := [][]string{FlowHeader}
	for _, g := range r.Flows {
		rows = append(rows, g.Row())
	}
	return rows
}

// flowRunHeader names the columns of the per-run table.
var flowRunHeader = []string{"run", "link", "mix", "flow", "protocol", "cc", "valid", "goodput Mbit/s",
	"bytes", "loss %", "utilization %", "Jain", "converge s", "emulator late ms"}

// flowRunTable returns one row per flow of every run, header first (nil when there are none).
func (r *Report) flowRunTable() [][]string {
	if len(r.FlowRuns) == 0 {
		return nil
	}
	rows := [][]string{flowRunHeader}
	for _, fr := range r.FlowRuns {
		for _, rec := range fr.Records {
			valid := "yes"
			if !rec.Valid {
				valid = "no: " + rec.InvalidReason
			}
			conv, late := "n/a", "n/a"
			if rec.ConvergeS != nil {
				conv = fmtFloat(*rec.ConvergeS, 1)
			}
			if rec.Emulator != nil {
				late = fmtFloat(max(rec.Emulator.Down.TimingErrMaxMs, rec.Emulator.Up.TimingErrMaxMs), 1)
			}
			rows = append(rows, []string{strconv.Itoa(fr.Run), orDash(fr.Link), fr.Mix, strconv.Itoa(rec.FlowIndex),
				rec.Protocol, rec.CC, valid, fmtFloat(rec.GoodputBps/1e6, 3), strconv.FormatInt(rec.Bytes, 10),
				fmtFloat(rec.LossRatio*100, 2), fmtFloat(rec.Utilization*100, 2), fmtFloat(rec.Jain, 4), conv, late})
		}
	}
	return rows
}

// flowMethodNote states how the flow figures are computed.
func flowMethodNote() []string {
	return []string{
		"flows: goodput = HTTP body bytes the client read per 100 ms bin; steady state = from a flow's start + max(2 s, 10 base RTTs) (at most half the flow) to its end.",
		"utilization = sum of the flows' mean goodputs over the run's steady window / bottleneck down rate; IP util. = IP bytes the emulator delivered down / rate.",
		"Jain's index (Jain, Chiu & Hawe, DEC-TR-301, 1984) of the flows' mean goodputs over the span where all are steady; converge = time after the last start until Jain of 1 s moving averages stays >= 0.9 for 2 s.",
		"emulator late = the largest lateness of a packet release by the emulator during the run (its own timing error); tens of ms mean the machine starved the emulator and the run understates the link.",
		"loss = the flow's down packets the emulator dropped / offered, attributed by 5-tuple (emulator), else server retransmits / segments sent (sender). Across runs: median with 95% order-statistic CI (n >= 6).",
	}
}
