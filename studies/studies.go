// Package studies holds the published studies pltlab reproduces, each as data plus one file.
//
// A Study is its plan per scale (the experiment matrices of its parts, the flow mixes, what was
// scaled down), the published reference values with their sources, the published findings and
// how each is judged from the records, and the report sections. Every study shares one runner
// (Run) and one report path (Evaluate, WriteReport); every report opens with a findings table.
// See docs/extending.md, "A study".
package studies

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// Scale is the size of a study's run.
type Scale string

// The scales of every study: Smoke is a functional check (CI, <= 5 min on a 2-core machine),
// Quick a representative sub-grid (<= 30 min), Full the published grid (its time estimate is
// printed before it starts).
const (
	Smoke Scale = "smoke"
	Quick Scale = "quick"
	Full  Scale = "full"
)

// Scales lists the scales from the smallest.
var Scales = []Scale{Smoke, Quick, Full}

// Time budgets of the scales on one 2-core machine (issue 15): a plan above its budget fails
// the studies' unit tests.
const (
	SmokeBudget = 5 * time.Minute
	QuickBudget = 30 * time.Minute
)

// ParseScale parses "smoke", "quick" or "full"; the error names the bad value and the accepted ones.
func ParseScale(s string) (Scale, error) {
	if slices.Contains(Scales, Scale(s)) {
		return Scale(s), nil
	}
	return "", fmt.Errorf("bad scale %q: accepted smoke, quick, full", s)
}

// Study is one published study: what to run at each scale, what was published, and how each
// published finding is judged from our records.
type Study struct {
	// Name is the study's CLI name, e.g. "carlucci2015".
	Name string
	// Title names the study for people, e.g. "Carlucci et al., ACM SAC 2015".
	Title string
	// Citation is the full reference.
	Citation string
	// Option is the `pltlab reproduce` flag that selects this variant of a study, e.g.
	// "--calibrate" ("" for the study itself).
	Option string
	// DefaultScale is the scale `pltlab reproduce NAME` runs without --scale.
	DefaultScale Scale
	// plan returns the study's plan at a scale on a host (Plan, PlanOn).
	plan func(Scale, Host) Plan
	// References are the published values compared with ours, each with its source.
	References []analysis.Reference
	// Findings are the published findings, in the order of the findings table.
	Findings []Finding
	// Sections builds the report's sections (after the findings table) from the evidence.
	Sections func(*Support) []Section
	// Differences lists what differs between the published testbed and ours, from the records.
	Differences func(*Support) []string
	// Console, when set, prints the study's headline table to the terminal after a run (the
	// findings table follows it).
	Console func(io.Writer, *Support) error
}

// Part is one experiment of a plan: a matrix of page loads run with one server configuration
// (TCP congestion control, TLS version). Its records carry the experiment name
// PartExperiment(study, part name), which is how the report finds them again.
type Part struct {
	// Name is the part's short name, e.g. "lossless" (a-z, 0-9, '-').
	Name string
	// Title is the part's report heading.
	Title string
	// Config is the part's experiment; Name is set by the runner.
	Config experiment.Config
}

// FlowPart is a set of bulk-flow runs of a plan (the flows package): each mix of flows (specs
// "PROTO[:CC]") shares Link for Duration, Runs times.
type FlowPart struct {
	// Name is the part's short name, e.g. "flows".
	Name string
	// Title is the part's report heading.
	Title string
	// Link is the LINK spec the flows share.
	Link string
	// Mixes are the flow mixes, each a list of flow specs such as ["h3", "h2:cubic"].
	Mixes [][]string
	// Duration is the length of every flow.
	Duration time.Duration
	// Runs is the number of runs of each mix.
	Runs int
	// H3Stack is the HTTP/3 stack serving the part's QUIC flows: "" (quic-go) or
	// server.StackNgtcp2, which takes each flow's controller from its spec ("h3:bbr").
	H3Stack string
	// Seed, when != 0, seeds the part's order and loss in place of the run's seed
	// (RunOptions.Seed): the flow runs `reproduce --decide` adds are new draws.
	Seed int64
}

// Plan is what a study runs at one scale.
type Plan struct {
	// Study and Scale name the plan.
	Study string
	Scale Scale
	// Parts are the page-load experiments, run one after another.
	Parts []Part
	// Flows are the bulk-flow runs.
	Flows []FlowPart
	// Custom is what is neither page loads nor flow mixes (a study's own schedule of bulk
	// runs, e.g. host-stack settings); nil for most studies.
	Custom *CustomPart
	// Options are the run options applied to the plan (Apply): the Runs and Seed every count,
	// estimate, shard and run of the plan reads. The zero value is the scale's own plan.
	Options RunOptions
	// ScaledDown says, item by item, what this scale leaves out of the published grid.
	ScaledDown []string
	// NotRun names what the plan cannot include on this build, scale or host, and why.
	NotRun []string
	// Host is the machine the plan was made for (PlanOn); the zero value, a host that has
	// everything, for the plan a report reads records against (Plan).
	Host Host
}

// Host is what a machine lacks that some parts of a plan need, each an error saying why (nil:
// it has it). Plans do not look at the machine themselves: a run plans for ProbeHost(), which
// leaves out and names (Plan.NotRun) what it cannot run, while a report or view reads the
// records against the plan of a host that has everything (the zero Host), so results made on
// one machine are judged the same on another (a laptop without ngtcp2).
type Host struct {
	// Ngtcp2 says why the ngtcp2 HTTP/3 stack (gtlsserver, gtlsclient) cannot run.
	Ngtcp2 error
	// Exchange says why the interop exchange cases cannot run (Linux, root and tshark).
	Exchange error
}

// ProbeHost looks at this machine: what a run of any study can include here.
func ProbeHost() Host {
	return Host{Ngtcp2: flows.CheckStack(flows.StackNgtcp2), Exchange: exchangeMissing()}
}

// Plan is the study's plan at scale sc for a host that has everything: the same on every
// machine, the plan a report or view reads a study's records against.
func (s *Study) Plan(sc Scale) Plan { return s.plan(sc, Host{}) }

// PlanOn is the study's plan at scale sc on host h: what h cannot run is left out and named
// in NotRun, and h is kept in the plan (Plan.Host) for the findings' judges.
func (s *Study) PlanOn(sc Scale, h Host) Plan {
	p := s.plan(sc, h)
	p.Host = h
	return p
}

// CustomPart is a study's own schedule of bulk runs: Reps repetitions of Arms runs (every arm on
// every path), each costed at RunCost by the cost model. Run makes them, writing every record to
// w; reps is Reps as applied (Plan.Apply: --runs replaces it). Its Units (highway2023: one per
// path) are the pieces a shard runs whole; a schedule without Units is not shardable.
type CustomPart struct {
	// Reps is the number of repetitions of every arm; Arms the runs of one repetition.
	Reps, Arms int
	// RunCost is the cost model's time of one run (its duration plus the per-run overhead).
	RunCost time.Duration
	// Units are the schedule's independent pieces, in run order; their Arms add up to Arms.
	Units []CustomUnit
	// Run makes the schedule's units (indexes into Units; nil: all of them) with reps
	// repetitions, skipping the runs o.Resume holds.
	Run func(ctx context.Context, reps int, units []int, o RunOptions, w *result.Writer) error
	// Keys lists the runs of the schedule with reps repetitions, one key each, in run order;
	// KeyOf is the key of a record of such a run ("" for any other line). Complete and a resume
	// read them.
	Keys  func(reps int) []string
	KeyOf func(r *result.Record) string
	// UnitOf, when set, is the name of the unit (CustomUnit.Name) a record of the schedule
	// belongs to ("" for any other line), for units that share an experiment (evolution's
	// endpoints); nil: a unit's lines are those of its Experiment (highway2023's paths).
	UnitOf func(r *result.Record) string
	// Note, when set, says what reps repetitions run against the paper (the report's first
	// "scaled down" line, from the repetitions as applied or as recorded).
	Note func(reps int) string
	// Noun, when set, names one run of the schedule where the announcement and the report
	// count them apart from the bulk-flow runs ("interop case run": evolution's runs are
	// interop cases); "": they are bulk-flow runs and counted with them.
	Noun string
}

// countRuns ends the announcement's and the report's count of a plan's runs with its flow
// runs (flows, of which custom are the Custom schedule's): sep and "N flow runs" (the word
// flowWord), or, for a schedule with a Noun, ", N flow runs and M interop case run(s)".
func (c *CustomPart) countRuns(flows, custom int, flowWord, sep string) string {
	if c == nil || c.Noun == "" {
		return fmt.Sprintf("%s%d %s", sep, flows, flowWord)
	}
	return fmt.Sprintf(", %d %s and %d %s(s)", flows-custom, flowWord, custom, c.Noun)
}

// CustomUnit is one independent piece of a Custom schedule (highway2023: the arms of one path),
// which one shard runs whole.
type CustomUnit struct {
	// Name names the unit among the shards' units (plan.CustomID + ":" + Name).
	Name string
	// Experiment names the experiment of its records.
	Experiment string
	// Arms is its runs per repetition.
	Arms int
}

// made returns the keys of the schedule's runs recs hold (plan.Made by KeyOf): what a resume
// skips and Complete counts.
func (c *CustomPart) made(recs []*result.Record) map[string]bool {
	return plan.Made(recs, keyed(c.KeyOf))
}

// keyed turns a key function that gives "" for a line of no run into plan.Made's form.
func keyed(keyOf func(*result.Record) string) func(*result.Record) (string, bool) {
	return func(r *result.Record) (string, bool) { k := keyOf(r); return k, k != "" }
}

// Runs returns the number of bulk runs of the schedule: Reps x Arms.
func (c *CustomPart) Runs() int { return c.Reps * c.Arms }

// Estimate returns the cost model's time of the schedule: Runs x RunCost.
func (c *CustomPart) Estimate() time.Duration { return time.Duration(c.Runs()) * c.RunCost }

// Apply returns the plan a run with o makes, computed once: o.Runs (when > 0) replaces every
// page-load part's measured loads per cell and the Custom schedule's repetitions (warm-ups and
// flow parts keep theirs), o.Seed (when != 0) every part's seed; Options records o's Runs and
// Seed. Every count and estimate of the returned plan (Loads, FlowRuns, Estimate, Shards,
// Footprint) and every run of it read these, so what is announced is what runs. Applying the
// same options twice changes nothing.
func (p Plan) Apply(o RunOptions) Plan {
	out := p
	out.Parts = slices.Clone(p.Parts)
	for i := range out.Parts {
		if o.Runs > 0 {
			out.Parts[i].Config.Runs = o.Runs
		}
		if o.Seed != 0 {
			out.Parts[i].Config.Seed = o.Seed
		}
	}
	if p.Custom != nil && o.Runs > 0 {
		c := *p.Custom
		c.Reps = o.Runs
		out.Custom = &c
	}
	if o.Runs > 0 {
		out.Options.Runs = o.Runs
	}
	out.Options.Seed = cmp.Or(o.Seed, out.Options.Seed)
	return out
}

// PartExperiment is the experiment name of a part's records: "STUDY/PART".
func PartExperiment(study, part string) string { return study + "/" + part }

// Verdict is how a published finding fared here (docs/design.md, "Verdicts").
type Verdict string

// The verdicts of the findings table, the same words in the console, report.md, report.html and
// findings.json.
const (
	// Reproduced means the data show the published claim (the test significant at Alpha in the
	// claimed direction, or the published value inside our interval).
	Reproduced Verdict = "reproduced"
	// Contradicted means the data exclude the published claim or effect; the evidence names the
	// interval or test that excludes it.
	Contradicted Verdict = "contradicted"
	// Inconclusive means the data neither show nor exclude it; the evidence gives the smallest
	// effect this sample could have detected with analysis.Power and the loads per arm that would
	// decide it (Judgement.Needs), with their time from the cost model.
	Inconclusive Verdict = "inconclusive"
	// NotTestable means this stack cannot show it (gQUIC's FEC, phones).
	NotTestable Verdict = "not testable here"
	// NotRun means the finding is testable but this scale or build did not measure what it needs.
	NotRun Verdict = "not run"
)

// Verdicts lists the verdicts in the order the report defines them.
var Verdicts = []Verdict{Reproduced, Contradicted, Inconclusive, NotTestable, NotRun}

// Finding is one published finding and how it is judged.
type Finding struct {
	// ID is a short stable name, e.g. "lossy".
	ID string
	// Claim states the finding, quoted where possible.
	Claim string
	// Source is where it was published (section, table, figure).
	Source string
	// Criterion says what counts as reproducing it here.
	Criterion string
	// Judge decides the verdict from the evidence.
	Judge func(*Support) Judgement
}

// Judgement is one row of the findings table.
type Judgement struct {
	// Verdict is the outcome.
	Verdict Verdict
	// Evidence gives the numbers (medians or means, % differences, p-values).
	Evidence string
	// See names the report sections and plots that show it.
	See []string
	// Cells names the cells (part, link, arms) the verdict used.
	Cells []string
	// Needs, for an inconclusive verdict, are the cells' loads per arm that would decide it.
	Needs []Need
	// FlowNeeds, for an inconclusive verdict on bulk flows, are the flow runs per mix that
	// would decide it.
	FlowNeeds []FlowNeed
}

// notRun is the judgement of a finding whose data this run lacks.
func notRun(why string) Judgement { return Judgement{Verdict: NotRun, Evidence: why} }

// registry lists every study in --list order.
var registry = []*Study{carlucci(), kakhki(), muthuraj(), highway(), modquic(), evolution()}

// All returns every study in listing order.
func All() []*Study { return slices.Clone(registry) }

// Names returns the names of all studies.
func Names() []string {
	out := make([]string, len(registry))
	for i, s := range registry {
		out[i] = s.Name
	}
	return out
}

// Lookup returns the study called name; the error names it and the accepted names.
func Lookup(name string) (*Study, error) {
	for _, s := range registry {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown study %q: accepted %s", name, strings.Join(Names(), ", "))
}
