package studies

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
)

// FlowMixResult is one run of a flow mix, from the "kind":"flow" records of a flow part.
type FlowMixResult struct {
	// Mix names the mix: the flows' "PROTO:CC" joined by "+".
	Mix string
	// Run numbers the runs of the mix from 0.
	Run int
	// Flows are the mix's flows in the order given.
	Flows []FlowResult
	// Jain is Jain's fairness index of the flows' steady-state goodputs (1 = equal shares).
	Jain float64
	// Common holds, per flow in Flows order, its goodput per bin (bit/s) over the span where
	// every flow is in its steady state (the records' [JainFromS, JainToS]); nil without one.
	Common [][]float64
}

// FlowResult is one flow's measurements.
type FlowResult struct {
	// Spec is "PROTO:CC", e.g. "h2:cubic" or "h3:newreno".
	Spec string
	// GoodputBps is the steady-state goodput in bit/s.
	GoodputBps float64
	// Utilization is the goodput over the link's rate, in [0, 1].
	Utilization float64
	// LossRatio is the share of the flow's packets the link dropped, in [0, 1].
	LossRatio float64
	// Share is the flow's part of the mix's total goodput, in [0, 1].
	Share float64
	// Steady is the flow's goodput per bin (bit/s) over its steady state [SteadyFromS,
	// SteadyToS], BinMs wide (the record's series cut to it), and RateBps the link's down rate:
	// the series the flow criteria's block bootstrap resamples.
	Steady  []float64
	RateBps float64
	BinMs   float64
}

// MinFlowDuration is the shortest flow a safe-deployment verdict is made from: shorter flows
// (the smoke scale's 5 s) spend most of their time in slow start.
const MinFlowDuration = 10 * time.Second

// shortFlows returns a "not run" judgement when the plan's flows are shorter than MinFlowDuration.
func (e *Support) shortFlows() (Judgement, bool) {
	for _, f := range e.Plan.Flows {
		if f.Duration < MinFlowDuration {
			return notRun(fmt.Sprintf("flows of %v at this scale: too short for a verdict (need %v)", f.Duration, MinFlowDuration)), true
		}
	}
	return Judgement{}, false
}

// mixes returns the results of the named flow part (nil when flows are not available or not
// run), the runs `reproduce --decide` added ("PART/decide/K") pooled after the part's own, each
// mix's runs numbered on from the part's.
func (e *Support) mixes(part string) []FlowMixResult {
	name := PartExperiment(e.Study.Name, part)
	out := readFlowResults(e.Records, name)
	runs := map[string]int{}
	for _, m := range out {
		runs[m.Mix] = max(runs[m.Mix], m.Run+1)
	}
	for _, x := range decideExperiments(e.Records, name) {
		added := readFlowResults(e.Records, x)
		next := map[string]int{}
		for _, m := range added {
			m.Run += runs[m.Mix]
			next[m.Mix] = max(next[m.Mix], m.Run+1)
			out = append(out, m)
		}
		for k, v := range next {
			runs[k] = v
		}
	}
	return out
}

// decideExperiments returns the experiment names "NAME/decide/K" of recs's flow records, in
// the order of K.
func decideExperiments(recs []*result.Record, name string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range recs {
		if r.IsFlow() && strings.HasPrefix(r.Experiment, name+decideTag) && !seen[r.Experiment] {
			seen[r.Experiment] = true
			out = append(out, r.Experiment)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		ka, _ := strconv.Atoi(strings.TrimPrefix(a, name+decideTag))
		kb, _ := strconv.Atoi(strings.TrimPrefix(b, name+decideTag))
		return ka - kb
	})
	return out
}

// carlucciFlowSection is the safe-deployment section: each protocol alone, then QUIC and TCP
// CUBIC sharing the bottleneck.
func carlucciFlowSection(e *Support) Section {
	s := Section{ID: "flows", Title: "Safe deployment: bulk flows alone and sharing the bottleneck",
		Text: []string{"Bulk downloads through the paper's link (3 Mbit/s, 50 ms, 1 BDP): one flow per protocol alone " +
			"(channel utilization = goodput / rate, loss ratio = packets dropped / packets sent), then QUIC (quic-go, NewReno) and TCP CUBIC sharing it " +
			"(goodput shares and Jain's fairness index)."}}
	ms := e.mixes("flows")
	if out := e.flowsLeftOutText("flows"); out != "" {
		s.Text = append(s.Text, out)
	}
	if len(ms) == 0 {
		s.Text = append(s.Text, "No flow records: this part was not run or failed.")
		return s
	}
	t := Table{Header: []string{"mix", "run", "flow", "goodput", "utilization", "loss ratio", "share", "Jain's index"}}
	for _, m := range ms {
		for _, f := range m.Flows {
			t.Rows = append(t.Rows, []string{m.Mix, fmt.Sprint(m.Run), f.Spec, fmt.Sprintf("%.3f Mbit/s", f.GoodputBps/1e6),
				fmt.Sprintf("%.3f", f.Utilization), fmt.Sprintf("%.4f", f.LossRatio), fmt.Sprintf("%.3f", f.Share), fmt.Sprintf("%.3f", m.Jain)})
		}
	}
	s.Tables = []Table{t}
	if f, ok := goodputFigure(e.Records, PartExperiment(e.Study.Name, "flows"), "flows-goodput"); ok {
		s.Figures = []Figure{f}
	}
	return s
}

// aloneFlows returns the single-flow runs whose flow spec starts with proto+":".
func aloneFlows(ms []FlowMixResult, proto string) []FlowResult {
	var out []FlowResult
	for _, m := range ms {
		if len(m.Flows) == 1 && strings.HasPrefix(m.Flows[0].Spec, proto+":") {
			out = append(out, m.Flows[0])
		}
	}
	return out
}

// blockBins is the moving-block bootstrap's block length in bins of binMs (FlowBlockS).
func blockBins(binMs float64) int {
	if binMs <= 0 {
		return 0
	}
	return max(1, int(math.Round(FlowBlockS*1000/binMs)))
}

// meanGoodputReps returns, for the runs fs of one protocol alone, the mean over runs of each
// run's mean steady goodput (bit/s) and analysis.BlockBootstrapB moving-block bootstrap replicates of it
// (nil when a run has fewer than two blocks).
func meanGoodputReps(fs []FlowResult, seed uint64) (float64, []float64) {
	runs := make([][][]float64, len(fs))
	block := 0
	for i, f := range fs {
		runs[i] = [][]float64{f.Steady}
		block = blockBins(f.BinMs)
	}
	mean := func(xs [][]float64) float64 { return meanOf(xs[0]) }
	return analysis.BlockReps(runs, block, mean, seed)
}

// judgeSafeAlone tests the two halves of "alone, QUIC uses the channel like TCP with a low loss
// ratio", each at Alpha/2 (Bonferroni): the ratio of QUIC's to TCP's mean steady goodput alone
// must exceed 0.9 (moving-block bootstrap of the per-bin goodput inside each run, analysis.BlockCI, the
// two protocols' runs independent), and QUIC's loss ratio minus TCP's must stay below 1
// percentage point (Welch's interval over the runs' loss ratios: the drops of a run are bursty,
// so a run, not a packet, is the unit; it needs two runs a protocol). Reproduced when both
// intervals lie inside their regions, contradicted when either lies outside.
func judgeSafeAlone(e *Support) Judgement {
	if j, short := e.shortFlows(); short {
		return j
	}
	ms := e.mixes("flows")
	q, tcp := aloneFlows(ms, "h3"), aloneFlows(ms, "h2")
	if len(tcp) == 0 {
		tcp = aloneFlows(ms, "h1")
	}
	if len(q) == 0 || len(tcp) == 0 {
		return notRun("no single-flow runs of h3 and a TCP protocol at this scale")
	}
	a := Alpha / 2
	mq, rq := meanGoodputReps(q, 1)
	mt, rt := meanGoodputReps(tcp, 2)
	ratio, rlo, rhi := mq/mt, math.NaN(), math.NaN()
	if rq != nil && rt != nil {
		reps := make([]float64, len(rq))
		for i := range reps {
			reps[i] = rq[i] / rt[i]
		}
		slices.Sort(reps)
		rlo, rhi = analysis.Quantile(reps, a/2), analysis.Quantile(reps, 1-a/2)
	}
	lq, lt := lossRatios(q), lossRatios(tcp)
	dl, llo, lhi := analysis.WelchCI(lq, lt, a)
	util := Region{0.9, math.Inf(1)}
	loss := Region{math.Inf(-1), 0.01}
	ev := fmt.Sprintf("alone (%d QUIC and %d TCP CUBIC runs): goodput ratio QUIC/TCP %s (%g %% block bootstrap, %g s blocks; claimed %s); "+
		"loss ratio QUIC %.4f, TCP %.4f, difference %s (%g %% Welch interval over runs; claimed %s)",
		len(q), len(tcp), quantity.FormatInterval("%.3f", ratio, rlo, rhi), 100*(1-a), FlowBlockS, util, meanOf(lq), meanOf(lt),
		quantity.FormatInterval("%+.4f", dl, llo, lhi), 100*(1-a), loss)
	if math.IsNaN(llo) {
		ev += flowRunsNote(min(len(q), len(tcp)))
	}
	v, vs := fold(every, a, within(rlo, rhi, util), within(llo, lhi, loss))
	vr, vl := vs[0], vs[1]
	j := Judgement{Verdict: v, Evidence: ev, See: []string{"Safe deployment: bulk flows alone and sharing the bottleneck"}}
	if j.Verdict != Inconclusive {
		return j
	}
	// What would decide it: the runs per mix of each protocol alone that move each undecided
	// interval off its bound at the value observed here.
	f := e.flowPart("flows")
	if f == nil {
		return j
	}
	mixes := mixesWhere(f, func(m []string) bool { return aloneMix("h3")(m) || aloneMix(tcpProto(tcp))(m) })
	have := min(len(q), len(tcp))
	var texts []string
	if vr == Inconclusive && !math.IsNaN(rlo) {
		n := e.flowNeedFor("flows", mixes, runsToExclude(have, ratio, halfToward(ratio, rlo, rhi, util.Lo), util.Lo, a), have, "goodput ratio")
		j.FlowNeeds = append(j.FlowNeeds, n)
		texts = append(texts, n.text())
	}
	if vl == Inconclusive {
		runs := math.MaxInt32
		if len(lq) >= 2 && len(lt) >= 2 {
			_, sq := analysis.MeanSD(lq)
			_, st := analysis.MeanSD(lt)
			runs = analysis.WelchPerArm(sq, st, dl-loss.Hi, a, minFlowRuns)
		}
		n := e.flowNeedFor("flows", mixes, runs, have, "loss ratio difference")
		j.FlowNeeds = append(j.FlowNeeds, n)
		texts = append(texts, n.text())
	}
	if len(texts) > 0 {
		j.Evidence += "; " + strings.Join(texts, "; ")
	}
	return j
}

// tcpProto is the protocol of the TCP runs alone judged beside QUIC ("h2", or "h1").
func tcpProto(tcp []FlowResult) string {
	if len(tcp) > 0 {
		if p, _, ok := strings.Cut(tcp[0].Spec, ":"); ok {
			return p
		}
	}
	return "h2"
}

// lossRatios returns the runs' loss ratios.
func lossRatios(fs []FlowResult) []float64 {
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = f.LossRatio
	}
	return out
}

// jain is Jain's fairness index (sum x)^2 / (n sum x^2) of the flows' mean goodputs over their
// series xs (Jain, Chiu & Hawe, DEC-TR-301, 1984).
func jain(xs [][]float64) float64 {
	var s, s2 float64
	for _, x := range xs {
		m := meanOf(x)
		s, s2 = s+m, s2+m*m
	}
	if s2 == 0 {
		return math.NaN()
	}
	return s * s / (float64(len(xs)) * s2)
}

// judgeSafeSharing tests "QUIC sharing with TCP CUBIC does not starve it" as Jain's index of
// the two flows' goodputs over their common steady span above 0.9, averaged over the shared
// runs, by the moving-block bootstrap of the two flows' per-bin goodput resampled with the same
// blocks (their joint behaviour kept; analysis.BlockCI) at Alpha: reproduced when the interval lies
// above 0.9, contradicted when below.
func judgeSafeSharing(e *Support) Judgement {
	if j, short := e.shortFlows(); short {
		return j
	}
	var runs [][][]float64
	var parts []string
	block := 0
	for _, m := range e.mixes("flows") {
		if len(m.Flows) != 2 {
			continue
		}
		parts = append(parts, fmt.Sprintf("run %d: %s share %.2f, %s share %.2f, Jain %.3f", m.Run, m.Flows[0].Spec, m.Flows[0].Share, m.Flows[1].Spec, m.Flows[1].Share, m.Jain))
		if m.Common != nil {
			runs = append(runs, m.Common)
			block = blockBins(m.Flows[0].BinMs)
		}
	}
	if len(parts) == 0 {
		return notRun("no shared runs at this scale")
	}
	claimed := Region{0.9, math.Inf(1)}
	est, lo, hi := analysis.BlockCI(runs, block, jain, Alpha, 3)
	ev := strings.Join(parts, "; ") + fmt.Sprintf("; Jain's index over the common steady span, mean of %d runs: %s (%g %% block bootstrap, %g s blocks; claimed %s)",
		len(runs), quantity.FormatInterval("%.3f", est, lo, hi), 100*(1-Alpha), FlowBlockS, claimed)
	v, _ := fold(every, Alpha, within(lo, hi, claimed))
	j := Judgement{Verdict: v, Evidence: ev, See: []string{"Safe deployment: bulk flows alone and sharing the bottleneck"}}
	if f := e.flowPart("flows"); j.Verdict == Inconclusive && f != nil && !math.IsNaN(lo) {
		shared := mixesWhere(f, func(m []string) bool { return len(m) == 2 })
		n := e.flowNeedFor("flows", shared, runsToExclude(len(runs), est, halfToward(est, lo, hi, claimed.Lo), claimed.Lo, Alpha), len(runs), "Jain's index")
		j.FlowNeeds = []FlowNeed{n}
		j.Evidence += "; " + n.text()
	}
	return j
}

// minFlowRuns is the runs per mix the default scales give a flow part, so that its loss ratio
// has an interval (two runs a protocol at the least; analysis.WelchCI).
const minFlowRuns = 3

// flowRunsNote says why a loss criterion from fewer than two runs a protocol has no interval.
func flowRunsNote(runs int) string {
	if runs >= 2 {
		return ""
	}
	return fmt.Sprintf(" (%d run(s) per mix: no interval for the loss ratio; %d runs give one)", runs, minFlowRuns)
}
