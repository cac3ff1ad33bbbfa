package studies

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
)

// Need is what would decide an inconclusive comparison: Runs measured loads per arm of one
// cell (part, page, link, arms), of which Have are measured, at the effect Effect (a ratio of
// medians, or a % difference of means for grid cells) taken from EffectFrom ("published" or
// "observed here"). Time is the cost model's estimate of the loads still missing.
type Need struct {
	Part       string           `json:"part"`
	Page       string           `json:"page"`
	Link       string           `json:"link"`
	Arms       []experiment.Arm `json:"-"`
	ArmNames   []string         `json:"arms"`
	Runs       int              `json:"runs_per_arm"`
	Have       int              `json:"have_per_arm"`
	Effect     float64          `json:"effect"`
	EffectFrom string           `json:"effect_from"`
	Time       time.Duration    `json:"-"`
	TimeS      float64          `json:"time_s"`
}

// cellName names a cell of a part for the findings table: "lossy: carlucci2015,loss=1% h3 vs h2".
func cellName(part, link, a, b string) string {
	return fmt.Sprintf("%s: %s %s vs %s", part, link, a, b)
}

// needFor builds the Need of a cell of part pr with runs loads per arm wanted and have measured.
func needFor(pr *PartResult, page, link string, arms []experiment.Arm, runs, have int, effect float64, from string) Need {
	n := Need{Part: pr.Part.Name, Page: page, Link: link, Arms: arms, Runs: runs, Have: have, Effect: effect, EffectFrom: from}
	for _, a := range arms {
		n.ArmNames = append(n.ArmNames, a.String())
	}
	if more := runs - have; more > 0 && runs < math.MaxInt32 {
		c := pr.Part.Config
		c.Pages, c.Links, c.Arms, c.Runs = []string{page}, []string{link}, arms, more
		n.Time, _ = experiment.Estimate(c) // refused before any run anyway: 0
		n.TimeS = n.Time.Seconds()
	}
	return n
}

// shift is the test of one cell of a directional claim "a's PLT below b's" (a ratio of
// medians a/b below 1): the Mann-Whitney test, the 95 % bootstrap CI of the ratio, and for an
// inconclusive outcome what this sample could detect and what would decide it.
type shift struct {
	claim claim // the Mann-Whitney test, a faster the claimed way (missing when not run)
	text  string
	cell  string
	need  *Need
}

// judgeShift tests the claim "a faster than b" on one cell of part pr (a and b its groups):
//   - reproduced: a's median below b's with Mann-Whitney p < Alpha;
//   - contradicted: b's median below a's with p < Alpha (the test excludes "a faster"), the
//     95 % CI of a/b lying above 1 beside it;
//   - inconclusive: neither; the text gives the smallest ratio the sample detects with analysis.Power
//     (MWDetectable) and the loads per arm that decide it (MWLoadsPerArm) at the published
//     ratio (published > 0) or else at the ratio observed here.
//
// A cell with fewer than MinLoads loads in an arm is not run.
func judgeShift(pr *PartResult, page, link string, a, b *analysis.Group, published float64) shift {
	na, nb := armLabel(a), armLabel(b)
	s := shift{cell: cellName(pr.Part.Name, link, na, nb), claim: missing()}
	if j, few := tooFew(a, b); few {
		s.text = s.cell + ": " + j.Evidence
		return s
	}
	r := a.Median / b.Median
	lo, hi := analysis.RatioCI(a.Sample, b.Sample, analysis.DefaultBootstrap, 1)
	p := analysis.MannWhitney(a.Sample, b.Sample).P
	s.claim = testClaim(p, b.Median-a.Median)
	s.text = fmt.Sprintf("%s %s vs %s %s, %s/%s %s [%s, %s], p=%s", na, quantity.FormatSec(a.Median, 0), nb, quantity.FormatSec(b.Median, 0), na, nb,
		quantity.FormatRatio(r), quantity.FormatRatio(lo), quantity.FormatRatio(hi), quantity.FormatP(p))
	switch s.claim.judge(Alpha) {
	case Contradicted:
		s.text += fmt.Sprintf(": %s is slower (p < %g; 95 %% CI of %s/%s [%s, %s] above 1)", na, Alpha, na, nb, quantity.FormatRatio(lo), quantity.FormatRatio(hi))
	case Inconclusive:
		effect, from := published, "published"
		if !(effect > 0) {
			effect, from = r, "observed here"
		}
		need := MWLoadsPerArm(a.Sample, b.Sample, effect)
		have := min(len(a.Sample), len(b.Sample))
		n := needFor(pr, page, link, []experiment.Arm{{Protocol: a.Protocol, Mode: a.Mode}, {Protocol: b.Protocol, Mode: b.Mode}}, need, have, effect, from)
		s.need = &n
		s.text += fmt.Sprintf(": n.s.; %d+%d loads detect %s/%s <= %s with %.0f %% power (Noether 1987); %s",
			len(a.Sample), len(b.Sample), na, nb, quantity.FormatRatio(MWDetectable(a.Sample, b.Sample)), analysis.Power*100, needText(n))
	}
	return s
}

// needText says what would decide a cell: "at the effect observed here (0.96) 57 loads per arm
// would decide it (49 more, about 9 min)".
func needText(n Need) string {
	if n.Runs >= math.MaxInt32 {
		return fmt.Sprintf("at the effect %s (%s) no number of loads decides it", n.EffectFrom, quantity.FormatRatio(n.Effect))
	}
	s := fmt.Sprintf("at the effect %s (%s) %d loads per arm would decide it", n.EffectFrom, quantity.FormatRatio(n.Effect), n.Runs)
	if more := n.Runs - n.Have; more > 0 {
		s += fmt.Sprintf(" (%d more, about %s)", more, quantity.FormatEstimate(n.Time))
	}
	return s
}

// armLabel is "h3" or "h3 warm" for a group.
func armLabel(g *analysis.Group) string {
	if g == nil {
		return "-"
	}
	return armName(g.Protocol, g.Mode)
}

// combine folds the cells of a claim that must hold on every cell into one judgement (fold,
// every): reproduced when every cell is at Alpha, contradicted when a cell is significant the
// other way after Holm's procedure over the cells, not run when a cell lacks loads, else
// inconclusive with the needs of the undecided cells.
func combine(cells []shift, see ...string) Judgement {
	if len(cells) == 0 {
		return notRun("no cell measured")
	}
	cs := make([]claim, len(cells))
	for i, c := range cells {
		cs[i] = c.claim
	}
	v, vs := fold(every, Alpha, cs...)
	j := Judgement{Verdict: v, See: see}
	texts := make([]string, len(cells))
	for i, c := range cells {
		texts[i] = c.text
		if c.claim.judge(Alpha) == Contradicted && vs[i] != Contradicted {
			texts[i] += fmt.Sprintf(" (not significant after Holm's correction over %d cells)", len(cells))
		}
		j.Cells = append(j.Cells, c.cell)
		if c.need != nil && v == Inconclusive {
			j.Needs = append(j.Needs, *c.need)
		}
	}
	j.Evidence = strings.Join(texts, "; ")
	return j
}

// withGridPower completes a grid judgement with the cells it used and, when inconclusive, what
// the cells whose comparison i is not significant could have detected and what would decide
// them: the smallest difference of means detectable with analysis.Power (WelchDetectable, in % of the
// QUIC mean) and the loads per arm at the difference observed here (WelchPerArm), with the
// cost model's time.
func withGridPower(j Judgement, e *Support, cells []Cell, i int) Judgement {
	for _, c := range cells {
		j.Cells = append(j.Cells, cellName(c.Part, c.Link, "h3 "+Comparisons[i].Name, "h2")+" page "+c.Page)
	}
	if j.Verdict != Inconclusive {
		return j
	}
	var mdes []float64
	var total time.Duration
	for _, c := range cells {
		d := c.Diffs[i]
		if d.Significant || d.N < 2 || d.NRef < 2 || !(d.RefMean > 0) {
			continue
		}
		mdes = append(mdes, WelchDetectable(d.SD, d.RefSD, d.N, d.NRef)/d.RefMean*100)
		pr := e.Part(c.Part)
		if pr == nil {
			continue
		}
		runs := WelchPerArm(d.SD, d.RefSD, d.Mean-d.RefMean)
		n := needFor(pr, c.Page, c.Link, []experiment.Arm{{Protocol: "h2", Mode: result.Cold}, {Protocol: "h3", Mode: Comparisons[i].QUIC}},
			runs, min(d.N, d.NRef), d.Pct, "observed here")
		j.Needs = append(j.Needs, n)
		total += n.Time
	}
	if len(mdes) == 0 {
		return j
	}
	slices.Sort(mdes)
	j.Evidence += fmt.Sprintf("; %d cells n.s.: they detect differences of %s..%s with %.0f %% power (normal approximation, Chow et al. 2008)",
		len(mdes), quantity.FormatPct(mdes[0]), quantity.FormatPct(mdes[len(mdes)-1]), analysis.Power*100)
	decidable := 0
	for _, n := range j.Needs {
		if n.Runs < math.MaxInt32 {
			decidable++
		}
	}
	j.Evidence += fmt.Sprintf("; at the differences observed here %d of them would be decided by %s loads per arm (about %s more in all, `--decide`)",
		decidable, needRange(j.Needs), quantity.FormatEstimate(total))
	return j
}

// needRange is "12..240" over the decidable needs' runs per arm.
func needRange(ns []Need) string {
	lo, hi := math.MaxInt32, 0
	for _, n := range ns {
		if n.Runs < math.MaxInt32 {
			lo, hi = min(lo, n.Runs), max(hi, n.Runs)
		}
	}
	if hi == 0 {
		return "no number of"
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}

// VerdictsText defines the verdicts in every report (docs/design.md, "Verdicts").
const VerdictsText = "Verdicts, one rule for every finding: reproduced (the claim's test is significant at p < 0.01 in the claimed direction, or the estimate's interval lies inside the claimed region, a published ratio's within +-10 %); " +
	"contradicted (the data reject it the other way: a significant test the other way, or an interval outside the region, named in the evidence); a value on its bound, or without an interval, is inconclusive; " +
	"a finding made of several cells holds its family at 0.01 (Holm's procedure over the cells, Bonferroni over sub-claims); " +
	"inconclusive (neither: the evidence gives the smallest effect this sample detects with 80 % power, by Noether's (1987) sample size of the Mann-Whitney test " +
	"from the recorded spread, or the normal approximation for a difference of means, and the loads per arm that would decide it with the cost model's time; " +
	"`pltlab reproduce STUDY --decide` runs them); not testable here (the stack cannot show it); not run (testable, but this scale or build did not measure it)."
