package studies

import (
	"fmt"
	"math"
	"strings"
	"time"

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
}

// flowResults reads a flow part's records (set by flows.go with the flows package; nil before).
var flowResults func(recs []*result.Record, experiment string) []FlowMixResult

// flowGoodputFigure plots a flow part's goodput over time (set by flows.go; nil before).
var flowGoodputFigure func(recs []*result.Record, experiment, file string) (Figure, bool)

// flowNotAvailable is the evidence of findings and sections that need bulk flows.
const flowNotAvailable = "not run: flows not available (the flows package has not landed in this build)"

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

// mixes returns the results of the named flow part (nil when flows are not available or not run).
func (e *Support) mixes(part string) []FlowMixResult {
	if flowResults == nil {
		return nil
	}
	return flowResults(e.Records, PartExperiment(e.Study.Name, part))
}

// carlucciFlowSection is the safe-deployment section: each protocol alone, then QUIC and TCP
// CUBIC sharing the bottleneck.
func carlucciFlowSection(e *Support) Section {
	s := Section{ID: "flows", Title: "Safe deployment: bulk flows alone and sharing the bottleneck",
		Text: []string{"Bulk downloads through the paper's link (3 Mbit/s, 50 ms, 1 BDP): one flow per protocol alone " +
			"(channel utilization = goodput / rate, loss ratio = packets dropped / packets sent), then QUIC (quic-go, NewReno) and TCP CUBIC sharing it " +
			"(goodput shares and Jain's fairness index)."}}
	if !e.Flows {
		s.Text = append(s.Text, flowNotAvailable+".")
		return s
	}
	ms := e.mixes("flows")
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
	if flowGoodputFigure != nil {
		if f, ok := flowGoodputFigure(e.Records, PartExperiment(e.Study.Name, "flows"), "flows-goodput"); ok {
			s.Figures = []Figure{f}
		}
	}
	return s
}

// aloneFlow returns the mean utilization and loss ratio of the single-flow runs whose flow spec
// starts with proto+":" (ok false when there is none).
func aloneFlow(ms []FlowMixResult, proto string) (util, loss float64, ok bool) {
	n := 0
	for _, m := range ms {
		if len(m.Flows) == 1 && strings.HasPrefix(m.Flows[0].Spec, proto+":") {
			util += m.Flows[0].Utilization
			loss += m.Flows[0].LossRatio
			n++
		}
	}
	if n == 0 {
		return math.NaN(), math.NaN(), false
	}
	return util / float64(n), loss / float64(n), true
}

func judgeSafeAlone(e *Support) Judgement {
	if !e.Flows {
		return notRun(flowNotAvailable)
	}
	if j, short := e.shortFlows(); short {
		return j
	}
	ms := e.mixes("flows")
	uq, lq, okq := aloneFlow(ms, "h3")
	ut, lt, okt := aloneFlow(ms, "h2")
	if !okt {
		ut, lt, okt = aloneFlow(ms, "h1")
	}
	if !okq || !okt {
		return notRun("no single-flow runs of h3 and a TCP protocol at this scale")
	}
	ev := fmt.Sprintf("alone: QUIC utilization %.3f, loss ratio %.4f; TCP CUBIC utilization %.3f, loss ratio %.4f", uq, lq, ut, lt)
	runs, ok := e.flowRuns(), uq >= 0.9*ut && lq <= lt+0.01
	if !ok {
		ev += flowRunsNote(runs)
	}
	return verdict(ok, runs >= minFlowRuns, ev, "Safe deployment: bulk flows alone and sharing the bottleneck")
}

func judgeSafeSharing(e *Support) Judgement {
	if !e.Flows {
		return notRun(flowNotAvailable)
	}
	if j, short := e.shortFlows(); short {
		return j
	}
	var jains []float64
	var parts []string
	for _, m := range e.mixes("flows") {
		if len(m.Flows) != 2 {
			continue
		}
		jains = append(jains, m.Jain)
		parts = append(parts, fmt.Sprintf("run %d: %s share %.2f, %s share %.2f, Jain %.3f", m.Run, m.Flows[0].Spec, m.Flows[0].Share, m.Flows[1].Spec, m.Flows[1].Share, m.Jain))
	}
	if len(jains) == 0 {
		return notRun("no shared runs at this scale")
	}
	ok := true
	for _, j := range jains {
		ok = ok && j >= 0.9
	}
	ev := strings.Join(parts, "; ")
	if !ok {
		ev += flowRunsNote(len(jains))
	}
	return verdict(ok, len(jains) >= minFlowRuns, ev, "Safe deployment: bulk flows alone and sharing the bottleneck")
}

// minFlowRuns is the fewest runs of a mix for which a failed flow criterion is a contradiction:
// with fewer, one run's value has no interval and the verdict is inconclusive.
const minFlowRuns = 3

// flowRuns is the number of runs per mix of the plan's flow parts (the smallest).
func (e *Support) flowRuns() int {
	n := 0
	for i, f := range e.Plan.Flows {
		if i == 0 || f.Runs < n {
			n = f.Runs
		}
	}
	return n
}

// flowRunsNote says why a failed flow criterion from fewer than minFlowRuns runs is inconclusive.
func flowRunsNote(runs int) string {
	if runs >= minFlowRuns {
		return ""
	}
	return fmt.Sprintf(" (%d run(s) per mix: no interval; %d runs decide it)", runs, minFlowRuns)
}
