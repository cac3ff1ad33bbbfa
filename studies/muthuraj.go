package studies

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/internal/quantity"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
)

// Muthuraj2024 names the reproduction of the 2024 Emulab replication of Kakhki et al.
const Muthuraj2024 = "muthuraj2024"

// MuthurajRef is one published mean PLT pair of the replication.
type MuthurajRef struct {
	// RateMbit is the bottleneck rate in Mbit/s; RTT is 36 ms and there is no loss.
	RateMbit int
	// Size is the object size in bytes (one object per page, as read from the demo output).
	Size int64
	// TCPBBRMs and QUICMs are the mean PLTs in ms of TCP with BBR and of QUICv1.
	TCPBBRMs, QUICMs float64
}

// MuthurajReference are the replication's reference values: mean PLT (ms) at 36 ms RTT without
// loss, TCP BBR vs QUICv1, from the authors' demo output in their repositories (as quoted in
// pltlab issue 15).
var MuthurajReference = []MuthurajRef{
	{10, 5_000, 180.8, 146.5}, {10, 100_000, 284.8, 229.0}, {10, 1_000_000, 1056.0, 991.7}, {10, 10_000_000, 8616.6, 8605.8},
	{50, 1_000_000, 453.5, 417.1}, {50, 10_000_000, 1987.3, 1959.4},
	{100, 1_000_000, 459.1, 354.7}, {100, 10_000_000, 1193.2, 1395.9},
}

// equalPct is the published difference under which a pair counts as "no difference" (percent).
const equalPct = 5

// MuthurajJitterLink is the "112J50" link at a rate: 112 ms +- 50 ms RTT, the variation on the
// down direction's one-way delay (redrawn so that later packets may overtake earlier ones),
// queue 2 BDP; it needs the link model's delayvar.
func MuthurajJitterLink(rateMbit int) string {
	return fmt.Sprintf("rate=%dmbit,rtt=112ms,queue=2bdp,down.delayvar=50ms", rateMbit)
}

const muthurajCitation = `Muthuraj, MSc thesis 2024: an Emulab replication of Kakhki et al. (IMC 2017) with QUICv1: ` +
	`rates 10, 50, 100 Mbit/s; RTT 36 and 112 ms; loss 0 and 1 % split evenly between directions; queue 2 x BDP; ` +
	`delay variation 112 ms +- 50 ms ("112J50"); TCP CUBIC and BBR vs QUIC; 20 rounds, the first dropped. ` +
	`Reference values from the authors' demo output (scripts in the authors' repositories).`

// muthuraj defines the muthuraj2024 study.
func muthuraj() *Study {
	s := &Study{Name: Muthuraj2024, Title: "Muthuraj 2024 (Emulab replication of Kakhki et al.)", Citation: muthurajCitation,
		DefaultScale: Quick, plan: muthurajPlan, Findings: muthurajFindings(), Sections: muthurajSections, Differences: gridDifferences}
	for _, r := range MuthurajReference {
		link, page := GridLink(r.RateMbit, 0, 0), GridPage(1, r.Size)
		src := "authors' demo output (mean PLT, 36 ms RTT, no loss)"
		s.References = append(s.References,
			analysis.Reference{Part: "bbr", Page: page, Link: link, Protocol: "h2", Mode: result.Cold, Label: "TCP BBR", PaperMs: r.TCPBBRMs, Stat: "mean", Source: src},
			analysis.Reference{Part: "bbr", Page: page, Link: link, Protocol: "h3", Mode: result.Cold, Label: "QUICv1", PaperMs: r.QUICMs, Stat: "mean", Source: src})
	}
	return s
}

// muthurajConfig is one congestion controller's part: h2 (TCP) and h3 (QUIC) cold, TLS 1.3.
func muthurajConfig(cc string, pgs, links []string, runs, warmup int, timeout time.Duration) experiment.Config {
	return experiment.Config{Pages: pgs, Links: links, Arms: experiment.CrossArms([]string{"h2", "h3"}, []result.Mode{result.Cold}),
		Runs: runs, Warmup: warmup, Timeout: timeout, TCPCC: cc, TLS: "1.3"}
}

// muthurajPlan returns the muthuraj2024 plan at a scale.
func muthurajPlan(sc Scale, h Host) Plan {
	p := Plan{Study: Muthuraj2024, Scale: sc}
	var pgs, links, left []string
	runs, warmup, timeout := 19, 1, 60*time.Second
	switch sc {
	case Smoke:
		pgs, links, runs, warmup = []string{GridPage(1, 5_000)}, []string{GridLink(100, 0, 0)}, 2, 0
		p.ScaledDown = []string{"one page (1 x 5 KB), one link (100 Mbit/s, 36 ms, no loss), 2 rounds, none dropped: a functional check, not a result"}
	case Quick:
		pgs = []string{GridPage(1, 5_000), GridPage(1, 100_000), GridPage(1, 1_000_000), GridPage(1, 10_000_000)}
		links = []string{GridLink(10, 0, 0), GridLink(100, 0, 0), GridLink(10, 0, 1)}
		jl, more := availableLinks([]string{MuthurajJitterLink(10)})
		links, left = append(links, jl...), more
		runs = 5 // 6 rounds with the first dropped: MinLoads per arm, the fewest a test at p < 0.01 needs
		p.ScaledDown = []string{"pages of one object of 5 KB, 100 KB, 1 MB, 10 MB (full: the Kakhki object grid)",
			"links 10 and 100 Mbit/s at 36 ms, 10 Mbit/s at 36 ms with 1 % loss and 112J50 at 10 Mbit/s (full: 10, 50, 100 Mbit/s x 36, 112 ms x loss 0, 1 % and 112J50)",
			"6 rounds, the first dropped: 5 loads per arm, the fewest for p < 0.01 (full: 20)"}
	case Full:
		for _, l := range []float64{0, 1} {
			for _, rtt := range []time.Duration{0, 76 * time.Millisecond} {
				for _, r := range []int{10, 50, 100} {
					links = append(links, GridLink(r, rtt, l))
				}
			}
		}
		jl, more := availableLinks([]string{MuthurajJitterLink(10), MuthurajJitterLink(50), MuthurajJitterLink(100)})
		links, left = append(links, jl...), more
		var morePages []string
		pgs, morePages = GridPages(KakhkiCounts, KakhkiSizes)
		left, timeout = append(left, morePages...), 120*time.Second
		p.ScaledDown = []string{"loads that take longer than 120 s are recorded as censored at 120 s"}
	}
	p.NotRun = left
	p.Parts = []Part{{Name: "cubic", Title: "TCP CUBIC vs QUIC", Config: muthurajConfig("cubic", pgs, links, runs, warmup, timeout)},
		{Name: "bbr", Title: "TCP BBR vs QUIC", Config: muthurajConfig("bbr", pgs, links, runs, warmup, timeout)}}
	p.Parts, p.NotRun = append(p.Parts, muthurajQUICCCParts(sc, h, runs, warmup, timeout)...), append(p.NotRun, muthurajQUICCCLeft(sc, h)...)
	return p
}

// muthurajQUICCCPages are the large objects of the QUIC BBR vs QUIC CUBIC parts: the thesis'
// reordering gain is for large transfers (1 MB and 10 MB objects).
var muthurajQUICCCPages = []string{GridPage(1, 1_000_000), GridPage(1, 10_000_000)}

// muthurajQUICCCLinks are the 112J50 links of the QUIC BBR vs QUIC CUBIC parts at a scale (none
// at smoke); those the build does not accept are left out.
func muthurajQUICCCLinks(sc Scale) (ok, left []string) {
	switch sc {
	case Quick:
		return availableLinks([]string{MuthurajJitterLink(10)})
	case Full:
		return availableLinks([]string{MuthurajJitterLink(10), MuthurajJitterLink(50), MuthurajJitterLink(100)})
	}
	return nil, nil
}

// muthurajQUICCCParts are QUICv1 with CUBIC and with BBR, both served by ngtcp2 (h3 cold), on
// the 112J50 links: the half of "QUICv1 with BBR improves 60-80 % over gQUIC under reordering"
// that BBR can explain. None at smoke, or on a host without ngtcp2 (muthurajQUICCCLeft).
func muthurajQUICCCParts(sc Scale, h Host, runs, warmup int, timeout time.Duration) []Part {
	links, _ := muthurajQUICCCLinks(sc)
	if len(links) == 0 || h.Ngtcp2 != nil {
		return nil
	}
	var out []Part
	for _, cc := range []string{"cubic", "bbr"} {
		c := experiment.Config{Pages: muthurajQUICCCPages, Links: links, Arms: []experiment.Arm{{Protocol: "h3", Mode: result.Cold}},
			Runs: runs, Warmup: warmup, Timeout: timeout, TLS: "1.3", H3Stack: flows.StackNgtcp2, QUICCC: cc}
		out = append(out, Part{Name: "quic-" + cc, Title: "QUICv1 with " + strings.ToUpper(cc) + " (ngtcp2) under 112J50", Config: c})
	}
	return out
}

// muthurajQUICCCLeft says why the QUIC BBR vs CUBIC parts are not in the plan at a scale on
// host h.
func muthurajQUICCCLeft(sc Scale, h Host) []string {
	links, left := muthurajQUICCCLinks(sc)
	switch {
	case sc == Smoke:
		return []string{"QUICv1 BBR vs CUBIC (ngtcp2) under 112J50: quick and full scales only"}
	case len(links) == 0:
		return append(left, "QUICv1 BBR vs CUBIC (ngtcp2): no 112J50 link in this build")
	case h.Ngtcp2 != nil:
		return []string{"QUICv1 BBR vs CUBIC (ngtcp2): " + h.Ngtcp2.Error()}
	}
	return nil
}

// muthurajSections are the reference table and each controller's cells.
func muthurajSections(e *Support) []Section {
	ref := Section{ID: "reference", Title: "Reference values (36 ms, no loss): the authors' demo output beside ours",
		Text: []string{"Means in ms; diff = (TCP - QUIC) / QUIC x 100 (positive: QUIC faster); p from Welch's t-test. One object per page, as we read the demo output."}}
	t := Table{Header: []string{"rate", "object", "paper TCP BBR", "paper QUICv1", "paper diff", "our TCP BBR", "our QUIC", "our diff (BBR)", "our TCP CUBIC", "our diff (CUBIC)"}}
	for _, r := range MuthurajReference {
		bbr, cubic := muthurajDiff(e, "bbr", r), muthurajDiff(e, "cubic", r)
		t.Rows = append(t.Rows, []string{fmt.Sprintf("%d Mbit/s", r.RateMbit), pages.HumanBytes(r.Size), quantity.FormatMsUnit(r.TCPBBRMs, 0), quantity.FormatMsUnit(r.QUICMs, 0),
			quantity.FormatPct(PctDiff(r.TCPBBRMs, r.QUICMs)), quantity.FormatMsUnit(bbr.Mean, 0), quantity.FormatMsUnit(bbr.RefMean, 0), bbr.String(), quantity.FormatMsUnit(cubic.Mean, 0), cubic.String()})
	}
	ref.Tables = []Table{t}
	out := []Section{ref}
	if cu, bb := e.Part("quic-cubic"), e.Part("quic-bbr"); cu != nil && bb != nil {
		qt := Table{Header: []string{"page", "link", "QUIC CUBIC mean", "QUIC BBR mean", "BBR vs CUBIC", "loads (CUBIC/BBR)"}}
		for _, l := range cu.Part.Config.Links {
			for _, pg := range cu.Part.Config.Pages {
				d := CompareMeans(cu.Sample(pg, l, "h3", result.Cold), bb.Sample(pg, l, "h3", result.Cold))
				qt.Rows = append(qt.Rows, []string{pg, l, quantity.FormatMsUnit(d.Mean, 0), quantity.FormatMsUnit(d.RefMean, 0), d.String(), fmt.Sprintf("%d/%d", d.N, d.NRef)})
			}
		}
		out = append(out, Section{ID: "quic-cc", Title: "QUICv1 with BBR vs QUICv1 with CUBIC (ngtcp2) under 112J50",
			Text:   []string{"HTTP/3 cold loads served by ngtcp2 (gtlsserver) with CUBIC and with BBR (v1); diff = (CUBIC - BBR) / BBR x 100 of the mean PLTs (positive: BBR faster), p from Welch's t-test."},
			Tables: []Table{qt}})
	}
	for _, part := range []string{"cubic", "bbr"} {
		if cells := e.cells(part); len(cells) > 0 {
			s := Section{ID: part, Title: e.Part(part).Part.Title, Tables: []Table{cellTable(cells)}}
			if maps := PageMaps(cells); len(maps) > 0 {
				s.Figures = []Figure{diffMapFigure(maps, "heatmap-"+part, "Per page: rate x RTT, TCP "+strings.ToUpper(part)+" vs QUIC (the 0-RTT panels are empty: every load is cold).")}
			}
			out = append(out, s)
		}
	}
	return out
}

// muthurajDiff compares TCP (h2 with cc) and QUIC for a reference pair.
func muthurajDiff(e *Support, cc string, r MuthurajRef) Diff {
	pr := e.Part(cc)
	link, page := GridLink(r.RateMbit, 0, 0), GridPage(1, r.Size)
	return CompareMeans(pr.Sample(page, link, "h2", result.Cold), pr.Sample(page, link, "h3", result.Cold))
}

// muthurajFindings are the replication's findings and how each is judged.
func muthurajFindings() []Finding {
	return []Finding{
		{ID: "reference-direction", Claim: "Mean PLTs at 36 ms without loss: QUICv1 faster than TCP BBR except for 10 MB at 100 Mbit/s (demo output)",
			Source: "authors' demo output", Criterion: "for every reference pair measured: where the published difference is 5 % or more, ours has its sign and Welch p < 0.01; where it is under 5 % (10 MB at 10 and 50 Mbit/s), the interval of ours lies within +-5 % (Holm / Bonferroni over the pairs)",
			Judge: judgeReferenceDirection},
		{ID: "small-objects", Claim: "QUIC is faster than TCP for small objects (5 KB, 100 KB: 19-24 % in the demo output)",
			Source: "authors' demo output", Criterion: "1 x 5 KB and 1 x 100 KB at 10 Mbit/s, 36 ms: QUIC mean below TCP's, p < 0.01 (Holm over the cells), with both CUBIC and BBR",
			Judge: judgeSmallObjects},
		{ID: "bbr-in-quic", Claim: "QUICv1 with BBR improves 60-80 % over gQUIC under reordering",
			Source: "thesis headline", Criterion: "testable here: the part BBR explains, QUICv1 with BBR against QUICv1 with CUBIC (gQUIC's controller), both ngtcp2, on 112J50 for the 1 MB and 10 MB objects: " +
				"reproduced when BBR's PLT is lower on every cell (Welch, Holm over the cells at 0.01), contradicted when it is higher on any, inconclusive otherwise; " +
				"the reduction (1 - BBR/CUBIC, 99 % delta-method interval) is set beside the published 60-80 %. The gQUIC half is not testable (gQUIC is gone from Chromium)",
			Judge: judgeBBRInQUIC},
		{ID: "reordering", Claim: "Under delay variation (112J50) that reorders packets, QUIC is slower than TCP",
			Source: "thesis (112J50 experiments), after Kakhki et al. 2017 section 5.3", Criterion: "on 112J50 links, TCP significantly faster than QUIC (Holm over the cells) for more than half of the cells (both controllers)",
			Judge: judgeMuthurajReordering},
	}
}

// judgeReferenceDirection holds every reference cell to the authors' direction, the cells'
// family at Alpha: a cell whose published difference is at least equalPct is reproduced when
// its Welch p-value is significant by Holm in that direction and contradicted when the other
// way; a cell the authors found equal (under equalPct) is reproduced when the (1 - Alpha/m)
// interval of its % difference (delta method, pctVar; Bonferroni over the m cells) lies within
// +-equalPct, and contradicted when it lies outside. The finding is reproduced when every cell
// is, contradicted when any is.
func judgeReferenceDirection(e *Support) Judgement {
	if e.Part("bbr") == nil {
		return notRun("no TCP BBR loads")
	}
	var parts []string
	var cells []Cell
	var wants []float64
	for _, r := range MuthurajReference {
		d := muthurajDiff(e, "bbr", r)
		if d.N < MinLoads || d.NRef < MinLoads {
			continue
		}
		wants = append(wants, PctDiff(r.TCPBBRMs, r.QUICMs))
		cells = append(cells, muthurajCell(e, "bbr", r, d))
		parts = append(parts, fmt.Sprintf("%d Mbit/s %s: paper %s, ours %s", r.RateMbit, pages.HumanBytes(r.Size), quantity.FormatPct(wants[len(wants)-1]), d))
	}
	if len(cells) == 0 {
		return notRun(fmt.Sprintf("no reference cell measured with %d or more loads per arm at this scale", MinLoads))
	}
	cs := make([]claim, len(cells))
	for k, c := range cells {
		d, want := c.Diffs[0], wants[k]
		cs[k] = testClaim(d.P, d.Pct*want)
		if math.Abs(want) < equalPct {
			_, lo, hi := analysis.NormalCI(d.Pct, pctVar(d), Alpha/float64(len(cells)))
			cs[k] = within(lo, hi, Region{-equalPct, equalPct})
			cs[k].p, cs[k].inHolm = d.P, true // the cells' Holm family holds it still
			parts[k] += fmt.Sprintf(" (equal within %d %%? interval %s)", equalPct, quantity.FormatInterval("%+.1f", d.Pct, lo, hi))
		}
	}
	v, _ := fold(everyHolm, Alpha, cs...)
	j := Judgement{Verdict: v, Evidence: strings.Join(parts, "; ") + fmt.Sprintf(" (Holm over the %d cells at %g)", len(cells), Alpha),
		See: []string{"Reference values (36 ms, no loss): the authors' demo output beside ours"}}
	return withGridPower(j, e, cells, 0)
}

// judgeSmallObjects: on the 5 KB and 100 KB pages at 10 Mbit/s, QUIC significantly faster than
// TCP (Welch, Holm over the cells) on every cell; contradicted when TCP is on one.
func judgeSmallObjects(e *Support) Judgement {
	var parts []string
	var cells []Cell
	for _, cc := range []string{"cubic", "bbr"} {
		if e.Part(cc) == nil {
			continue
		}
		for _, size := range []int64{5_000, 100_000} {
			d := muthurajDiff(e, cc, MuthurajRef{RateMbit: 10, Size: size})
			if d.N < MinLoads || d.NRef < MinLoads {
				continue
			}
			cells = append(cells, muthurajCell(e, cc, MuthurajRef{RateMbit: 10, Size: size}, d))
			parts = append(parts, fmt.Sprintf("%s %s: %s", cc, pages.HumanBytes(size), d))
		}
	}
	if len(cells) == 0 {
		return notRun(fmt.Sprintf("no 5 KB or 100 KB page at 10 Mbit/s with %d or more loads per arm at this scale", MinLoads))
	}
	v, _ := fold(everyHolm, Alpha, cellTests(cells, 0, 1)...)
	j := Judgement{Verdict: v, Evidence: strings.Join(parts, "; ") + fmt.Sprintf(" (Holm over the %d cells at %g)", len(cells), Alpha),
		See: []string{"Reference values (36 ms, no loss): the authors' demo output beside ours"}}
	return withGridPower(j, e, cells, 0)
}

// judgeBBRInQUIC compares the quic-cubic and quic-bbr parts cell by cell (page x 112J50 link):
// Welch's test on PLT, Holm over the cells; every cell significantly faster with BBR reproduces,
// one significantly slower contradicts. The evidence gives each cell's PLT reduction with BBR,
// 1 - mean(BBR)/mean(CUBIC) in %, with its (1 - Alpha) interval (delta method, pctVar), and what
// the cells not significant could detect.
func judgeBBRInQUIC(e *Support) Judgement {
	cu, bb := e.Part("quic-cubic"), e.Part("quic-bbr")
	if cu == nil || bb == nil {
		if err := e.Plan.Host.Ngtcp2; err != nil {
			return Judgement{Verdict: NotTestable, Evidence: "QUICv1 with BBR needs the ngtcp2 stack: " + err.Error() + "; quic-go runs NewReno only (quic-go issues 341, 776), and gQUIC is gone from Chromium"}
		}
		return notRun("no QUICv1 BBR vs CUBIC loads (quick and full scales, on 112J50 links)")
	}
	var cells []Cell
	var parts, short []string
	for _, l := range cu.Part.Config.Links {
		for _, pg := range cu.Part.Config.Pages {
			// TCP side: CUBIC, QUIC side: BBR, so Pct > 0 is BBR faster (PctDiff).
			d := CompareMeans(cu.Sample(pg, l, "h3", result.Cold), bb.Sample(pg, l, "h3", result.Cold))
			if d.N < MinLoads || d.NRef < MinLoads {
				short = append(short, fmt.Sprintf("%s on %s: %d valid CUBIC and %d BBR loads (%d needed)", pg, l, d.N, d.NRef, MinLoads))
				continue
			}
			c := Cell{Part: "quic-bbr", Page: pg, Link: l}
			c.Diffs[0] = d
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return notRun(fmt.Sprintf("no 112J50 cell with %d or more loads of each controller", MinLoads) + strings.Join(append([]string{""}, short...), "; "))
	}
	cs := cellTests(cells, 0, 1)
	for range short {
		cs = append(cs, unsure()) // a cell without enough loads cannot reproduce the claim on every cell
	}
	v, vs := fold(everyHolm, Alpha, cs...)
	var mdes []string
	for k, c := range cells {
		d := c.Diffs[0]
		// reduction = 1 - B/C = Pct / (100 + Pct) with Pct = (C - B)/B x 100: its interval from
		// the interval of Pct (monotone), delta method on Pct.
		red := func(pct float64) float64 { return pct / (100 + pct) * 100 }
		_, lo, hi := analysis.NormalCI(d.Pct, pctVar(d), Alpha)
		parts = append(parts, fmt.Sprintf("%s on %s: CUBIC %s, BBR %s, PLT reduction with BBR %s (Welch p=%s)", c.Page, c.Link,
			quantity.FormatMsUnit(d.Mean, 0), quantity.FormatMsUnit(d.RefMean, 0), quantity.FormatInterval("%+.1f %%", red(d.Pct), red(lo), red(hi)), quantity.FormatP(d.P)))
		if vs[k] == Inconclusive && d.N > 1 && d.NRef > 1 && d.RefMean > 0 {
			mdes = append(mdes, fmt.Sprintf("%s: detects %s, decided by %d loads per controller", c.Page,
				quantity.FormatPct(WelchDetectable(d.SD, d.RefSD, d.N, d.NRef)/d.RefMean*100), WelchPerArm(d.SD, d.RefSD, d.Mean-d.RefMean)))
		}
	}
	ev := strings.Join(parts, "; ") + fmt.Sprintf(" (Holm over the %d cells at %g); published: 60-80 %% over gQUIC, of which this is the controller's part; the gQUIC half is not testable", len(cells), Alpha)
	if v == Inconclusive && len(mdes) > 0 {
		ev += "; n.s. cells: " + strings.Join(mdes, ", ")
	}
	if len(short) > 0 {
		ev += "; left out, too few valid loads: " + strings.Join(short, ", ")
	}
	j := Judgement{Verdict: v, Evidence: ev, See: []string{"QUICv1 with BBR vs QUICv1 with CUBIC (ngtcp2) under 112J50"}}
	for _, c := range cells {
		j.Cells = append(j.Cells, cellName("quic-bbr", c.Link, "h3 cold", "quic-cubic h3 cold")+" page "+c.Page)
	}
	return j
}

func judgeMuthurajReordering(e *Support) Judgement {
	if ok, _ := availableLinks([]string{MuthurajJitterLink(10)}); len(ok) == 0 {
		return Judgement{Verdict: NotTestable, Evidence: "needs delay variation that reorders packets (the link model's delayvar), not in this build"}
	}
	var measured []Cell
	for _, c := range e.cells("cubic", "bbr") {
		if strings.Contains(c.Link, "delayvar") {
			measured = append(measured, c)
		}
	}
	if len(measured) == 0 {
		return notRun("no 112J50 link at this scale")
	}
	cells := enough(measured)
	if len(cells) == 0 {
		return notRun(fmt.Sprintf("the %d 112J50 cells measured have fewer than %d loads per arm", len(measured), MinLoads))
	}
	v, _ := fold(most, Alpha, cellTests(cells, 0, -1)...)
	var parts []string
	for _, c := range cells {
		parts = append(parts, fmt.Sprintf("%s %s on %s: %s", c.Part, c.Page, c.Link, c.Diffs[0]))
	}
	j := Judgement{Verdict: v, Evidence: strings.Join(parts, "; ") + fmt.Sprintf(" (Holm over the %d cells at %g)", len(cells), Alpha),
		See: []string{"TCP CUBIC vs QUIC", "TCP BBR vs QUIC"}}
	return withGridPower(j, e, cells, 0)
}

// muthurajCell is the grid cell of a reference pair with its comparison d.
func muthurajCell(e *Support, cc string, r MuthurajRef, d Diff) Cell {
	link, page := GridLink(r.RateMbit, 0, 0), GridPage(1, r.Size)
	c := Cell{Part: cc, Page: page, Link: link}
	c.Diffs[0] = d
	return c
}
