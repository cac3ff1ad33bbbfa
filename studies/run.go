package studies

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// RunOptions are the settings of one run of a plan that are not the study's.
type RunOptions struct {
	// Runs, when > 0, replaces every part's measured loads per cell (warm-ups unchanged).
	Runs int
	// Seed seeds every part's order and loss (experiment.DefaultSeed when 0).
	Seed int64
	// Chrome, Version, TempDir and SkipLinkCheck are passed to every experiment.Config.
	Chrome, Version, TempDir string
	SkipLinkCheck            bool
	// Resume holds the records of an interrupted run of the same plan (the output file's):
	// every part continues its schedule from them (experiment.Schedule.Resume).
	Resume []*result.Record
	// Configure, when set, is applied to every part's experiment last (the CLI sets its
	// per-load evidence options there: artifacts, visual metrics).
	Configure func(*experiment.Config)
	// Shard, when set, runs only that shard of the plan (Prepared.Shards): its parts' shares, each
	// part's lines carrying the shard, and its flow parts.
	Shard plan.Shard
	// Observer sees every record with Done and Total counted over the whole plan.
	Observer func(experiment.Progress)
	// Logger receives progress and diagnostics (slog.Default() when nil).
	Logger *slog.Logger
	// Schedule derives one part's schedule from its experiment (nil: experiment.NewSchedule):
	// Prepare and MergeShards call it once per part and read what it returns; a test counts
	// the derivations of a run through it.
	Schedule func(experiment.Config) (*experiment.Schedule, error)
	// Process makes the process-wide settings a study's own schedule switches arm by arm
	// (highway2023's quic-go GSO), which a library never makes itself; the CLI gives its own.
	// nil: arms that need one fail, naming it.
	Process ProcessSettings

	// units is the digest of the shard's units (plan.Digest), set by RunPrepared for the flow
	// lines' shard_units.
	units string
	// executeArms runs one path's arms of a flows study (nil: flows.ExecuteArms); the tests
	// replace it.
	executeArms func(context.Context, flows.ArmExperiment, func(*result.Record) error) error
}

// Configs returns the experiments of p.Apply(o), each named PartExperiment(study, part), with
// o's machine settings (Chrome, Version, TempDir, SkipLinkCheck, Logger, Configure).
func (p Plan) Configs(o RunOptions) []experiment.Config {
	p = p.Apply(o)
	out := make([]experiment.Config, len(p.Parts))
	for i, part := range p.Parts {
		c := part.Config
		c.Name = PartExperiment(p.Study, part.Name)
		o.machine(&c)
		out[i] = c
	}
	return out
}

// machine sets o's machine settings (Chrome, Version, TempDir, SkipLinkCheck, Logger,
// Configure) on c: none of them changes the schedule, the cost model or the config hash, so a
// plan derived without them runs with them.
func (o RunOptions) machine(c *experiment.Config) {
	c.Chrome, c.Version, c.TempDir, c.Logger = o.Chrome, o.Version, o.TempDir, o.Logger
	c.SkipLinkCheck = c.SkipLinkCheck || o.SkipLinkCheck
	if o.Configure != nil {
		o.Configure(c)
	}
}

// Prepared is a study's plan computed once for one run with its options: every part's
// experiment plan (its schedule, cost-model times, the shard's share and what is left after a
// resume) and the shard. Run, the announcement of a run and its estimate all read it.
type Prepared struct {
	// Plan and Options are the study's plan and the run's options.
	Plan    Plan
	Options RunOptions
	// Parts are the page-load parts' experiment plans, in Plan.Parts order; a part the shard
	// makes no load of has an empty Mine.
	Parts []*experiment.Schedule
	// Slice is the share of the shard Options.Shard names (Prepared.Shards), nil when not sharded.
	Slice *ShardSlice

	units  plan.Units // the plan's work as one list (Plan.units of Parts), built once
	places []place    // where each of units sits
}

// Prepare computes the plan once with o: every part's schedule (o.Schedule, experiment.NewSchedule
// when nil, with o's Runs and Seed) and their units as one list, cut to o.Shard's share when
// sharded (Prepared.Shards of that list), then each part set to continue from the records in
// o.Resume that carry its experiment name (experiment.Schedule.Resume; a part without any starts
// afresh). The error names a shard count the plan cannot be split into, a plan that is not
// shardable, or the part whose records do not match the plan.
func (p Plan) Prepare(o RunOptions) (*Prepared, error) {
	p = p.Apply(o)
	parts, err := p.partSchedules(o)
	if err != nil {
		return nil, err
	}
	us, at, err := p.units(parts)
	if err != nil {
		return nil, err
	}
	pr := &Prepared{Plan: p, Options: o, Parts: parts, units: us, places: at}
	if o.Shard.Count > 0 {
		if err := p.Shardable(); err != nil {
			return nil, err
		}
		shards, err := pr.Shards(o.Shard.Count)
		if err != nil {
			return nil, err
		}
		if o.Shard.Index < 0 || o.Shard.Index >= len(shards) {
			return nil, fmt.Errorf("bad shard %s: accepted I/N with 0 <= I < N", o.Shard)
		}
		pr.Slice = &shards[o.Shard.Index]
		study := p.Study + "/" + string(p.Scale)
		for i, pp := range parts {
			jobs := []int{}
			if share := pr.Slice.Share(i); share != nil {
				jobs = share.Jobs
			}
			if err := pp.Select(o.Shard, study, jobs, pr.Slice.Units); err != nil {
				return nil, fmt.Errorf("part %s: %w", p.Parts[i].Name, err)
			}
		}
	}
	if err := pr.Resume(o.Resume); err != nil {
		return nil, err
	}
	return pr, nil
}

// Resume sets every part of the prepared plan to continue from the records in recs that carry
// its experiment name (experiment.Schedule.Resume; a part without any starts afresh) and keeps recs
// as Options.Resume. The error names the part whose records do not match the plan.
func (pr *Prepared) Resume(recs []*result.Record) error {
	pr.Options.Resume = recs
	for i, pp := range pr.Parts {
		var mine []*result.Record
		for _, r := range recs {
			if r.Experiment == pp.Config.Name {
				mine = append(mine, r)
			}
		}
		if len(mine) == 0 {
			continue
		}
		if err := pp.Resume(mine); err != nil {
			return fmt.Errorf("part %s: %w", pr.Plan.Parts[i].Name, err)
		}
	}
	return nil
}

// Loads returns the number of page loads the run schedules: every part's loads in the shard,
// warm-ups included, made before a resume or not.
func (pr *Prepared) Loads() int {
	return pr.sum(func(pp *experiment.Schedule) int { return len(pp.Mine) })
}

// sum is the sum of n over the parts' schedules.
func (pr *Prepared) sum(n func(pp *experiment.Schedule) int) int {
	total := 0
	for _, pp := range pr.Parts {
		total += n(pp)
	}
	return total
}

// FlowRuns returns the number of bulk-flow runs the run schedules: the shard's flow parts' (every
// flow part when not sharded) and the Custom schedule's when the shard runs it.
func (pr *Prepared) FlowRuns() int {
	n := 0
	for i, f := range pr.Plan.Flows {
		if pr.Slice == nil || slices.Contains(pr.Slice.Flows, i) {
			n += len(f.Mixes) * f.Runs
		}
	}
	if c := pr.Plan.Custom; c != nil {
		n += c.Reps * pr.customArms()
	}
	return n
}

// Announce returns the line a run opens with: the study, scale, options, what it schedules
// (page loads in how many parts, flow runs), what a resume leaves, and the cost model's
// estimate, from the one prepared plan (so --runs, --seed and --shard change it as they change
// the run).
func (pr *Prepared) Announce() string {
	p := pr.Plan
	est := pr.Estimate()
	var b strings.Builder
	fmt.Fprintf(&b, "%s scale %s", p.Study, p.Scale)
	if p.Options.Runs > 0 {
		fmt.Fprintf(&b, " --runs %d", p.Options.Runs)
	}
	seed := p.Options.Seed
	seed = cmp.Or(seed, experiment.DefaultSeed)
	fmt.Fprintf(&b, " seed %d", seed)
	if pr.Slice != nil {
		fmt.Fprintf(&b, " shard %s", pr.Slice.Shard)
	}
	custom := 0
	if c := p.Custom; c != nil {
		custom = c.Reps * pr.customArms()
	}
	fmt.Fprintf(&b, ": %d page loads (%d measured) in %d part(s)%s", pr.Loads(), pr.Measured(), pr.partsRun(), p.Custom.countRuns(pr.FlowRuns(), custom, "flow runs", ", "))
	if left := pr.Left(); left < pr.Loads() {
		fmt.Fprintf(&b, ", %d page loads left after the resume", left)
	}
	fmt.Fprintf(&b, ", estimated %s on one 2-core machine", quantity.FormatEstimate(est))
	if pr.Slice != nil {
		fmt.Fprintf(&b, " (the whole study: %s)", quantity.FormatEstimate(plan.StartCost+pr.units.Total()))
	}
	return b.String()
}

// Measured returns the number of measured (not warm-up) page loads the run schedules.
func (pr *Prepared) Measured() int {
	return pr.sum(func(pp *experiment.Schedule) int {
		n := 0
		for _, i := range pp.Mine {
			if !pp.Jobs[i].Warmup {
				n++
			}
		}
		return n
	})
}

// partsRun is the number of page-load parts the run makes loads of.
func (pr *Prepared) partsRun() int {
	return pr.sum(func(pp *experiment.Schedule) int { return min(1, len(pp.Mine)) })
}

// Left returns the number of page loads the run still has to make: every part's loads in the
// shard not made before.
func (pr *Prepared) Left() int {
	return pr.sum(func(pp *experiment.Schedule) int { return len(pp.Left()) })
}

// Estimate returns the cost model's time of the run: the shard's estimate when sharded, the
// whole plan's otherwise (plan.StartCost and the Total of its one unit list).
func (pr *Prepared) Estimate() time.Duration {
	if pr.Slice != nil {
		return pr.Slice.Estimate
	}
	return plan.StartCost + pr.units.Total()
}

// Validate checks every part's experiment and specs, so bad input is refused before anything
// runs; errors name the part.
func (p Plan) Validate() error {
	var errs []error
	for i, c := range p.Configs(RunOptions{}) {
		if err := c.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("part %s: %w", p.Parts[i].Name, err))
		} else if err := experiment.CheckSpecs(c); err != nil {
			errs = append(errs, fmt.Errorf("part %s: %w", p.Parts[i].Name, err))
		}
	}
	return errors.Join(errs...)
}

// CheckTCPCC tries every TCP congestion control the plan sets (each part's server and cross
// flow, and the TCP flows of its flow parts) in this process's context (experiment.CheckTCPCC):
// the first refused value is returned in one line naming it, the part and what is accepted.
func (p Plan) CheckTCPCC() error {
	for i, c := range p.Configs(RunOptions{}) {
		if err := experiment.CheckTCPCC(c); err != nil {
			return fmt.Errorf("part %s: %w", p.Parts[i].Name, err)
		}
	}
	for _, fp := range p.Flows {
		for _, mix := range fp.Mixes {
			var specs []flows.Spec
			for _, s := range mix {
				if fs, err := flows.ParseSpec(s); err == nil {
					if err := flows.CheckCC(fs); err != nil {
						return fmt.Errorf("part %s: flow %s: %w", fp.Name, s, err)
					}
					specs = append(specs, fs)
				}
			}
			if _, err := flows.ResolveQUIC(specs, fp.H3Stack, ""); err != nil {
				return fmt.Errorf("part %s: %w", fp.Name, err)
			}
		}
		if fp.H3Stack != "" {
			if err := flows.CheckStack(fp.H3Stack); err != nil {
				return fmt.Errorf("part %s: %w", fp.Name, err)
			}
		}
	}
	return nil
}

// CheckDevices tries the CPU budget of every part that emulates a device (experiment.CheckDevice),
// so that a machine where the kernel refuses one is told before anything is set up, in one line
// naming the part.
func (p Plan) CheckDevices() error {
	for i, c := range p.Configs(RunOptions{}) {
		if err := experiment.CheckDevice(c); err != nil {
			return fmt.Errorf("part %s: %w", p.Parts[i].Name, err)
		}
	}
	return nil
}

// RunPrepared runs a prepared plan with its Options' machine settings: its parts' loads left in
// its shard one part after another (experiment.RunSchedule of the parts' schedules as
// prepared), then its flow parts (the shard's), then its Custom schedule, writing every record
// to w. A part that fails does not stop the next
// ones (the errors are joined), except an interrupt (ctx done), which returns at once.
func RunPrepared(ctx context.Context, pr *Prepared, w *result.Writer) (experiment.Summary, error) {
	start := time.Now()
	var sum experiment.Summary
	p, o, sh := pr.Plan, pr.Options, pr.Slice
	total := pr.Left()
	var errs []error
	if sh != nil {
		o.units = plan.Digest(sh.Units)
		if err := writeStudyPlanLine(pr, w); err != nil {
			return sum, err
		}
	}
	done := 0
	for _, pp := range pr.Parts {
		if ctx.Err() != nil {
			break
		}
		if pp.Config.Shard.Count > 0 && len(pp.Mine) == 0 {
			continue // another shard's part
		}
		offset := done
		o.machine(&pp.Config)
		if o.Observer != nil {
			pp.Config.Observer = func(prog experiment.Progress) {
				prog.Done, prog.Total = offset+prog.Done, total
				o.Observer(prog)
			}
		}
		s, err := experiment.RunSchedule(ctx, pp, w)
		done += len(pp.Left())
		sum = addSummary(sum, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", pp.Config.Name, err))
		}
	}
	if ctx.Err() == nil {
		for i, f := range p.Flows {
			if sh != nil && !slices.Contains(sh.Flows, i) {
				continue // another shard's flows
			}
			failed, err := runFlowPart(ctx, PartExperiment(p.Study, f.Name), f, o, w)
			sum.ArtifactsFailed += failed
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", PartExperiment(p.Study, f.Name), err))
			}
		}
	}
	if ctx.Err() == nil && p.Custom != nil && (sh == nil || len(sh.Custom) > 0) {
		if err := p.Custom.Run(ctx, p.Custom.Reps, pr.customUnits(), o, w); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Study, err))
		}
	}
	sum.Elapsed = time.Since(start)
	if ctx.Err() != nil {
		return sum, errors.Join(append(errs, ctx.Err())...)
	}
	return sum, errors.Join(errs...)
}

// addSummary adds the counts of b to a.
func addSummary(a, b experiment.Summary) experiment.Summary {
	a.Records += b.Records
	a.Valid += b.Valid
	a.TimedOut += b.TimedOut
	a.NetworkFailed += b.NetworkFailed
	a.Invalid += b.Invalid
	a.HarnessErrors += b.HarnessErrors
	a.Resumed += b.Resumed
	a.Scheduled += b.Scheduled
	a.Rechecked = append(a.Rechecked, b.Rechecked...)
	a.ArtifactsFailed += b.ArtifactsFailed
	return a
}

// PartLines describes the run part by part, one line each, in run order: every page-load part
// the run makes loads of (loads, measured loads, links, arms, loads per cell, the cost model's
// time), every flow part it runs (mixes, runs, duration, link) and the Custom schedule.
func (pr *Prepared) PartLines() []string {
	var out []string
	for i, pp := range pr.Parts {
		if len(pp.Mine) == 0 {
			continue
		}
		c := pp.Config
		links := map[int]bool{}
		measured := 0
		for _, j := range pp.Mine {
			links[pp.Jobs[j].Link] = true
			if !pp.Jobs[j].Warmup {
				measured++
			}
		}
		est, _ := pp.Estimate(pp.Left())
		out = append(out, fmt.Sprintf("part %s: %d page loads (%d measured, %d left), %d page(s) x %d link(s) x %d arm(s), %d measured loads per cell, estimated %s",
			pr.Plan.Parts[i].Name, len(pp.Mine), measured, len(pp.Left()), len(c.Pages), len(links), len(c.Arms), pp.Config.Runs, quantity.FormatEstimate(est)))
	}
	for i, f := range pr.Plan.Flows {
		if pr.Slice != nil && !slices.Contains(pr.Slice.Flows, i) {
			continue
		}
		est, _ := plan.EstimateFlows(len(f.Mixes)*f.Runs, f.Duration, f.Link)
		out = append(out, fmt.Sprintf("flows %s: %d mix(es) x %d run(s) of %s on %s, estimated %s", f.Name, len(f.Mixes), f.Runs, f.Duration, f.Link, quantity.FormatEstimate(est)))
	}
	if c := pr.Plan.Custom; c != nil && (pr.Slice == nil || len(pr.Slice.Custom) > 0) {
		arms := pr.customArms()
		out = append(out, fmt.Sprintf("custom: %d repetition(s) x %d run(s), estimated %s", c.Reps, arms, quantity.FormatEstimate(time.Duration(c.Reps*arms)*c.RunCost)))
	}
	return out
}

// StudyPlanLine returns the "plan" line a study's shard writes first: experiment STUDY, the
// shard, Plan.Study "STUDY/SCALE", Plan.Units the shard's units (plan.BlockID, plan.FlowID) as
// cut when it ran, Plan.Loads its page loads and Plan.Runs the runs per cell (--runs, 0 for the
// scale's), with ShardUnits their digest. A merge checks every shard's lines against this record,
// never against a cut recomputed with a later cost model. nil when the run is not sharded.
func (pr *Prepared) StudyPlanLine() *result.Record {
	if pr.Slice == nil {
		return nil
	}
	p := pr.Plan
	return &result.Record{Kind: result.KindPlan, Experiment: p.Study, Run: -1, Time: time.Now().UTC(),
		Shard: pr.Slice.Shard.String(), ShardUnits: plan.Digest(pr.Slice.Units),
		Plan: &result.PlanLine{Study: p.Study + "/" + string(p.Scale), Units: pr.Slice.Units, Loads: pr.Loads(), Runs: p.Options.Runs, Seed: p.Options.Seed}}
}

// writeStudyPlanLine writes pr's StudyPlanLine unless the records it resumes hold one of its
// shard already (a resumed shard wrote it when it began).
func writeStudyPlanLine(pr *Prepared, w *result.Writer) error {
	line := pr.StudyPlanLine()
	for _, r := range pr.Options.Resume {
		if r.Kind == result.KindPlan && r.Experiment == line.Experiment && r.Shard == line.Shard {
			return nil
		}
	}
	return w.Write(line)
}

// ProcessSettings are the process-wide settings a study's schedule switches for one arm; each
// call returns the function that restores the setting as it was. The CLI implements them (cmd's
// processSettings), so a library package changes no process-wide state, and the records say
// what each arm ran with (result.FlowStack: QUICGSO, QUICWarning).
type ProcessSettings interface {
	// DisableQUICGSO switches quic-go's UDP GSO off (QUIC_GO_DISABLE_GSO=true, read whenever
	// quic-go wraps a socket) until restore.
	DisableQUICGSO() (restore func())
	// CaptureLog copies what is logged through the standard log package (quic-go's warnings,
	// e.g. that it could not raise the UDP buffers) to w as well, until restore.
	CaptureLog(w io.Writer) (restore func())
}

// customUnits returns the units of the Custom schedule the run makes (indexes into
// Custom.Units): nil, all of them, when it is not sharded or the schedule has no units.
func (pr *Prepared) customUnits() []int {
	if pr.Slice == nil || slices.Contains(pr.Slice.Custom, CustomAll) {
		return nil
	}
	return pr.Slice.Custom
}

// customArms returns the Custom schedule's runs per repetition that the run makes (0 when a
// shard runs none of it).
func (pr *Prepared) customArms() int {
	c := pr.Plan.Custom
	if c == nil || pr.Slice != nil && len(pr.Slice.Custom) == 0 {
		return 0
	}
	units := pr.customUnits()
	if units == nil {
		return c.Arms
	}
	n := 0
	for _, i := range units {
		n += c.Units[i].Arms
	}
	return n
}
