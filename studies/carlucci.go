package studies

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// CarlucciLossyLinks is the lossy-channel series of carlucci2015. The paper's abstract says
// QUIC "outperforms SPDY in the case of a lossy channel" but our sources do not give the loss
// rates, so the series is our choice: the paper's link with 1 % and 2 % random (Bernoulli) loss
// per direction, and 2 % in bursts of 4 packets on average (Gilbert model). A link this build's
// LINK grammar does not accept (bursty loss needs the link-model branch) is left out and named in
// the report; adding a link is one line here.
var CarlucciLossyLinks = []string{
	"carlucci2015,loss=1%",
	"carlucci2015,loss=2%",
	"carlucci2015,loss=2%,burst=4",
}

// carlucciFullExtraLossy are the lossy links the full scale adds to the series.
var carlucciFullExtraLossy = []string{"carlucci2015,loss=0.5%", "carlucci2015,loss=3%"}

// carlucciCitation is the full reference of the carlucci2015 study.
const carlucciCitation = `G. Carlucci, L. De Cicco, S. Mascolo, "HTTP over UDP: an experimental investigation of QUIC", ` +
	`Proc. 30th ACM/SIGAPP Symposium on Applied Computing (SAC 2015), Salamanca, pp. 609-614. ` +
	`Paper's testbed: 3 Mbit/s bottleneck, 50 ms base RTT, droptail buffer of one BDP, image-only page.`

// carlucci defines the carlucci2015 study.
func carlucci() *Study {
	s := &Study{
		Name:         Carlucci2015,
		Title:        "Carlucci et al., ACM SAC 2015",
		Citation:     carlucciCitation,
		DefaultScale: Quick,
		plan:         carlucciPlan,
		Findings:     carlucciFindings(),
		Sections:     carlucciSections,
		Differences:  carlucciDifferences,
		Console:      carlucciConsole,
	}
	s.References = slices.Clone(CarlucciPaper)
	return s
}

// availableLinks splits specs into those this build's LINK grammar accepts and, for the others,
// one line saying why they were left out.
func availableLinks(specs []string) (ok []string, left []string) {
	for _, s := range specs {
		if _, err := linkspec.Parse(s); err != nil {
			left = append(left, fmt.Sprintf("link %q not run: this build does not accept it (%v)", s, err))
			continue
		}
		ok = append(ok, s)
	}
	return ok, left
}

// carlucciPlan returns the carlucci2015 plan at a scale.
func carlucciPlan(sc Scale, _ Host) Plan {
	p := Plan{Study: Carlucci2015, Scale: sc}
	lossless := CarlucciConfig(20)
	lossyLinks, left := availableLinks(CarlucciLossyLinks)
	lossy := experiment.Config{Pages: []string{Carlucci2015}, Links: lossyLinks,
		Arms: experiment.CrossArms([]string{"h1", "h2", "h3"}, []result.Mode{result.Cold}), Runs: 8, Warmup: 1,
		Timeout: 30 * time.Second, TCPCC: "cubic", TLS: "1.2"}
	flows := FlowPart{Name: "flows", Title: "Safe deployment: bulk flows alone and sharing the bottleneck",
		Link: Carlucci2015, Mixes: [][]string{{"h1:cubic"}, {"h2:cubic"}, {"h3"}, {"h3", "h2:cubic"}},
		Duration: 10 * time.Second, Runs: 3}
	switch sc {
	case Smoke:
		lossless.Runs, lossless.Warmup = 2, 0
		lossy.Links, lossy.Runs, lossy.Warmup = lossyLinks[:1], 2, 0
		lossy.Arms = experiment.CrossArms([]string{"h2", "h3"}, []result.Mode{result.Cold})
		flows.Mixes, flows.Duration, flows.Runs = [][]string{{"h3", "h2:cubic"}}, 5*time.Second, 1
		p.ScaledDown = []string{"lossless: 2 loads per arm, no warm-up (quick: 20 and 1)",
			"lossy: only " + lossyLinks[0] + ", h2 and h3 only, 2 loads each, no warm-up (quick: every link of the series, h1 h2 h3, 8 loads)",
			"flows: only QUIC and TCP CUBIC sharing the link, 5 s, 1 run (quick: each protocol alone and the pair, 10 s, 3 runs)"}
	case Quick:
		p.ScaledDown = []string{"lossy: 8 loads per arm and link (full: 20); series without 0.5 % and 3 % loss",
			"flows: 10 s per run, 3 runs per mix (full: 60 s, 3 runs): three runs give the loss ratio an interval, which one run of 20 s could not"}
	case Full:
		lossless.Runs = 30
		extra, more := availableLinks(carlucciFullExtraLossy)
		lossy.Links, lossy.Runs = append(extra, lossyLinks...), 20
		left = append(left, more...)
		flows.Duration, flows.Runs = 60*time.Second, 3
	}
	p.NotRun = left
	p.Parts = []Part{{Name: "lossless", Title: "Loss-free PLT (the paper's table)", Config: lossless},
		{Name: "lossy", Title: "Lossy channel", Config: lossy}}
	p.Flows = []FlowPart{flows}
	return p
}

// CarlucciReferences pairs the paper's figures with the ideal lower bound of the page actually
// loaded over the link actually used (from the first load record of recs); tls is the TCP
// listeners' TLS version.
func CarlucciReferences(tls string, recs []*result.Record) []analysis.Reference {
	var page result.Page
	var link result.Link
	for _, r := range recs {
		if r.IsLoad() {
			page, link = r.Page, r.Link
			break
		}
	}
	rtt := time.Duration(link.RTTMs * float64(time.Millisecond))
	var refs []analysis.Reference
	for _, row := range CarlucciPaper {
		bound := plan.IdealPLT(page.TotalBytes, link.DownBps, rtt, plan.MinRoundTrips(row.Protocol, row.Mode, tls))
		row.BoundMs = float64(bound.Microseconds()) / 1000
		refs = append(refs, row)
	}
	return refs
}

// carlucciReproduction sets the lossless part's analysis beside the paper (so its own report
// opens with the side-by-side table, as `reproduce carlucci2015` always did) and returns it.
func carlucciReproduction(e *Support) *analysis.Reproduction {
	pr := e.Part("lossless")
	if pr == nil {
		return nil
	}
	if pr.Report.Reproduction == nil {
		pr.Report.Reproduction = &analysis.Reproduction{Title: "Carlucci et al., SAC 2015, reproduced with pltlab",
			References: CarlucciReferences(pr.Part.Config.TLS, pr.Records), Notes: CarlucciDifferences(pr.Records)}
	}
	return pr.Report.Reproduction
}

// carlucciConsole prints the lossless side-by-side table, as `reproduce carlucci2015` always has.
func carlucciConsole(w io.Writer, e *Support) error {
	rp := carlucciReproduction(e)
	if rp == nil {
		return nil
	}
	c := e.Part("lossless").Part.Config
	fmt.Fprintf(w, "Carlucci et al., SAC 2015, reproduced: page %s, link %s; TCP listeners TLS %s + %s, QUIC TLS 1.3 (quic-go)\n\n",
		c.Pages[0], c.Links[0], c.TLS, c.TCPCC)
	return e.Part("lossless").Report.WriteReferenceTable(w, rp.References, false)
}

// carlucciSections are the report sections of carlucci2015 after the findings table.
func carlucciSections(e *Support) []Section {
	var out []Section
	lossless := Section{ID: "lossless", Title: "Loss-free PLT (the paper's table)",
		Text: []string{"3 Mbit/s, 50 ms RTT, droptail buffer of one BDP, no loss; TCP listeners TLS 1.2 + CUBIC as in 2015. " +
			"Paper's figures beside our medians; ratios to HTTP/1.1 with 95 % bootstrap CIs; the ideal lower bound is serialization plus the protocol's minimal round trips."}}
	if rp := carlucciReproduction(e); rp != nil {
		rows := e.Part("lossless").Report.ReferenceTable(rp.References)
		lossless.Tables = []Table{{Header: rows[0], Rows: rows[1:]}}
		lossless.Figures = []Figure{ecdfFigure(e.Part("lossless"), "lossless-plt", "ECDF of the loss-free PLT per protocol and mode.")}
	} else {
		lossless.Text = append(lossless.Text, "No loads: this part was not run.")
	}
	out = append(out, lossless, carlucciLossySection(e))
	out = append(out, carlucciFlowSection(e))
	out = append(out, Section{ID: "not-reproducible", Title: "What cannot be reproduced", Bullets: []string{
		"gQUIC's forward error correction (\"The FEC module, when enabled, worsens the performance of QUIC\"): IETF QUIC (RFC 9000) has no FEC and quic-go implements none, so this finding is not testable here.",
		"The paper's exact page composition and loss rates are not published: the page is our carlucci2015 preset (see `pltlab reproduce carlucci2015 --calibrate` for how much the conclusions depend on it) and the loss series is our choice (section Lossy channel).",
	}})
	return out
}

// ecdfFigure is a part's ECDF of PLT per group.
func ecdfFigure(pr *PartResult, file, caption string) Figure {
	return Figure{File: file, Caption: caption, Render: func(w io.Writer, format string) error {
		return pr.Report.WritePlot(w, analysis.ECDFPlot, format)
	}}
}

// lossyRow is one lossy link's comparison of QUIC (h3) and SPDY's successor (h2).
type lossyRow struct {
	link       string
	h1, h2, h3 *analysis.Group
	ratio      float64 // median h3 / median h2
	p          float64 // Mann-Whitney h3 vs h2
}

// carlucciLossyRows compares h3 with h2 on every lossy link measured.
func carlucciLossyRows(e *Support) []lossyRow {
	pr := e.Part("lossy")
	if pr == nil {
		return nil
	}
	var out []lossyRow
	for _, l := range pr.Part.Config.Links {
		page := pr.Part.Config.Pages[0]
		r := lossyRow{link: l, h1: pr.Group(page, l, "h1", result.Cold), h2: pr.Group(page, l, "h2", result.Cold),
			h3: pr.Group(page, l, "h3", result.Cold), ratio: math.NaN(), p: math.NaN()}
		if r.h2 != nil && r.h3 != nil {
			r.ratio = r.h3.Median / r.h2.Median
			r.p = analysis.MannWhitney(r.h3.Sample, r.h2.Sample).P
		}
		out = append(out, r)
	}
	return out
}

// carlucciLossySection is the lossy-channel table.
func carlucciLossySection(e *Support) Section {
	s := Section{ID: "lossy", Title: "Lossy channel",
		Text: []string{"The paper's loss rates are not in our sources, so the series is our choice: the paper's link with " +
			"random (Bernoulli) loss of 1 % and 2 % per direction and, where the build has the Gilbert model, 2 % in bursts of 4 packets. " +
			"Medians with their 95 % CIs; h3/h2 is the ratio of medians, p the two-sided Mann-Whitney test."}}
	t := Table{Header: []string{"link", "HTTP/1.1 median", "HTTP/2 median", "HTTP/3 median", "h3/h2", "p (h3 vs h2)", "valid h1/h2/h3"}}
	for _, r := range carlucciLossyRows(e) {
		t.Rows = append(t.Rows, []string{r.link, groupCell(r.h1), groupCell(r.h2), groupCell(r.h3),
			quantity.FormatRatio(r.ratio), quantity.FormatP(r.p), validCell(r.h1) + "/" + validCell(r.h2) + "/" + validCell(r.h3)})
	}
	if len(t.Rows) == 0 {
		s.Text = append(s.Text, "No loads: this part was not run.")
		return s
	}
	s.Tables = []Table{t}
	s.Figures = []Figure{ecdfFigure(e.Part("lossy"), "lossy-plt", "ECDF of the PLT per protocol on each lossy link.")}
	return s
}

// groupCell formats a group's median with its CI.
func groupCell(g *analysis.Group) string {
	if g == nil {
		return "-"
	}
	s := quantity.FormatSec(g.Median, 0)
	if !math.IsNaN(g.CILow) {
		s += fmt.Sprintf(" [%s, %s]", quantity.FormatSec(g.CILow, 0), quantity.FormatSec(g.CIHigh, 0))
	}
	return s
}

// validCell is a group's valid/runs count ("-" without a group).
func validCell(g *analysis.Group) string {
	if g == nil {
		return "-"
	}
	return fmt.Sprintf("%d/%d", g.Valid, g.Runs)
}

// carlucciDifferences are the recorded testbed differences plus the study's own choices.
func carlucciDifferences(e *Support) []string {
	out := CarlucciDifferences(e.Loads())
	return append(out, "Loss: our `loss=P%` drops each packet with probability P in each direction (with `burst=N`, in bursts of N packets on average: Gilbert model); the paper's loss model and rates are not in our sources.")
}

// carlucciFindings are the published findings of carlucci2015 and how each is judged.
func carlucciFindings() []Finding {
	return []Finding{
		{ID: "lossless-vs-http", Claim: "QUIC reduces the overall page retrieval time with respect to HTTP in case of a channel without induced random losses",
			Source: "abstract; section 4", Criterion: "h3 (cold and warm) median PLT below h1's on the loss-free link, Mann-Whitney p < 0.01",
			Judge: judgeLosslessVsHTTP},
		{ID: "lossless-order", Claim: "Loss-free image page: HTTP/1.1 2.03 s, SPDY 1.45 s, QUIC 1.14 s (QUIC fastest, SPDY faster than HTTP/1.1)",
			Source: "section 4, page load time results", Criterion: "medians ordered h1 > h2 > h3 (cold), each step Mann-Whitney p < 0.01",
			Judge: judgeLosslessOrder},
		{ID: "lossless-ratios", Claim: "Relative to HTTP/1.1: SPDY 0.71, QUIC 0.56 (from the published PLTs)",
			Source: "section 4 (ratios computed from the published PLTs)", Criterion: "our 95 % bootstrap CI of the ratio of medians inside +-10 % of each paper ratio (h2/h1; h3/h1 cold or warm); contradicted when a CI lies outside it",
			Judge: judgeLosslessRatios},
		{ID: "lossy", Claim: "QUIC outperforms SPDY in the case of a lossy channel",
			Source: "abstract; section 4 (loss rates not in our sources)", Criterion: "on every lossy link measured, h3 median below h2's with Mann-Whitney p < 0.01",
			Judge: judgeLossy},
		{ID: "safe-alone", Claim: "QUIC can be safely deployed: alone on the bottleneck a QUIC flow uses the channel like TCP does, with a low loss ratio",
			Source: "abstract; section 3 (safe deployment experiments)", Criterion: "h3 flow alone: utilization >= 0.9 x the TCP CUBIC flow's, loss ratio <= TCP's + 1 percentage point",
			Judge: judgeSafeAlone},
		{ID: "safe-sharing", Claim: "QUIC sharing the bottleneck with TCP CUBIC does not starve it",
			Source: "section 3 (safe deployment experiments)", Criterion: "QUIC + TCP CUBIC sharing: Jain's index of the goodputs >= 0.9 (shares within about 0.3..0.7)",
			Judge: judgeSafeSharing},
		{ID: "fec", Claim: "The FEC module, when enabled, worsens the performance of QUIC",
			Source: "abstract; section 4", Criterion: "needs gQUIC's FEC, which IETF QUIC and quic-go do not have",
			Judge: func(*Support) Judgement {
				return Judgement{Verdict: NotTestable, Evidence: "IETF QUIC (RFC 9000) has no FEC; quic-go implements none", See: []string{"What cannot be reproduced"}}
			}},
	}
}

// losslessGroups returns the loss-free groups h1, h2, h3 cold and h3 warm (nil where missing).
func losslessGroups(e *Support) (h1, h2, h3, h3w *analysis.Group) {
	pr := e.Part("lossless")
	if pr == nil {
		return
	}
	p, l := pr.Part.Config.Pages[0], pr.Part.Config.Links[0]
	return pr.Group(p, l, "h1", result.Cold), pr.Group(p, l, "h2", result.Cold), pr.Group(p, l, "h3", result.Cold), pr.Group(p, l, "h3", result.Warm)
}

// carlucciPaperRatio is the paper's PLT ratio of two of its rows (by our arm), e.g. QUIC over
// HTTP/1.1 = 1.14 / 2.03 = 0.56.
func carlucciPaperRatio(a, b experiment.Arm) float64 {
	var ma, mb float64
	for _, row := range CarlucciPaper {
		if row.Protocol == a.Protocol && row.Mode == a.Mode {
			ma = row.PaperMs
		}
		if row.Protocol == b.Protocol && row.Mode == b.Mode {
			mb = row.PaperMs
		}
	}
	return ma / mb
}

// losslessShift is the loss-free cell's test of "a faster than b" at the paper's ratio.
func losslessShift(e *Support, a, b *analysis.Group) shift {
	pr := e.Part("lossless")
	p, l := pr.Part.Config.Pages[0], pr.Part.Config.Links[0]
	if a == nil || b == nil {
		return shift{claim: missing(), text: "missing arm", cell: cellName("lossless", l, armLabel(a), armLabel(b))}
	}
	pub := carlucciPaperRatio(experiment.Arm{Protocol: a.Protocol, Mode: a.Mode}, experiment.Arm{Protocol: b.Protocol, Mode: b.Mode})
	return judgeShift(pr, p, l, a, b, pub)
}

func judgeLosslessVsHTTP(e *Support) Judgement {
	h1, _, h3, h3w := losslessGroups(e)
	if e.Part("lossless") == nil {
		return notRun("no loss-free loads")
	}
	cells := []shift{losslessShift(e, h3, h1)}
	if h3w != nil {
		cells = append(cells, losslessShift(e, h3w, h1))
	}
	return combine(cells, "Loss-free PLT (the paper's table)")
}

func judgeLosslessOrder(e *Support) Judgement {
	h1, h2, h3, _ := losslessGroups(e)
	if e.Part("lossless") == nil {
		return notRun("no loss-free loads")
	}
	j := combine([]shift{losslessShift(e, h2, h1), losslessShift(e, h3, h2)}, "Loss-free PLT (the paper's table)")
	j.Evidence += " (paper 2.03 / 1.45 / 1.14 s)"
	return j
}

// RatioMargin is how close a ratio of medians must be to the paper's to match it: within
// +-10 % of the published ratio (h2/h1 0.71 matches 0.64..0.78). A point value cannot be shown
// equal, only within a margin (an equivalence test: the interval inside the margin; Schuirmann
// 1987), and the paper's PLTs come from another testbed and another decade's browsers.
const RatioMargin = 0.10

// judgeLosslessRatios compares each published ratio to HTTP/1.1 with our 95 % bootstrap CI of
// the ratio of medians against the region of +-RatioMargin around the paper's ratio: a ratio
// matches when its CI lies inside the region and misses when its CI lies outside it. Reproduced
// when h2 and h3 (cold or warm) match, contradicted when h2 misses or both h3 modes miss, else
// inconclusive (a CI that holds a margin's edge).
func judgeLosslessRatios(e *Support) Judgement {
	pr := e.Part("lossless")
	rp := carlucciReproduction(e)
	if pr == nil || rp == nil {
		return notRun("no loss-free loads")
	}
	if j, few := tooFew(losslessGroups(e)); few {
		return j
	}
	rows := pr.Report.ReferenceRows(rp.References)
	for _, r := range rows {
		if math.IsNaN(r.RatioLow) || r.RatioLow <= 0 || math.IsInf(r.RatioHigh, 0) {
			return notRun(fmt.Sprintf("the 95 %% CI of %s's ratio is unbounded (timed-out or failed loads): no test", armName(r.Protocol, r.Mode)))
		}
	}
	var parts, cells []string
	h2, h3 := unsure(), []claim{}
	for _, r := range rows[1:] {
		region := Region{r.PaperRatio * (1 - RatioMargin), r.PaperRatio * (1 + RatioMargin)}
		c := within(r.RatioLow, r.RatioHigh, region)
		word := map[Verdict]string{Reproduced: "matches", Contradicted: "misses", Inconclusive: "undecided"}[c.judge(Alpha)]
		parts = append(parts, fmt.Sprintf("%s: paper %.2f (+-%.0f %%: %.2f..%.2f), ours %s [%s, %s]: %s", armName(r.Protocol, r.Mode), r.PaperRatio,
			100*RatioMargin, region.Lo, region.Hi, quantity.FormatRatio(r.Ratio), quantity.FormatRatio(r.RatioLow), quantity.FormatRatio(r.RatioHigh), word))
		cells = append(cells, cellName("lossless", pr.Part.Config.Links[0], armName(r.Protocol, r.Mode), rows[0].Protocol))
		if r.Protocol == "h2" {
			h2 = c
		} else if r.Protocol == "h3" {
			h3 = append(h3, c)
		}
	}
	v, _ := fold(every, Alpha, h2, group(either, h3...)) // either h3 mode may match
	return Judgement{Verdict: v, Evidence: strings.Join(parts, "; "), Cells: cells,
		See: []string{"Loss-free PLT (the paper's table)", "calibration (--calibrate)"}}
}

// armName is "h3" or "h3 warm".
func armName(proto string, m result.Mode) string {
	return experiment.Arm{Protocol: proto, Mode: m}.String()
}

// judgeLossy tests "h3 faster than h2" on every lossy link. The paper gives no loss rates and
// no lossy PLTs, so an undecided link is powered at the ratio observed here.
func judgeLossy(e *Support) Judgement {
	pr := e.Part("lossy")
	rows := carlucciLossyRows(e)
	if pr == nil || len(rows) == 0 {
		return notRun("no lossy loads at this scale")
	}
	var cells []shift
	for _, r := range rows {
		cells = append(cells, judgeShift(pr, pr.Part.Config.Pages[0], r.link, r.h3, r.h2, 0))
	}
	return combine(cells, "Lossy channel")
}
