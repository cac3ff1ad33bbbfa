package studies

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
)

// ModQUIC names the study of the Modified QUIC (ModQUIC) thesis' published baselines.
const ModQUIC = "modquic"

// The thesis' published relative figures (ModQUIC against its baselines), and the relations
// between the baselines they imply. The thesis reports ModQUIC/BBR over each baseline; dividing
// two of its ratios cancels ModQUIC and leaves a relation between two stacks pltlab has:
//
//	throughput: (1 + 0.2790) / (1 + 0.1906) = 1.0742: QUIC/BBR 7.4 % above QUIC/CUBIC;
//	delay:      (1 - 0.1438) / (1 - 0.0656) = 0.9163: QUIC/BBR 8.4 % below QUIC/CUBIC;
//	throughput: (1 + 0.5193) / (1 + 0.3566) = 1.1199: QUIC 12.0 % above TCP.
const (
	// ModQUICOverQUICBBRPct and ModQUICOverQUICCUBICPct are ModQUIC/BBR's throughput gains
	// over QUIC/BBR and QUIC/CUBIC, in percent.
	ModQUICOverQUICBBRPct   = 19.06
	ModQUICOverQUICCUBICPct = 27.9
	// ModQUICDelayVsBBRPct and ModQUICDelayVsCUBICPct are ModQUIC/BBR's delay changes against
	// QUIC/BBR and QUIC/CUBIC, in percent (negative: lower).
	ModQUICDelayVsBBRPct   = -6.56
	ModQUICDelayVsCUBICPct = -14.38
	// ModQUICOverQUICPct and ModQUICOverTCPPct are ModQUIC's throughput gains over QUIC and TCP.
	ModQUICOverQUICPct = 35.66
	ModQUICOverTCPPct  = 51.93
)

// impliedPct is the relation between two baselines that ModQUIC's gains over each imply, in
// percent: (1 + overB/100) / (1 + overA/100) - 1, that is A over B.
func impliedPct(overA, overB float64) float64 { return ((1+overB/100)/(1+overA/100) - 1) * 100 }

const modquicCitation = `Modified QUIC (ModQUIC), a thesis comparing QUIC, TCP and TCP/HTTP2 throughput, delay and fairness ` +
	`with limited and sufficient bandwidth and with loss, QUIC/BBR and QUIC/CUBIC, and a modified QUIC with BBR. ` +
	`The thesis and ModQUIC are not public; its relative figures as quoted in pltlab issue 34: ModQUIC/BBR throughput +19.06 % over ` +
	`QUIC/BBR and +27.9 % over QUIC/CUBIC, delay -6.56 % and -14.38 %, throughput +35.66 % over QUIC and +51.93 % over TCP.`

// modquicLinks are the study's paths: limited bandwidth (10 Mbit/s), sufficient bandwidth
// (100 Mbit/s) and limited with 1 % loss (split between the directions), all at 36 ms with a
// 2 BDP droptail queue (the grid studies' links, GridLink).
var modquicLinks = []struct{ name, link string }{
	{"limited", GridLink(10, 0, 0)},
	{"sufficient", GridLink(100, 0, 0)},
	{"lossy", GridLink(10, 0, 1)},
}

// modquicMixes are the flow mixes of every path: each stack alone (QUIC/BBR and QUIC/CUBIC served
// by ngtcp2, TCP CUBIC with HTTP/1.1 and with HTTP/2), then QUIC/CUBIC sharing with TCP CUBIC
// and QUIC/BBR with QUIC/CUBIC (fairness).
var modquicMixes = [][]string{{"h3:bbr"}, {"h3:cubic"}, {"h1:cubic"}, {"h2:cubic"}, {"h3:cubic", "h1:cubic"}, {"h3:bbr", "h3:cubic"}}

// modquicSpec names the thesis' stacks by their flow specs.
var modquicSpec = map[string]string{"QUIC/BBR": "h3:bbr", "QUIC/CUBIC": "h3:cubic", "TCP": "h1:cubic", "TCP/HTTP2": "h2:cubic"}

func modquic() *Study {
	return &Study{Name: ModQUIC, Title: "Modified QUIC (ModQUIC) thesis: its baselines", Citation: modquicCitation,
		DefaultScale: Quick, plan: modquicPlan, Findings: modquicFindings(), Sections: modquicSections, Differences: modquicDifferences}
}

// modquicPlan is the study's plan at a scale: bulk flows only. Smoke runs the limited and
// sufficient paths once for 3 s (a functional check); quick runs every path 3 times for 10 s, the fewest runs a
// Welch test per relation can decide at p < 0.01 when stacks differ clearly; full 10 runs of 30 s.
func modquicPlan(sc Scale, h Host) Plan {
	p := Plan{Study: ModQUIC, Scale: sc}
	runs, dur, paths := 3, 10*time.Second, modquicLinks
	switch sc {
	case Smoke:
		runs, dur, paths = 1, 3*time.Second, modquicLinks[:2]
		p.ScaledDown = []string{"the limited and sufficient paths, one 3 s run per mix: a functional check, not a result"}
	case Quick:
		p.ScaledDown = []string{"3 runs of 10 s per mix and path (full: 10 runs of 30 s)"}
	case Full:
		runs, dur = 10, 30*time.Second
	}
	if err := h.Ngtcp2; err != nil {
		p.NotRun = []string{"every path: the QUIC flows need the ngtcp2 stack: " + err.Error()}
		return p
	}
	for _, l := range paths {
		p.Flows = append(p.Flows, FlowPart{Name: l.name, Title: "Bulk flows, " + l.name + " (" + l.link + ")", Link: l.link,
			Mixes: modquicMixes, Duration: dur, Runs: runs, H3Stack: flows.StackNgtcp2})
	}
	return p
}

// modquicRun is one run of one stack alone on one path: its steady-state goodput and the RTT
// under load its packets saw (the link's base RTT plus the mean of the median queueing delay per
// bin over the flow's steady state, from the emulator).
type modquicRun struct {
	goodputBps, delayMs float64
}

// modquicAlone returns the valid runs of the flow spec alone on path.
func modquicAlone(e *Support, path, spec string) []modquicRun {
	var out []modquicRun
	for _, r := range e.Records {
		if !r.IsFlow() || !r.Valid || r.Experiment != PartExperiment(ModQUIC, path) || r.Mix != spec || r.Flows != 1 {
			continue
		}
		out = append(out, modquicRun{goodputBps: r.GoodputBps, delayMs: r.Link.RTTMs + steadyMean(r.Flow, r.QueueDelayMs)})
	}
	return out
}

// steadyMean is the mean of a per-bin series over the flow's steady state (NaN when empty).
func steadyMean(f *result.Flow, xs []float64) float64 {
	if f == nil || f.BinMs <= 0 {
		return math.NaN()
	}
	from, to := int(f.SteadyFromS*1000/f.BinMs), min(int(f.SteadyToS*1000/f.BinMs), len(xs))
	if from >= to {
		return math.NaN()
	}
	sum := 0.0
	for _, x := range xs[from:to] {
		sum += x
	}
	return sum / float64(to-from)
}

// modquicRelation is one relation between two baselines: A's metric against B's.
type modquicRelation struct {
	a, b      string // thesis stack names (modquicSpec)
	delay     bool   // the metric: RTT under load (lower is claimed) instead of goodput
	impliedPc float64
}

// judgeRelation judges "A's metric is above (goodput) or below (delay) B's" on every path of the
// plan: Welch's test per path on the runs' values, Holm over the paths at Alpha. Reproduced
// when every path is significant in the claimed direction, contradicted when any is significant
// the other way, inconclusive otherwise, with what the paths not significant could detect and the
// runs that would decide them. Each path's relative difference (A - B) / B comes with its
// (1 - Alpha) delta-method interval beside the implied figure.
func judgeRelation(e *Support, rel modquicRelation) Judgement {
	if err := e.Plan.Host.Ngtcp2; err != nil {
		return Judgement{Verdict: NotTestable, Evidence: "the QUIC flows need the ngtcp2 stack: " + err.Error()}
	}
	metric := func(r modquicRun) float64 { return r.goodputBps / 1e6 }
	unit, what := "Mbit/s", "goodput"
	if rel.delay {
		metric, unit, what = func(r modquicRun) float64 { return r.delayMs }, "ms", "RTT under load"
	}
	var diffs []Diff
	var paths []string
	for _, fp := range e.Plan.Flows {
		a, b := modquicAlone(e, fp.Name, modquicSpec[rel.a]), modquicAlone(e, fp.Name, modquicSpec[rel.b])
		if len(a) < HighwayMinRuns || len(b) < HighwayMinRuns {
			continue
		}
		va, vb := make([]float64, len(a)), make([]float64, len(b))
		for i, r := range a {
			va[i] = metric(r)
		}
		for i, r := range b {
			vb[i] = metric(r)
		}
		// Diff's TCP side is A and its QUIC side B: Pct = (A - B) / B x 100.
		d := CompareMeans(va, vb)
		diffs, paths = append(diffs, d), append(paths, fp.Name)
	}
	if len(diffs) == 0 {
		return notRun(fmt.Sprintf("no path with %d or more valid runs of %s and of %s alone", HighwayMinRuns, rel.a, rel.b))
	}
	way := 1.0 // goodput: A above; delay: A below
	if rel.delay {
		way = -1
	}
	claims := make([]claim, len(diffs))
	for k, d := range diffs {
		claims[k] = testClaim(d.P, way*d.Pct)
	}
	v, vs := fold(everyHolm, Alpha, claims...)
	var parts, undecided []string
	j := Judgement{Verdict: v, See: []string{"Each stack alone"}}
	for k, d := range diffs {
		_, lo, hi := analysis.NormalCI(d.Pct, pctVar(d), Alpha)
		parts = append(parts, fmt.Sprintf("%s: %s %.2f %s, %s %.2f %s, %s (Welch p=%s)", paths[k], rel.a, d.Mean, unit, rel.b, d.RefMean, unit,
			quantity.FormatInterval("%+.1f %%", d.Pct, lo, hi), quantity.FormatP(d.P)))
		if vs[k] == Inconclusive && d.N > 1 && d.NRef > 1 && d.RefMean > 0 {
			runs := WelchPerArm(d.SD, d.RefSD, d.Mean-d.RefMean)
			undecided = append(undecided, fmt.Sprintf("%s detects %s, decided by %d runs per stack", paths[k],
				quantity.FormatPct(WelchDetectable(d.SD, d.RefSD, d.N, d.NRef)/d.RefMean*100), runs))
			mixes := [][]string{{modquicSpec[rel.a]}, {modquicSpec[rel.b]}}
			j.FlowNeeds = append(j.FlowNeeds, e.flowNeedFor(paths[k], mixes, runs, min(d.N, d.NRef), what+" of "+rel.a+" against "+rel.b))
		}
	}
	for _, p := range paths {
		for _, fp := range e.Plan.Flows {
			if fp.Name == p {
				j.Cells = append(j.Cells, cellName(p, fp.Link, rel.a+" alone", rel.b+" alone"))
			}
		}
	}
	j.Evidence = fmt.Sprintf("%s of %s against %s: ", what, rel.a, rel.b) + strings.Join(parts, "; ") +
		fmt.Sprintf(" (Holm over the %d paths at %g); implied by the thesis: %s", len(diffs), Alpha, quantity.FormatPct(rel.impliedPc))
	if j.Verdict == Inconclusive && len(undecided) > 0 {
		j.Evidence += "; n.s.: " + strings.Join(undecided, ", ") + " (`reproduce --decide` makes them)"
	}
	if j.Verdict != Inconclusive {
		j.FlowNeeds = nil
	}
	return j
}

func modquicFindings() []Finding {
	bbrCubic := impliedPct(ModQUICOverQUICBBRPct, ModQUICOverQUICCUBICPct)
	delay := ((1+ModQUICDelayVsCUBICPct/100)/(1+ModQUICDelayVsBBRPct/100) - 1) * 100
	quicTCP := impliedPct(ModQUICOverQUICPct, ModQUICOverTCPPct)
	rule := "on every path (limited, sufficient, lossy), each stack alone, 3 or more runs: Welch's test per path, Holm over the paths at 0.01; reproduced when every path goes the claimed way significantly, contradicted when any goes the other way significantly; the relative difference's 99 % interval is set beside the implied figure"
	return []Finding{
		{ID: "bbr-throughput", Source: "thesis: ModQUIC/BBR +19.06 % over QUIC/BBR, +27.9 % over QUIC/CUBIC (throughput)",
			Claim:     fmt.Sprintf("QUIC/BBR's throughput is above QUIC/CUBIC's (implied: %s)", quantity.FormatPct(bbrCubic)),
			Criterion: "goodput of QUIC/BBR above QUIC/CUBIC's (both ngtcp2), " + rule,
			Judge: func(e *Support) Judgement {
				return judgeRelation(e, modquicRelation{a: "QUIC/BBR", b: "QUIC/CUBIC", impliedPc: bbrCubic})
			}},
		{ID: "bbr-delay", Source: "thesis: ModQUIC/BBR delay -6.56 % against QUIC/BBR, -14.38 % against QUIC/CUBIC",
			Claim:     fmt.Sprintf("QUIC/BBR's delay is below QUIC/CUBIC's (implied: %s)", quantity.FormatPct(delay)),
			Criterion: "RTT under load (base RTT + the emulator's median queueing delay over the steady state) of QUIC/BBR below QUIC/CUBIC's, " + rule,
			Judge: func(e *Support) Judgement {
				return judgeRelation(e, modquicRelation{a: "QUIC/BBR", b: "QUIC/CUBIC", delay: true, impliedPc: delay})
			}},
		{ID: "quic-tcp", Source: "thesis: ModQUIC +35.66 % over QUIC, +51.93 % over TCP (throughput)",
			Claim:     fmt.Sprintf("QUIC's throughput is above TCP's (implied: %s)", quantity.FormatPct(quicTCP)),
			Criterion: "goodput of QUIC/CUBIC (ngtcp2) above TCP CUBIC's (HTTP/1.1 over TLS), " + rule,
			Judge: func(e *Support) Judgement {
				return judgeRelation(e, modquicRelation{a: "QUIC/CUBIC", b: "TCP", impliedPc: quicTCP})
			}},
		{ID: "modquic", Source: "thesis headline", Claim: "ModQUIC/BBR improves throughput and delay over QUIC and TCP",
			Criterion: "needs ModQUIC",
			Judge: func(*Support) Judgement {
				return Judgement{Verdict: NotTestable, Evidence: "ModQUIC is not public: only the relations between its baselines are testable (the findings above)"}
			}},
	}
}

// modquicSections are each stack alone per path and the shared mixes' fairness.
func modquicSections(e *Support) []Section {
	alone := Section{ID: "alone", Title: "Each stack alone",
		Text: []string{"One bulk download per run through the path; goodput over the flow's steady state; RTT under load = the base RTT plus the emulator's median queueing delay per 100 ms bin, averaged over the steady state. QUIC flows are served by ngtcp2 (gtlsserver), TCP flows by pltlab's server (Linux TCP CUBIC)."}}
	t := Table{Header: []string{"path", "stack", "flow", "runs", "goodput (Mbit/s)", "RTT under load (ms)"}}
	for _, fp := range e.Plan.Flows {
		for _, name := range []string{"QUIC/BBR", "QUIC/CUBIC", "TCP", "TCP/HTTP2"} {
			rs := modquicAlone(e, fp.Name, modquicSpec[name])
			if len(rs) == 0 {
				continue
			}
			g, d := make([]float64, len(rs)), make([]float64, len(rs))
			for i, r := range rs {
				g[i], d[i] = r.goodputBps/1e6, r.delayMs
			}
			mg, _ := analysis.MeanSD(g)
			md, _ := analysis.MeanSD(d)
			t.Rows = append(t.Rows, []string{fp.Name, name, modquicSpec[name], fmt.Sprint(len(rs)), fmt.Sprintf("%.2f", mg), fmt.Sprintf("%.1f", md)})
		}
	}
	alone.Tables = []Table{t}
	shared := Section{ID: "shared", Title: "Sharing the bottleneck: fairness",
		Text: []string{"Two flows started together: each one's steady-state goodput and Jain's index of the two (1 = equal shares)."}}
	st := Table{Header: []string{"path", "mix", "run", "goodputs (Mbit/s)", "Jain's index"}}
	for _, fp := range e.Plan.Flows {
		if out := e.flowsLeftOutText(fp.Name); out != "" {
			shared.Text = append(shared.Text, fp.Name+": "+out)
		}
		for _, m := range e.mixes(fp.Name) {
			if len(m.Flows) < 2 {
				continue
			}
			var gs []string
			for _, f := range m.Flows {
				gs = append(gs, fmt.Sprintf("%s %.2f", f.Spec, f.GoodputBps/1e6))
			}
			st.Rows = append(st.Rows, []string{fp.Name, m.Mix, fmt.Sprint(m.Run), strings.Join(gs, ", "), fmt.Sprintf("%.3f", m.Jain)})
		}
	}
	shared.Tables = []Table{st}
	return []Section{alone, shared}
}

// modquicDifferences says what differs from the thesis' testbed.
func modquicDifferences(e *Support) []string {
	var quic, machine []string
	for _, r := range e.Records {
		if !r.IsFlow() {
			continue
		}
		if r.Protocol == "h3" && r.Env != nil {
			if v := r.CC + " (" + r.Env.QUIC + ")"; !slices.Contains(quic, v) {
				quic = append(quic, v)
			}
		}
		if r.Env != nil {
			if v := fmt.Sprintf("%d logical CPUs, kernel %s", r.Env.CPUs, r.Env.Kernel); !slices.Contains(machine, v) {
				machine = append(machine, v)
			}
		}
	}
	f := struct{ QUICCC, Machine string }{cmp.Or(strings.Join(quic, "; "), "not recorded"), cmp.Or(strings.Join(machine, "; "), "not recorded")}
	return []string{
		"QUIC stack: ngtcp2 0.12's example server (gtlsserver, C, single-threaded) with CUBIC or BBR (v1), to pltlab's quic-go client; the thesis' QUIC implementation is not named in what we have of it. Recorded: " + f.QUICCC + ".",
		"TCP: Linux TCP CUBIC from pltlab's server, HTTP/1.1 over TLS (\"TCP\") and HTTP/2 over TLS (\"TCP/HTTP2\").",
		"Links: pltlab's userspace emulator, 10 and 100 Mbit/s at 36 ms with a 2 BDP droptail queue, and 10 Mbit/s with 1 % loss split between the directions; the thesis' bandwidths, delays and loss rates are not in what we have of it.",
		"Delay is the RTT under load that the emulator measured (base RTT + queueing delay), not an application-level latency.",
		"Machine (recorded): " + f.Machine + "; both endpoints share it.",
	}
}
