package studies

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/internal/quantity"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/result"
)

// Kakhki2017 names the reproduction of Kakhki et al., IMC 2017.
const Kakhki2017 = "kakhki2017"

// The Kakhki et al. grid (IMC 2017, Table 2): rates in Mbit/s, extra RTT over the path's
// implicit 36 ms, extra loss in percent (none, 0.1, 1), object counts and sizes (KB = 1000 B).
var (
	KakhkiRates  = []int{5, 10, 50, 100}
	KakhkiExtra  = []time.Duration{0, 50 * time.Millisecond, 100 * time.Millisecond}
	KakhkiLoss   = []float64{0, 0.1, 1}
	KakhkiCounts = []int{1, 2, 5, 10, 100, 200}
	KakhkiSizes  = []int64{5_000, 10_000, 100_000, 200_000, 500_000, 1_000_000, 10_000_000}
)

// KakhkiReorderLinks are the links of the reordering finding: delay variation that lets later
// packets overtake earlier ones, 112 ms +- 50 ms RTT ("112J50" of the 2024 replication) at
// 10 Mbit/s; they need the link model's delayvar (left out, and the finding not testable, on a
// build without it).
var KakhkiReorderLinks = []string{"rate=10mbit,rtt=112ms,queue=2bdp,down.delayvar=50ms"}

// KakhkiMobileDevices are the phones of the mobile finding (section 6), emulated (package
// device): the 2013 Moto G at the quick scale, and the Nexus 6 too at the full scale.
var KakhkiMobileDevices = []string{"motog2013", "nexus6"}

// kakhkiMobilePart is the mobile finding's part for one device: the page over the links, each
// cell also measured on the desktop by another part (its twin).
func kakhkiMobilePart(dev string, pgs, links []string, runs int, timeout time.Duration) Part {
	c := kakhkiConfig(pgs, links, runs, 1, timeout)
	c.Device = dev
	name := "mobile"
	if dev != KakhkiMobileDevices[0] {
		name += "-" + dev
	}
	return Part{Name: name, Title: "Mobile: " + dev + " emulated (a CPU budget for the whole browser)", Config: c}
}

// kakhkiArms: TCP is HTTP/2 over TCP (cold), QUIC is HTTP/3 cold and with 0-RTT (warm).
var kakhkiArms = []experiment.Arm{{Protocol: "h2", Mode: result.Cold}, {Protocol: "h3", Mode: result.Cold}, {Protocol: "h3", Mode: result.Warm}}

const kakhkiCitation = `A. M. Kakhki, S. Jero, D. Choffnes, C. Nita-Rotaru, A. Mislove, "Taking a Long Look at QUIC: ` +
	`An Approach for Rigorous Evaluation of Rapidly Evolving Transport Protocols", Proc. ACM IMC 2017, London, pp. 290-303. ` +
	`Grid of Table 2; % difference and heatmaps as in its figures and the authors' scripts; implicit RTT 36 ms and loss split ` +
	`between directions as the 2024 replication (Muthuraj) did.`

// kakhki defines the kakhki2017 study.
func kakhki() *Study {
	return &Study{Name: Kakhki2017, Title: "Kakhki et al., IMC 2017", Citation: kakhkiCitation, DefaultScale: Quick,
		plan: kakhkiPlan, Findings: kakhkiFindings(), Sections: kakhkiSections, Differences: gridDifferences}
}

// kakhkiConfig is a part of the grid: TCP listeners TLS 1.2 + CUBIC (the 2016-17 stack).
func kakhkiConfig(pgs, links []string, runs, warmup int, timeout time.Duration) experiment.Config {
	return experiment.Config{Pages: pgs, Links: links, Arms: kakhkiArms, Runs: runs, Warmup: warmup,
		Timeout: timeout, TCPCC: "cubic", TLS: "1.2"}
}

// kakhkiPlan returns the kakhki2017 plan at a scale.
func kakhkiPlan(sc Scale, h Host) Plan {
	p := Plan{Study: Kakhki2017, Scale: sc}
	reorder, left := availableLinks(KakhkiReorderLinks)
	switch sc {
	case Smoke:
		p.Parts = []Part{{Name: "grid", Title: "Smoke grid", Config: kakhkiConfig([]string{GridPage(1, 5_000), GridPage(2, 10_000)},
			[]string{GridLink(10, 0, 0), GridLink(50, 0, 0)}, 2, 0, 30*time.Second)}}
		p.ScaledDown = []string{"pages 1x5KB and 2x10KB, links 10 and 50 Mbit/s at 36 ms without loss, 2 loads per arm, no warm-up: a functional check, not a result",
			"no lossy link and no reordering link"}
		return p
	case Quick:
		objects := kakhkiConfig([]string{GridPage(1, 5_000), GridPage(10, 5_000), GridPage(100, 5_000),
			GridPage(1, 100_000), GridPage(10, 100_000), GridPage(100, 100_000)},
			[]string{GridLink(10, 0, 0)}, 5, 1, 60*time.Second)
		links := kakhkiConfig([]string{GridPage(10, 100_000)},
			[]string{GridLink(5, 0, 0), GridLink(50, 0, 0), GridLink(5, 100*time.Millisecond, 0), GridLink(50, 100*time.Millisecond, 0),
				GridLink(5, 0, 1), GridLink(50, 0, 1)}, 5, 1, 60*time.Second)
		p.Parts = []Part{{Name: "objects", Title: "Objects grid at 10 Mbit/s, 36 ms", Config: objects},
			{Name: "links", Title: "Link grid for 10 x 100 KB", Config: links}}
		p.Parts, p.NotRun = append(p.Parts, kakhkiCUBICPart(links, h)...), append(p.NotRun, kakhkiCUBICLeft(h)...)
		if len(reorder) > 0 {
			p.Parts = append(p.Parts, Part{Name: "reorder", Title: "Reordering (delay variation)",
				Config: kakhkiConfig([]string{GridPage(10, 100_000)}, reorder, 5, 1, 60*time.Second)})
		}
		p.Parts = append(p.Parts, kakhkiMobilePart(KakhkiMobileDevices[0], []string{GridPage(10, 100_000)},
			[]string{GridLink(10, 0, 0), GridLink(50, 0, 0)}, 5, 60*time.Second))
		p.ScaledDown = []string{
			"objects: counts 1, 10, 100 x sizes 5 KB, 100 KB on one link (10 Mbit/s, 36 ms, no loss) (full: counts 1, 2, 5, 10, 100, 200 x sizes 5 KB..10 MB on all 36 links)",
			"links: one page (10 x 100 KB) on rates 5 and 50 Mbit/s x RTT 36 and 136 ms without loss, and at 36 ms with 1 % loss (full: rates 5, 10, 50, 100 x RTT 36, 86, 136 ms x loss none, 0.1 %, 1 %)",
			"5 loads per arm and cell after 1 warm-up (full: 10)",
			"mobile: the 2013 Moto G only, emulated, one page (10 x 100 KB) at 10 and 50 Mbit/s, 36 ms (full: the Nexus 6 too, and 100 x 5 KB)",
		}
	case Full:
		var links []string
		for _, l := range KakhkiLoss {
			for _, x := range KakhkiExtra {
				for _, r := range KakhkiRates {
					links = append(links, GridLink(r, x, l))
				}
			}
		}
		pgs, more := GridPages(KakhkiCounts, KakhkiSizes)
		left = append(left, more...)
		p.Parts = []Part{{Name: "grid", Title: "Full grid (Table 2)", Config: kakhkiConfig(pgs, links, 10, 1, 120*time.Second)}}
		p.Parts, p.NotRun = append(p.Parts, kakhkiCUBICPart(kakhkiConfig([]string{GridPage(10, 100_000)}, links, 10, 1, 120*time.Second), h)...),
			append(p.NotRun, kakhkiCUBICLeft(h)...)
		if len(reorder) > 0 {
			p.Parts = append(p.Parts, Part{Name: "reorder", Title: "Reordering (delay variation)",
				Config: kakhkiConfig(pgs, reorder, 10, 1, 120*time.Second)})
		}
		for _, dev := range KakhkiMobileDevices {
			p.Parts = append(p.Parts, kakhkiMobilePart(dev, []string{GridPage(10, 100_000), GridPage(100, 5_000)},
				[]string{GridLink(10, 0, 0), GridLink(50, 0, 0)}, 10, 120*time.Second))
		}
		p.ScaledDown = []string{"loads that take longer than 120 s are recorded as censored at 120 s (large pages at low rates)"}
	}
	p.NotRun = append(left, p.NotRun...)
	return p
}

// KakhkiCUBICPart names the part whose QUIC is ngtcp2 with CUBIC, the paper's gQUIC controller.
const KakhkiCUBICPart = "links-cubic"

// kakhkiCUBICPart is the link grid c again with h3 served by ngtcp2 with CUBIC (quick and full),
// so that the grid can be read with the paper's controller; none on a host without ngtcp2.
func kakhkiCUBICPart(c experiment.Config, h Host) []Part {
	if h.Ngtcp2 != nil {
		return nil
	}
	c.H3Stack, c.QUICCC = flows.StackNgtcp2, "cubic"
	return []Part{{Name: KakhkiCUBICPart, Title: "Link grid for 10 x 100 KB, QUIC with CUBIC (ngtcp2)", Config: c}}
}

// kakhkiCUBICLeft says why the QUIC-CUBIC part is not in the plan on host h.
func kakhkiCUBICLeft(h Host) []string {
	if err := h.Ngtcp2; err != nil {
		return []string{"the QUIC-CUBIC link grid (ngtcp2): " + err.Error()}
	}
	return nil
}

// kakhkiGridParts are the parts whose cells form the heatmaps.
var kakhkiGridParts = []string{"grid", "objects", "links"}

// kakhkiSections are the heatmaps, the table of every cell and the reordering cells.
func kakhkiSections(e *Support) []Section {
	cells := e.cells(kakhkiGridParts...)
	s := Section{ID: "heatmaps", Title: "Heatmaps: TCP vs QUIC",
		Text: []string{"% difference = (TCP - QUIC) / QUIC x 100 of the mean PLTs (TCP = HTTP/2 over TCP CUBIC + TLS 1.2, cold; QUIC = HTTP/3 over quic-go, cold or resuming with 0-RTT). " +
			"Red: QUIC faster; blue: TCP faster; colours saturate at +-100 %; grey cells (n.s.) are not significant (Welch's t-test, p >= 0.01)."}}
	if maps := LinkMaps(cells); len(maps) > 0 {
		s.Figures = append(s.Figures, diffMapFigure(maps, "heatmap-per-link", "Per link: object count x object size, cold and 0-RTT."))
	} else {
		s.Text = append(s.Text, "Per-link heatmaps: no link with two or more pages at this scale.")
	}
	if maps := PageMaps(cells); len(maps) > 0 {
		s.Figures = append(s.Figures, diffMapFigure(maps, "heatmap-per-page", "Per page: rate x RTT, per loss rate, cold and 0-RTT."))
	} else {
		s.Text = append(s.Text, "Per-page heatmaps: no page over two or more links of one loss rate at this scale.")
	}
	out := []Section{s}
	if len(cells) > 0 {
		out = append(out, Section{ID: "cells", Title: "Every cell", Tables: []Table{cellTable(cells)}})
	}
	if cc := e.cells(KakhkiCUBICPart); len(cc) > 0 {
		out = append(out, Section{ID: KakhkiCUBICPart, Title: "Link grid with QUIC CUBIC (ngtcp2)",
			Text:   []string{"The link grid again with HTTP/3 served by ngtcp2 with CUBIC, the congestion controller of the paper's gQUIC, against the same HTTP/2 over TCP CUBIC; the findings are judged on the quic-go (NewReno) parts above, this table reads the grid with the paper's controller."},
			Tables: []Table{cellTable(cc)}})
	}
	if rc := e.cells("reorder"); len(rc) > 0 {
		out = append(out, Section{ID: "reorder", Title: "Reordering (delay variation)", Tables: []Table{cellTable(rc)}})
	}
	if mc := e.cells(mobileParts(e.Plan)...); len(mc) > 0 {
		out = append(out, Section{ID: "mobile", Title: "Mobile devices (emulated)", Text: []string{mobileCaveat(e)},
			Tables: []Table{cellTable(mc), cpuTable(e, mc)}})
	}
	return out
}

// gridDifferences are the testbed differences of the grid studies, from the records.
func gridDifferences(e *Support) []string {
	f := RecordedFacts(e.Loads())
	return []string{
		"QUIC congestion control (recorded): " + f.QUICCC + "; 2017 used Google QUIC (versions 25-37) in Chromium with CUBIC and its own crypto handshake; 2024 compared QUICv1 (IETF) implementations. " +
			"Which arm is which: h3 in the parts " + KakhkiCUBICPart + ", quic-cubic and quic-bbr is served by ngtcp2 with the controller its name gives; in every other part by quic-go with NewReno.",
		"TCP congestion control (recorded): " + f.TCPCC + ", TLS " + f.TLS + "; HTTP/2 stands for the papers' TCP page loads (HTTP/2 over TLS).",
		"Browser (recorded): " + f.Browser + ".",
		"Machine (recorded): " + f.Machine + "; the papers used separate client and server hosts (and, in 2017, a real path with an implicit 36 ms RTT, which we emulate as part of the RTT).",
		"Link: pltlab's userspace emulator with a droptail queue of 2 BDP; loss split evenly between the directions (Bernoulli); the papers used tc netem.",
		"Pages: static HTML referencing JPEG images only, as in both papers; every object is a decodable JPEG of exactly its size.",
		mobileCaveat(e),
	}
}

// mobileParts are the names of the plan's mobile parts.
func mobileParts(p Plan) []string {
	var out []string
	for _, pt := range p.Parts {
		if pt.Config.Device != "" {
			out = append(out, pt.Name)
		}
	}
	return out
}

// mobileCaveat says how the phones were emulated, with the slowdowns the loads recorded.
func mobileCaveat(e *Support) string {
	seen := map[string]string{}
	var names []string
	for _, r := range e.Loads() {
		if d := r.Device; d != nil {
			if _, ok := seen[d.Spec]; !ok {
				names = append(names, d.Spec)
			}
			seen[d.Spec] = fmt.Sprintf("%s: %.3g core(s) by %s, a calibration script measured %.2fx slower (expected %.3gx)", d.Spec, d.CPUs, d.Mechanism, d.MeasuredSlowdown, d.ExpectedSlowdown)
		}
	}
	var parts []string
	for _, n := range names {
		parts = append(parts, seen[n])
	}
	rec := "no mobile loads in these records"
	if len(parts) > 0 {
		rec = strings.Join(parts, "; ")
	}
	return "Mobile devices (2017, section 6): emulated, not phones (recorded: " + rec + "). A CPU budget of 1/slowdown of one core holds Chromium's whole process tree, " +
		"so QUIC's user-space processing and crypto (in the network service) are charged while the kernel's TCP processing is not: the emulation overstates QUIC's penalty against TCP. " +
		"The phone's other cores, memory, GPU and radio are not modelled; slowdowns are single-core benchmark ratios against a desktop (package device's presets, with their sources)."
}

// kakhkiFindings are the published findings of kakhki2017 and how each is judged.
func kakhkiFindings() []Finding {
	return []Finding{
		{ID: "quic-faster", Claim: "QUIC generally outperforms TCP (desktop page loads)", Source: "section 5.2, figures 5-6 (heatmaps)",
			Criterion: "cold comparison: the cells where QUIC is significantly faster (Welch, Holm over the cells at p < 0.01) are more than half of all cells (contradicted when those where TCP is are)",
			Judge:     judgeQUICFaster},
		{ID: "low-rate-loss", Claim: "QUIC's advantage is largest at low rate and with loss", Source: "section 5.2, figures 5-7",
			Criterion: "mean % difference (cold) higher at the lowest rate than at the highest (same page, RTT, no loss), and higher with loss than without (same page, rate, RTT): each difference's 99.5 % interval from the cells' loads above 0",
			Judge:     judgeLowRateLoss},
		{ID: "0rtt-small", Claim: "QUIC's edge with many small objects comes mostly from 0-RTT", Source: "section 5.2 (0-RTT vs 1-RTT)",
			Criterion: "pages of >= 100 objects of <= 10 KB: QUIC with 0-RTT significantly faster than TCP (Holm), and 0-RTT gives at least half of that edge ((diff 0-RTT - diff cold) / diff 0-RTT >= 0.5, by its interval)",
			Judge:     judge0RTTSmall},
		{ID: "reordering", Claim: "Packet reordering (from delay variation) makes QUIC worse than TCP", Source: "section 5.3 (packet reordering)",
			Criterion: "on the delay-variation link (112 ms +- 50 ms), TCP significantly faster than QUIC (cold; Holm over the pages) for more than half of the pages",
			Judge:     judgeReordering},
		{ID: "mobile", Claim: "On mobile devices QUIC's gains shrink or vanish (it is application-limited by the phone's CPU)", Source: "section 6 (mobile)",
			Criterion: "on an emulated phone (CPU budget for the whole browser; caveat in \"What differs\"): the mean over (page, link) of the phone's % difference (cold) minus the desktop's, " +
				"by its 99 % interval from the cells' loads, below 0 (contradicted above 0); the desktop cells must show QUIC's gain (mean % difference above 0 by its interval) for it to shrink",
			Judge: judgeMobile},
	}
}

func judgeQUICFaster(e *Support) Judgement {
	cells := enough(e.cells(kakhkiGridParts...))
	if len(cells) == 0 {
		return tooFewCells()
	}
	v, vs := fold(most, Alpha, cellTests(cells, 0, 1)...)
	_, ws := fold(most, Alpha, cellTests(cells, 1, 1)...)
	n, w := count(vs), count(ws)
	ev := fmt.Sprintf("cold: QUIC faster in %d, TCP faster in %d, n.s. in %d of %d cells (Holm over the cells at %g); 0-RTT: %d / %d / %d",
		n[Reproduced], n[Contradicted], n[Inconclusive], len(cells), Alpha, w[Reproduced], w[Contradicted], w[Inconclusive])
	j := Judgement{Verdict: v, Evidence: ev, See: []string{"Heatmaps: TCP vs QUIC", "Every cell"}}
	return withGridPower(j, e, cells, 0)
}

// judgeLowRateLoss tests the two halves of "largest at low rate and with loss", each at Alpha/2
// (Bonferroni): the mean % difference (cold) at the lowest rate minus that at the highest (same
// pages, RTTs, no loss), and the mean over lossy cells of their % difference minus their
// loss-free twin's, each with its normal interval from the cells' loads (diffOfMeans).
// Reproduced when both intervals lie above 0, contradicted when either lies below.
func judgeLowRateLoss(e *Support) Judgement {
	cells := enough(e.cells(kakhkiGridParts...))
	if len(cells) == 0 {
		return tooFewCells()
	}
	lossless := filterCells(cells, func(c Cell) bool { return c.LinkSpec.Loss == 0 })
	var rates []float64
	for _, c := range lossless {
		rates = addSorted(rates, float64(c.LinkSpec.Down))
	}
	if len(rates) < 2 {
		return notRun("fewer than two rates measured")
	}
	lo := filterCells(lossless, func(c Cell) bool { return float64(c.LinkSpec.Down) == rates[0] })
	hi := filterCells(lossless, func(c Cell) bool { return float64(c.LinkSpec.Down) == rates[len(rates)-1] })
	level := fmt.Sprintf("%g %%", 100*(1-Alpha/2))
	dr, dlo, dhi := diffOfMeans(lo, hi, 0, Alpha/2)
	ev := fmt.Sprintf("mean diff at %s Mbit/s %s, at %s Mbit/s %s: low minus high %s pp (%s interval)", mbit(lo[0].LinkSpec.Down), quantity.FormatPct(meanPct(lo, 0)),
		mbit(hi[0].LinkSpec.Down), quantity.FormatPct(meanPct(hi, 0)), quantity.FormatInterval("%+.1f", dr, dlo, dhi), level)
	// Loss: pair each lossy cell with the loss-free cell of the same page, rate and RTT.
	var with, without []Cell
	for _, c := range cells {
		if c.LinkSpec.Loss == 0 {
			continue
		}
		for _, z := range lossless {
			if z.Page == c.Page && z.LinkSpec.Down == c.LinkSpec.Down && z.LinkSpec.RTT == c.LinkSpec.RTT {
				with, without = append(with, c), append(without, z)
			}
		}
	}
	if len(with) == 0 {
		return notRun(ev + "; no lossy cell with a loss-free twin at this scale")
	}
	dl, llo, lhi := diffOfMeans(with, without, 0, Alpha/2)
	ev += fmt.Sprintf("; with loss %s vs without %s over %d paired cells: with minus without %s pp (%s interval)", quantity.FormatPct(meanPct(with, 0)), quantity.FormatPct(meanPct(without, 0)),
		len(with), quantity.FormatInterval("%+.1f", dl, llo, lhi), level)
	up := Region{0, math.Inf(1)}
	v, _ := fold(every, Alpha/2, within(dlo, dhi, up), within(llo, lhi, up))
	j := Judgement{Verdict: v, Evidence: ev, See: []string{"Heatmaps: TCP vs QUIC", "Every cell"}}
	return withGridPower(j, e, append(append(lo, hi...), with...), 0)
}

// judge0RTTSmall tests, on every page of >= 100 objects of <= 10 KB, the two halves of the
// claim with their family held at Alpha: QUIC with 0-RTT faster than TCP (the cells' Welch
// p-values, Holm), and 0-RTT giving at least half of that edge, ((diff 0-RTT - diff cold) /
// diff 0-RTT >= 0.5, that is 0.5 diff 0-RTT - diff cold > 0) by its delta-method interval
// (zeroRTTShare) at Alpha / (2 x cells) (Bonferroni). Reproduced when both hold on every page,
// contradicted when either is excluded on one.
func judge0RTTSmall(e *Support) Judgement {
	small := filterCells(enough(e.cells(kakhkiGridParts...)), func(c Cell) bool {
		n, s, ok := objectOf(c.PageSpec)
		return ok && n >= 100 && s <= 10_000
	})
	if len(small) == 0 {
		return notRun("no page of >= 100 objects of <= 10 KB at this scale")
	}
	a := Alpha / float64(2*len(small))
	var cs []claim
	var parts []string
	for _, c := range small {
		cold, warm := c.Diffs[0], c.Diffs[1]
		est, lo, hi := zeroRTTShare(cold, warm, a)
		cs = append(cs, testClaim(warm.P, warm.Pct), within(lo, hi, Region{0, math.Inf(1)}))
		share := (warm.Pct - cold.Pct) / warm.Pct
		parts = append(parts, fmt.Sprintf("%s on %s: cold %s, 0-RTT %s, 0-RTT share %s (0.5 x 0-RTT diff - cold diff %s pp)",
			c.Page, c.Link, cold, warm, quantity.FormatRatio(share), quantity.FormatInterval("%+.1f", est, lo, hi)))
	}
	v, _ := fold(everyHolm, Alpha, cs...)
	j := Judgement{Verdict: v, Evidence: strings.Join(parts, "; "), See: []string{"Heatmaps: TCP vs QUIC", "Every cell"}}
	return withGridPower(j, e, small, 1)
}

// zeroRTTShare is 0.5 x (0-RTT % difference) - (cold % difference) of one cell, above 0 when
// 0-RTT gives at least half of QUIC's edge, with its (1 - alpha) normal interval by the delta
// method: with T, C and W the means of TCP, QUIC cold and QUIC 0-RTT, f = 100 (T (0.5/W - 1/C)
// + 0.5) and Var f ≈ 100² ((0.5/W - 1/C)² sT²/nT + (0.5 T/W²)² sW²/nW + (T/C²)² sC²/nC) (the
// three samples independent; both differences share T, which the first term carries).
func zeroRTTShare(cold, warm Diff, alpha float64) (est, lo, hi float64) {
	t, c, w := cold.Mean, cold.RefMean, warm.RefMean
	est = 0.5*warm.Pct - cold.Pct
	if cold.N < 2 || cold.NRef < 2 || warm.NRef < 2 || !(c > 0) || !(w > 0) {
		return est, math.NaN(), math.NaN()
	}
	g := 0.5/w - 1/c
	v := 1e4 * (g*g*cold.SD*cold.SD/float64(cold.N) +
		math.Pow(0.5*t/(w*w), 2)*warm.RefSD*warm.RefSD/float64(warm.NRef) +
		math.Pow(t/(c*c), 2)*cold.RefSD*cold.RefSD/float64(cold.NRef))
	return analysis.NormalCI(est, v, alpha)
}

func judgeReordering(e *Support) Judgement {
	if ok, _ := availableLinks(KakhkiReorderLinks); len(ok) == 0 {
		return Judgement{Verdict: NotTestable, Evidence: "needs delay variation that reorders packets (the link model's delayvar), not in this build"}
	}
	if !slices.ContainsFunc(e.Plan.Parts, func(p Part) bool { return p.Name == "reorder" }) {
		return notRun("no reordering link at this scale")
	}
	cells := enough(e.cells("reorder"))
	if len(cells) == 0 {
		return tooFewCells()
	}
	v, _ := fold(most, Alpha, cellTests(cells, 0, -1)...)
	var parts []string
	for _, c := range cells {
		parts = append(parts, fmt.Sprintf("%s: %s", c.Page, c.Diffs[0]))
	}
	j := Judgement{Verdict: v, Evidence: strings.Join(parts, "; ") + fmt.Sprintf(" (Holm over the %d cells at %g)", len(cells), Alpha),
		See: []string{"Reordering (delay variation)"}}
	return withGridPower(j, e, cells, 0)
}

// judgeMobile pairs every mobile cell with its desktop twin (the same page and link in a grid
// part) and tests the mean of (phone % difference - desktop % difference), cold, by diffOfMeans
// at Alpha: reproduced when its interval lies below 0 (QUIC's gain shrank), contradicted when
// above (it grew). The desktop twins' mean % difference must itself lie above 0 by its interval
// (pctMean; a precondition, given): with no desktop gain there is nothing to shrink, and the
// verdict is inconclusive, saying so.
func judgeMobile(e *Support) Judgement {
	mobile := enough(e.cells(mobileParts(e.Plan)...))
	if len(mobile) == 0 {
		if len(mobileParts(e.Plan)) == 0 {
			return notRun("no emulated phone at this scale")
		}
		return tooFewCells()
	}
	desktop := enough(e.cells(kakhkiGridParts...))
	var with, without []Cell
	var parts []string
	for _, m := range mobile {
		for _, d := range desktop {
			if d.Page == m.Page && d.Link == m.Link {
				with, without = append(with, m), append(without, d)
				parts = append(parts, fmt.Sprintf("%s on %s: %s %s, desktop %s", m.Page, m.Link, m.Part, m.Diffs[0], d.Diffs[0]))
			}
		}
	}
	if len(with) == 0 {
		return notRun("no mobile cell has a desktop twin (the same page and link) with enough loads")
	}
	level := fmt.Sprintf("%g %%", 100*(1-Alpha))
	est, lo, hi := diffOfMeans(with, without, 0, Alpha)
	dm, dv := pctMean(without, 0)
	dm, dlo, dhi := analysis.NormalCI(dm, dv, Alpha)
	ev := strings.Join(parts, "; ") + fmt.Sprintf("; phone minus desktop %s pp over %d cell(s) (%s interval); desktop mean diff %s (%s interval)",
		quantity.FormatInterval("%+.1f", est, lo, hi), len(with), level, quantity.FormatInterval("%+.1f", dm, dlo, dhi), level)
	v, vs := fold(every, Alpha, within(lo, hi, Region{math.Inf(-1), 0}), given(within(dlo, dhi, Region{0, math.Inf(1)})))
	if vs[0] == Reproduced && vs[1] != Reproduced {
		ev += ": the desktop shows no gain of QUIC's for the phone's to shrink from"
	}
	j := Judgement{Verdict: v, Evidence: ev, See: []string{"Mobile devices (emulated)"}}
	return withGridPower(j, e, with, 0)
}

// cpuTable shows where each arm's CPU time went on the phone and on the desktop, cell by cell:
// the medians over the valid measured loads of the browser tree's CPU time by process type
// (result.CPU) and of the budget group's, so that a reader sees how much of QUIC's cost is the
// network service's.
func cpuTable(e *Support, mobile []Cell) Table {
	t := Table{Caption: "Median CPU time per load (ms) by Chromium process type, valid measured loads; the network service is where QUIC (and Chromium's TLS for TCP) runs, the kernel's TCP processing is in none of them.",
		Header: []string{"part", "page", "link", "arm", "PLT median", "browser", "renderer", "network", "GPU", "tree", "budget group", "n"}}
	twins := map[string]string{}
	for _, c := range e.cells(kakhkiGridParts...) {
		twins[c.Page+"\x00"+c.Link] = c.Part
	}
	for _, c := range mobile {
		for _, part := range []string{c.Part, twins[c.Page+"\x00"+c.Link]} {
			pr := e.Part(part)
			if pr == nil {
				continue
			}
			for _, a := range kakhkiArms {
				var plt, br, re, nw, gpu, tree, grp []float64
				for _, r := range pr.Records {
					if !r.IsLoad() || r.Warmup || !r.Valid || r.CPU == nil || r.Page.Spec != c.Page || r.Link.Spec != c.Link || r.Protocol != a.Protocol || r.Mode != a.Mode {
						continue
					}
					plt, br, re, nw = append(plt, r.PLTMs), append(br, r.CPU.BrowserMs), append(re, r.CPU.RendererMs), append(nw, r.CPU.NetworkMs)
					gpu, tree, grp = append(gpu, r.CPU.GPUMs), append(tree, r.CPU.TreeMs), append(grp, r.CPU.GroupMs)
				}
				if len(plt) == 0 {
					continue
				}
				med := func(xs []float64) string { return fmt.Sprintf("%.0f", analysis.Quantile(xs, 0.5)) }
				group := "-"
				if analysis.Quantile(grp, 0.5) > 0 {
					group = med(grp)
				}
				t.Rows = append(t.Rows, []string{part, c.Page, c.Link, a.Protocol + " " + string(a.Mode), quantity.FormatMsUnit(analysis.Quantile(plt, 0.5), 0),
					med(br), med(re), med(nw), med(gpu), med(tree), group, fmt.Sprint(len(plt))})
			}
		}
	}
	return t
}
