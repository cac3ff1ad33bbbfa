package studies

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/matrix"
	"github.com/pltlab/pltlab/result"
)

// GoodputCase is the exchange case of the study's goodput runs (matrix's goodput: the Interop
// Runner's measurement, one 10 MiB file over 10 Mbit/s, 30 ms, 25 packets of queue), each
// release as the server for EvolutionFixed.
const GoodputCase = "goodput"

// GoodputMargin is the goodput finding's practical margin, a fraction: two releases whose ratio
// of geometric mean goodputs has its interval inside (1 - GoodputMargin, 1 + GoodputMargin)
// do not differ in practice (10 %: more than the runs' spread through this link, about 1-3 %
// here, and less than a congestion controller's change would make).
const GoodputMargin = 0.10

// goodputMinRuns is the fewest valid goodput runs a release needs to enter the comparison: a
// sample variance needs two.
const goodputMinRuns = 2

// goodputSample is one server's goodput runs: its valid figures in Mbit/s, their transfer
// times in ms, and the runs left out (not valid: the transfer failed, or the emulator was
// late twice), each with its reason.
type goodputSample struct {
	server string
	mbps   []float64
	ms     []float64
	left   []string
}

// goodputSamples gathers the goodput runs of recs by server (EvolutionFixed the client): the
// quic-go releases oldest first, then the other servers by name. Errors and runs this machine
// could not make are evidence of nothing and left out silently, as everywhere in the study.
func goodputSamples(recs []*result.Record) []goodputSample {
	by := map[string]*goodputSample{}
	var order []string
	for _, r := range recs {
		rec, ok := interopOf(r)
		if !ok || rec.Case != GoodputCase || rec.Client != EvolutionFixed || rec.Outcome == interop.Error || environmental(rec) {
			continue
		}
		s := by[rec.Server]
		if s == nil {
			s = &goodputSample{server: rec.Server}
			by[rec.Server] = s
			order = append(order, rec.Server)
		}
		switch g := rec.Observed.Goodput; {
		case g == nil:
			s.left = append(s.left, fmt.Sprintf("%s, no figure: %s", rec.Outcome, rec.Reason))
		case !g.Valid:
			s.left = append(s.left, g.InvalidReason)
		default:
			s.mbps, s.ms = append(s.mbps, g.Mbps), append(s.ms, g.TimeMS)
		}
	}
	slices.SortStableFunc(order, compareServers)
	out := make([]goodputSample, len(order))
	for i, n := range order {
		out[i] = *by[n]
	}
	return out
}

// compareServers orders servers: quic-go releases oldest first, then the others by name.
func compareServers(a, b string) int {
	va, oka := matrix.Release(a)
	vb, okb := matrix.Release(b)
	switch {
	case oka && okb:
		return compareRelease(va, vb)
	case oka:
		return -1
	case okb:
		return 1
	}
	return strings.Compare(a, b)
}

// goodputPair is the comparison of two releases' goodput: the ratio of their geometric means
// (a over b) with its (1 - 2 Alpha) Welch interval, and Welch's two-sided p-value, all on
// ln goodput.
type goodputPair struct {
	a, b          string
	ratio, lo, hi float64
	p             float64
}

// lnAll is ln x of every x.
func lnAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Log(x)
	}
	return out
}

// goodputPairs compares every pair of ss on ln goodput: Welch's test (analysis.Welch) and the
// (1 - 2 Alpha) Welch interval of the difference of means (analysis.WelchCI), exponentiated into
// the ratio of geometric means.
func goodputPairs(ss []goodputSample) []goodputPair {
	var out []goodputPair
	for i := range ss {
		for j := i + 1; j < len(ss); j++ {
			la, lb := lnAll(ss[i].mbps), lnAll(ss[j].mbps)
			est, lo, hi := analysis.WelchCI(la, lb, 2*Alpha)
			out = append(out, goodputPair{a: ss[i].server, b: ss[j].server, ratio: math.Exp(est), lo: math.Exp(lo), hi: math.Exp(hi),
				p: analysis.Welch(la, lb).P})
		}
	}
	return out
}

// String is "v0.66.0/v0.40.1 0.97 [0.95, 0.99], p 0.0012".
func (g goodputPair) String() string {
	name := func(s string) string {
		if v, ok := matrix.Release(s); ok {
			return v
		}
		return s
	}
	return fmt.Sprintf("%s/%s %s, p %s", name(g.a), name(g.b), quantity.FormatInterval("%.3f", g.ratio, g.lo, g.hi), quantity.FormatP(g.p))
}

// judgeGoodputDiffer judges "quic-go releases differ in goodput" from the releases' valid goodput
// runs (ngtcp2's, shown beside them, is no release of quic-go and stays out), by the one rule:
//   - reproduced when some pair of releases differs: Welch's t-test (Welch 1947) on ln goodput
//     for every pair, two-sided, significant at Alpha after Holm's step-down procedure over the
//     pairs (Holm 1979; differs, fold's family either);
//   - contradicted when every pair is equivalent within GoodputMargin: each pair's ratio of
//     geometric means has its (1 - 2 Alpha) Welch interval inside (0.9, 1.1), which is
//     Schuirmann's two one-sided tests at Alpha ("A comparison of the two one-sided tests
//     procedure and the power approach for assessing the equivalence of average
//     bioavailability", J. Pharmacokinet. Biopharm. 15, 1987), needing no multiplicity
//     correction as every pair must hold (an intersection-union test, Berger 1982), and every
//     release with runs has goodputMinRuns valid ones (a release with fewer is a missing claim);
//   - inconclusive otherwise: no pair differs, yet some interval reaches beyond the margin, or
//     fewer than two releases have goodputMinRuns valid runs (too few runs, named).
//
// A difference shown takes precedence over equivalence (a significant difference inside the
// margin is still a difference; the evidence gives the ratio).
func judgeGoodputDiffer(ss []goodputSample, h Host) Judgement {
	var in []goodputSample
	var few []string
	for _, s := range ss {
		if _, ok := matrix.Release(s.server); !ok {
			continue
		}
		if len(s.mbps) >= goodputMinRuns {
			in = append(in, s)
		} else {
			few = append(few, fmt.Sprintf("%s %d", s.server, len(s.mbps)))
		}
	}
	if len(in)+len(few) == 0 {
		if h.Exchange != nil {
			return Judgement{Verdict: NotTestable, Evidence: "the goodput runs need the exchange cases' emulated link: " + h.Exchange.Error()}
		}
		return notRun("no goodput run of a quic-go release in the records")
	}
	see := []string{"Goodput"}
	if len(in) < 2 {
		return Judgement{Verdict: Inconclusive, See: see, Cells: append(runsOf(in), few...), Evidence: fmt.Sprintf("too few runs: %d release(s) with at least %d valid goodput runs, 2 needed (valid runs: %s)",
			len(in), goodputMinRuns, strings.Join(append(runsOf(in), few...), ", "))}
	}
	pairs := goodputPairs(in)
	cs := make([]claim, len(pairs), len(pairs)+len(few))
	for i, g := range pairs {
		cs[i] = differs(g.p, g.lo, g.hi, Region{Lo: 1 - GoodputMargin, Hi: 1 + GoodputMargin})
	}
	for range few {
		cs = append(cs, missing()) // a release with too few runs: no pair of it is shown equal
	}
	v, vs := fold(either, Alpha, cs...)
	j := Judgement{Verdict: v, See: see, Cells: runsOf(in)}
	var sig []string
	for i, g := range pairs {
		if vs[i] == Reproduced {
			sig = append(sig, g.String())
		}
	}
	widest := slices.MaxFunc(pairs, func(x, y goodputPair) int {
		return cmpSpread(x, y)
	})
	head := fmt.Sprintf("%d releases, %d pair(s) (Welch on ln goodput, Holm at %g; ratio of geometric means, %g %% interval)", len(in), len(pairs), Alpha, 100*(1-2*Alpha))
	switch {
	case v == Reproduced:
		j.Evidence = fmt.Sprintf("%s: %d pair(s) differ: %s", head, len(sig), strings.Join(firstN(sig, 6), "; "))
	case v == Contradicted:
		j.Evidence = fmt.Sprintf("%s: no pair differs and every pair's interval lies within ±%g %%; the widest: %s", head, 100*GoodputMargin, widest)
	case count(vs)[Contradicted] == len(pairs):
		j.Evidence = fmt.Sprintf("%s: no pair differs and every compared pair's interval lies within ±%g %%, but not every release has %d valid runs; the widest: %s", head, 100*GoodputMargin, goodputMinRuns, widest)
	default:
		j.Evidence = fmt.Sprintf("%s: no pair differs, and not every pair is shown within ±%g %%; the widest: %s", head, 100*GoodputMargin, widest)
	}
	if len(few) > 0 {
		j.Evidence += fmt.Sprintf("; too few valid runs (under %d) to compare: %s", goodputMinRuns, strings.Join(few, ", "))
	}
	return j
}

// cmpSpread orders pairs by how far their ratio's interval reaches from 1 (ln scale).
func cmpSpread(x, y goodputPair) int {
	reach := func(g goodputPair) float64 {
		if math.IsNaN(g.lo) {
			return math.Inf(1)
		}
		return max(math.Abs(math.Log(g.lo)), math.Abs(math.Log(g.hi)))
	}
	rx, ry := reach(x), reach(y)
	switch {
	case rx < ry:
		return -1
	case rx > ry:
		return 1
	}
	return 0
}

// runsOf names each sample with its valid runs: "quic-go@v0.66.0 6".
func runsOf(ss []goodputSample) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%s %d", s.server, len(s.mbps))
	}
	return out
}

// firstN is the first n of xs, and "... (K more)" when there are more.
func firstN(xs []string, n int) []string {
	if len(xs) <= n {
		return xs
	}
	return append(slices.Clone(xs[:n]), fmt.Sprintf("... (%d more)", len(xs)-n))
}

// goodputFinding is the study's performance finding across releases.
func goodputFinding() Finding {
	return Finding{ID: "goodput",
		Source: `the QUIC Interop Runner's goodput measurement (M. Seemann, J. Iyengar, "Automating QUIC Interoperability Testing", EPIQ 2020: ` +
			`a 10 MiB file over 10 Mbit/s, 30 ms RTT, 5 runs per pair); issue 52: one performance finding across releases`,
		Claim: "quic-go releases differ in goodput",
		Criterion: fmt.Sprintf("each release as the server for %s, its valid goodput runs (the transfer whole, the emulator never late beyond its bound): "+
			"reproduced when some pair of releases differs by Welch's test on ln goodput, two-sided, Holm over the pairs at %g; contradicted when every pair's "+
			"ratio of geometric means has its %g %% Welch interval inside (%g, %g) (equivalence within ±%g %%, two one-sided tests at %g) and every release has %d valid runs; "+
			"inconclusive otherwise (too few runs: fewer than 2 releases with %d)", EvolutionFixed, Alpha, 100*(1-2*Alpha), 1-GoodputMargin, 1+GoodputMargin,
			100*GoodputMargin, Alpha, goodputMinRuns, goodputMinRuns),
		Judge: func(e *Support) Judgement { return judgeGoodputDiffer(goodputSamples(e.Records), e.Plan.Host) }}
}

// goodputSection is the release -> goodput table: per server its mean goodput with its 95 %
// Student's t interval (analysis.MeanCI), the valid runs, the mean transfer time and the runs
// left out; nil without goodput runs.
func goodputSection(recs []*result.Record) *Section {
	ss := goodputSamples(recs)
	if len(ss) == 0 {
		return nil
	}
	t := Table{Caption: fmt.Sprintf("Goodput of each server for %s through the Interop Runner's link (10 MiB, 10 Mbit/s, 30 ms, 25 packets of queue): the mean of the valid runs with its %g %% Student's t interval", EvolutionFixed, 100*analysis.Confidence),
		Header: []string{"server", "goodput (Mbit/s)", "n", "transfer time (ms, mean)", "left out"}}
	for _, s := range ss {
		m, lo, hi := analysis.MeanCI(s.mbps, analysis.Confidence)
		mt, _ := analysis.MeanSD(s.ms)
		left := "-"
		if len(s.left) > 0 {
			left = fmt.Sprintf("%d: %s", len(s.left), shortReason(s.left[0]))
		}
		mean, ms := quantity.FormatInterval("%.3f", m, lo, hi), fmt.Sprintf("%.0f", mt)
		if len(s.mbps) == 0 {
			mean, ms = "-", "-"
		}
		t.Rows = append(t.Rows, []string{s.server, mean, fmt.Sprint(len(s.mbps)), ms, left})
	}
	return &Section{ID: "goodput", Title: "Goodput", Tables: []Table{t},
		Text: []string{"The QUIC Interop Runner's goodput measurement: the file's bits over the time from the client's first datagram the link delivered to the last server datagram with the file's bytes, read from the decrypted capture. " +
			"A run during which the emulator was late beyond its bound was made once more (the one retry rule); one late twice is left out, named."}}
}

// goodputScaledDown is the plan's line on the goodput runs of scale es ("" when it has none).
func goodputScaledDown(es evolutionScale) string {
	if es.goodputPer == 0 {
		return ""
	}
	servers := strings.Join(es.goodputServers(), ", ")
	if es.goodputNgtcp2 {
		servers += " and ngtcp2"
	}
	return fmt.Sprintf("goodput (the Interop Runner's measurement: 10 MiB over 10 Mbit/s, 30 ms) with %s as the server for %s, %d run(s) each (the Interop Runner makes 5)",
		servers, EvolutionFixed, es.reps*es.goodputPer)
}
