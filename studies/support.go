package studies

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// Alpha is the significance threshold of every study's tests: p < 0.01, as Kakhki et al., IMC
// 2017 (section 3, "statistically significant ... p < 0.01") and the analysis package.
const Alpha = 0.01

// MinLoads is the fewest loads per arm for which a judgement is made: with fewer, a two-sided
// Mann-Whitney test cannot reach p < 0.01 (exact, no ties: the smallest p with 5 and 5 loads is
// 2/C(10,5) = 0.0079, with 4 and 4 it is 2/C(8,4) = 0.029), so a finding is "not run" instead
// of "inconclusive".
const MinLoads = 5

// tooFew returns a "not run" judgement when any group has fewer than MinLoads loads (or is
// missing), naming the smallest count; ok false otherwise.
func tooFew(gs ...*analysis.Group) (Judgement, bool) {
	least := math.MaxInt
	for _, g := range gs {
		n := 0
		if g != nil {
			n = len(g.Sample)
		}
		least = min(least, n)
	}
	if least < MinLoads {
		return notRun(fmt.Sprintf("too few loads for p < 0.01 at this scale (%d per arm, need %d)", least, MinLoads)), true
	}
	return Judgement{}, false
}

// Support is what a study's records say, part by part: the basis of its findings and sections
// (not to be confused with a load's artifact files, which experiment keeps).
type Support struct {
	// Study and Plan are what was run.
	Study *Study
	Plan  Plan
	// Records are every record read back (all parts, link checks and flow lines included).
	Records []*result.Record
	// Estimate is the cost model's time of Plan in one process as the run that made the
	// records prepared it (Prepared.Estimate); 0: the report derives it (Plan.Estimate).
	Estimate time.Duration
	parts    map[string]*PartResult
	// decided counts, per part, the loads `reproduce --decide` added (pooled with the part's).
	decided map[string]int
}

// PartResult is one part's records and their analysis.
type PartResult struct {
	// Part is the part as planned.
	Part Part
	// Records are the part's records (experiment name PartExperiment(study, part)).
	Records []*result.Record
	// Report is the analysis of Records with h1 (or the first protocol) as the baseline.
	Report *analysis.Report
}

// Evaluate sorts recs into the plan's parts and analyses each part that has page loads.
func Evaluate(s *Study, sp Plan, recs []*result.Record) *Support {
	e := &Support{Study: s, Plan: sp, Records: recs, parts: map[string]*PartResult{}, decided: map[string]int{}}
	for _, p := range sp.Parts {
		pr := &PartResult{Part: p}
		name := PartExperiment(s.Name, p.Name)
		for _, r := range recs {
			if r.Experiment == name || strings.HasPrefix(r.Experiment, name+decideTag) {
				pr.Records = append(pr.Records, r) // loads added by --decide pool with the part's
				if r.Experiment != name && r.IsLoad() {
					e.decided[p.Name]++
				}
			}
		}
		rep := analysis.Analyze(pr.Records, analysis.Options{Baseline: baseline(p)})
		if !rep.Empty() {
			pr.Report = rep
			e.parts[p.Name] = pr
		}
	}
	return e
}

// baseline is the protocol a part's analysis compares with: h1 when measured, else the first.
func baseline(p Part) string {
	for _, a := range p.Config.Arms {
		if a.Protocol == "h1" {
			return "h1"
		}
	}
	if len(p.Config.Arms) == 0 {
		return ""
	}
	return p.Config.Arms[0].Protocol
}

// Part returns the results of the part called name, nil when it was not run or has no loads.
func (e *Support) Part(name string) *PartResult { return e.parts[name] }

// Loads returns every page-load record of the evidence's parts.
func (e *Support) Loads() []*result.Record {
	var out []*result.Record
	for _, p := range e.Plan.Parts {
		if pr := e.parts[p.Name]; pr != nil {
			out = append(out, pr.Records...)
		}
	}
	return out
}

// Group returns the part's group of (page, link, protocol, mode), nil when it has no loads.
func (pr *PartResult) Group(page, link, proto string, mode result.Mode) *analysis.Group {
	if pr == nil {
		return nil
	}
	for _, g := range pr.Report.Groups {
		if g.Page == page && g.Link == link && g.Protocol == proto && g.Mode == mode {
			return g
		}
	}
	return nil
}

// Sample returns the PLTs (ms) of the valid completed measured loads of a group, ascending
// (nil when none).
func (pr *PartResult) Sample(page, link, proto string, mode result.Mode) []float64 {
	if g := pr.Group(page, link, proto, mode); g != nil {
		return g.Completed
	}
	return nil
}

// Diff compares two samples of PLTs of one cell the way Kakhki et al. (IMC 2017, section 4 and
// the heatmaps of figures 5-8; the 2024 replication's scripts) did: the percent difference of
// the mean PLTs relative to the reference sample, positive when the reference is faster, and
// Welch's t-test. The compared sample is TCP and the reference QUIC in Kakhki's cells (and
// wherever a study compares TCP with QUIC); modquic compares quic-go with ngtcp2, muthuraj's
// TCP table CUBIC with BBR, and highway2023 a host-stack setting off with on (its goodputs).
type Diff struct {
	// Mean and RefMean are the means of the compared and the reference sample, PLTs in ms
	// (NaN without loads).
	Mean, RefMean float64
	// SD and RefSD are their sample standard deviations in ms (NaN with fewer than two loads).
	SD, RefSD float64
	// N and NRef are the sample sizes.
	N, NRef int
	// Pct is PctDiff(Mean, RefMean) in percent.
	Pct float64
	// P is Welch's two-sided p-value (NaN with fewer than two loads a side).
	P float64
	// Significant is P < Alpha.
	Significant bool
}

// PctDiff is Kakhki et al.'s percent difference (TCP - QUIC) / QUIC x 100: positive when QUIC
// is faster, negative when TCP is (NaN when quic is 0 or either is NaN).
func PctDiff(tcp, quic float64) float64 {
	if quic == 0 || math.IsNaN(tcp) || math.IsNaN(quic) {
		return math.NaN()
	}
	return (tcp - quic) / quic * 100
}

// CompareMeans builds the Diff of two PLT samples in ms, tcp the compared and quic the reference
// (censored values must be removed).
func CompareMeans(tcp, quic []float64) Diff {
	d := Diff{Mean: math.NaN(), RefMean: math.NaN(), SD: math.NaN(), RefSD: math.NaN(), N: len(tcp), NRef: len(quic), P: math.NaN()}
	if len(tcp) > 0 {
		d.Mean, d.SD = analysis.MeanSD(tcp)
	}
	if len(quic) > 0 {
		d.RefMean, d.RefSD = analysis.MeanSD(quic)
	}
	d.Pct = PctDiff(d.Mean, d.RefMean)
	d.P = analysis.Welch(tcp, quic).P
	d.Significant = d.P < Alpha
	return d
}

// String gives "+12.3 % (p=0.0040)", "-3.1 % (p=0.4100, n.s.)", or "+5.0 % (p=n/a, too few
// loads to test)" when a side has fewer than two loads (p-values as quantity.FormatP).
func (d Diff) String() string {
	if math.IsNaN(d.Pct) {
		return "n/a"
	}
	return quantity.FormatPct(d.Pct) + " (p=" + quantity.FormatP(d.P) + d.notSignificant("loads") + ")"
}

// notSignificant is what follows the p-value of a difference that is not significant: ", n.s."
// when it was tested, ", too few UNIT to test" when P is NaN (fewer than two a side), "" when
// significant. Not significant and not tested are different findings.
func (d Diff) notSignificant(unit string) string {
	switch {
	case d.Significant:
		return ""
	case math.IsNaN(d.P):
		return ", too few " + unit + " to test"
	}
	return ", n.s."
}

// median returns the median of a group's sample in ms (NaN for nil).
func median(g *analysis.Group) float64 {
	if g == nil {
		return math.NaN()
	}
	return g.Median
}

// joinSee joins section names for a findings table cell.
func joinSee(see []string) string { return strings.Join(see, "; ") }

// EstimatedTook is the closing line of a run estimated at est whose records are recs: "estimated
// X on one 2-core machine, took Y" (Y from plan.Took: the longest shard when shards ran at once;
// "took n/a" when no line has a time).
func EstimatedTook(est time.Duration, recs []*result.Record) string {
	return tookLine("estimated "+quantity.FormatEstimate(est)+" on one 2-core machine", recs)
}

// tookLine is e, then how long the records took.
func tookLine(e string, recs []*result.Record) string {
	took := plan.Took(recs)
	if took == 0 {
		return e + ", took n/a (no timed line)"
	}
	return e + ", took " + quantity.FormatEstimate(took+plan.StartCost)
}

// estimatedTook is the closing line of the evaluated run: EstimatedTook with e.Estimate, or the
// cost model's Plan.Estimate when the run gave none.
func (e *Support) estimatedTook() string {
	if e.Estimate > 0 {
		return EstimatedTook(e.Estimate, e.Records)
	}
	est, err := e.Plan.Estimate()
	if err != nil {
		return tookLine("not estimated ("+err.Error()+")", e.Records)
	}
	return EstimatedTook(est, e.Records)
}
