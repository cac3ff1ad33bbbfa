package studies

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// ResultsFile is the records file of a reproduction's output directory.
const ResultsFile = "results.jsonl"

// JobMode is what a reproduction does with its output directory.
type JobMode int

// The modes of a reproduction.
const (
	// JobRun measures the plan into a fresh output directory.
	JobRun JobMode = iota
	// JobResume continues the run in the output directory, or re-judges it when it is complete
	// (Complete): no load, no link check.
	JobResume
	// JobDecide adds to the complete run in the output directory the loads and flow runs that
	// would decide its inconclusive findings (Decide), then re-judges it.
	JobDecide
)

// Job is one reproduction of a study: Study's applied Plan (Plan.Apply of the run's options) in
// Mode, measured with Options (RunOptions: Chrome, Version, Configure, Process, TempDir,
// SkipLinkCheck, Shard; Resume is set by Reproduce from the output's records), its records and
// reports in Dir (ResultsFile, WriteReport's files). Prepared, when set, is Plan as the caller
// derived it (Plan.Prepare with Options' Runs, Seed and Shard, before any resume): JobRun and
// JobResume run it, so that the plan is derived once from the command to the loads; JobDecide
// measures another plan (Decide's) and prepares that.
type Job struct {
	Study    *Study
	Plan     Plan
	Mode     JobMode
	Dir      string
	Options  RunOptions
	Prepared *Prepared
}

// Step is what a job turned out to do, decided from its mode and the records in its directory.
type Step int

// The steps of a job.
const (
	// StepMeasure measured (the plan, what was left of it, or the loads --decide adds), then
	// judged the records (unless sharded: one shard's records judge nothing alone).
	StepMeasure Step = iota
	// StepRejudge re-judged a complete run from its records, measuring nothing.
	StepRejudge
	// StepNothingToDecide found no inconclusive finding that more loads or runs decide.
	StepNothingToDecide
)

// Sink is where a job's records and messages go: the caller (cmd) owns files and the terminal.
type Sink struct {
	// Open returns the writer of the directory's records file, called once, just before the
	// first load (appendTo for JobResume and JobDecide), and its close.
	Open func(appendTo bool) (io.Writer, func() error, error)
	// Say prints one line of what the job does (no prefix, no newline); nil drops them.
	Say func(line string)
	// Progress, when set, gives the observer of every record for a run of left loads and runs,
	// and the function that ends its display.
	Progress func(left int) (observe func(experiment.Progress), finish func())
	// Check, when set, is called with the plan about to be measured before anything is opened
	// (a browser for its loads, say); its error refuses the job.
	Check func(measured Plan) error
}

// Outcome is what a job did.
type Outcome struct {
	// Step is what it did; Measured is the plan it measured (StepMeasure): the study's, or the
	// loads and flow runs --decide added. Skipped names the cells --decide could not settle.
	Step     Step
	Measured Plan
	Skipped  []string
	// Summary and Estimate are the run's summary and the cost model's estimate of it.
	Summary  experiment.Summary
	Estimate time.Duration
	// Judged is the plan the records were judged by (FromRecords: their own settings), Support
	// and Judgements the evaluation the report was written from; nil for a shard.
	Judged     Plan
	Support    *Support
	Judgements []Judgement
	// RunErr is the run's own error (a part that failed, an interrupt): the report of what was
	// measured is written all the same.
	RunErr error
}

// RefusedError is a job refused before anything is measured or written (the flags of another
// run given to --resume, records of another pltlab version or an unfinished run given to
// --decide): its text says what to do, and callers report it as bad input.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

func refused(format string, args ...any) error {
	return &RefusedError{Err: fmt.Errorf(format, args...)}
}

// Reproduce does job j: decides its step from its mode and the records in j.Dir (a complete
// run under JobResume is re-judged; JobDecide measures Decide's plan, or nothing), measures what
// the step needs (Prepare, the announcement through sink.Say, RunPrepared into sink.Open's
// writer), reads the records back and writes the study's report into j.Dir (Judge), unless the
// job is a shard. Errors: a RefusedError before anything is measured; the records file that
// cannot be read; analysis.ErrNoRecords when nothing was measured. The run's own failure is
// Outcome.RunErr, with the report of the rest written.
func Reproduce(ctx context.Context, j Job, sink Sink) (Outcome, error) {
	say := func(format string, args ...any) {
		if sink.Say != nil {
			sink.Say(fmt.Sprintf(format, args...))
		}
	}
	jsonl := filepath.Join(j.Dir, ResultsFile)
	out := Outcome{Measured: j.Plan}
	judge := j.Plan
	var old []*result.Record
	switch j.Mode {
	case JobResume:
		if _, err := os.Stat(jsonl); err == nil {
			recs, _, err := analysis.ReadFiles([]string{jsonl}, nil, nil)
			if err != nil {
				return out, fmt.Errorf("--resume: read %s: %w", jsonl, err)
			}
			if Complete(j.Plan, recs) {
				say("%s is complete (%d records): nothing to measure and no link to check; re-judging the findings from the records", jsonl, len(recs))
				out.Step = StepRejudge
				return out.judge(j, FromRecords(j.Plan, recs), recs, 0)
			}
			old = recs
		}
	case JobDecide:
		recs, _, err := analysis.ReadFiles([]string{jsonl}, nil, nil)
		if err != nil {
			return out, refused("--decide needs a complete reproduction in --out %s: %w", j.Dir, err)
		}
		dp, skipped, err := Decide(j.Study, j.Plan, recs, j.Options.Version)
		if err != nil {
			return out, refused("--decide: %s: %w", jsonl, err)
		}
		out.Skipped = skipped
		for _, s := range skipped {
			say("--decide leaves undecided: %s", s)
		}
		if len(dp.Parts) == 0 && len(dp.Flows) == 0 {
			say("--decide: no inconclusive finding that more loads or flow runs can decide")
			out.Step = StepNothingToDecide
			return out, nil
		}
		for _, p := range dp.Parts {
			c := p.Config
			say("--decide: %s: %s on %s, %d more loads per arm", p.Name, armNames(c.Arms), c.Links[0], c.Runs)
		}
		for _, f := range dp.Flows {
			ms := make([]string, len(f.Mixes))
			for i, m := range f.Mixes {
				ms[i] = strings.Join(m, "+")
			}
			say("--decide: %s: flows %s on %s, %d more runs of %s per mix", f.Name, strings.Join(ms, " "), f.Link, f.Runs, f.Duration)
		}
		out.Measured, old = dp, recs
	}
	prep, err := j.prepare(out.Measured, old) // the plan computed once: schedule, shard, what is left
	if err != nil {
		return out, refused("--resume %s: %w: give the flags of the interrupted reproduction", jsonl, err)
	}
	line := prep.Announce()
	if sink.Check != nil {
		if err := sink.Check(out.Measured); err != nil {
			return out, err
		}
	}
	w, closeOut, err := sink.Open(j.Mode != JobRun)
	if err != nil {
		return out, err
	}
	say("%s", line)
	finish := func() {}
	if sink.Progress != nil {
		prep.Options.Observer, finish = sink.Progress(prep.Left())
	}
	out.Summary, out.RunErr = RunPrepared(ctx, prep, result.NewWriter(w))
	finish()
	out.RunErr = errors.Join(out.RunErr, closeOut())
	out.Estimate = prep.Estimate()
	if j.Options.Shard.Count > 0 {
		return out, nil // one shard's records judge nothing alone: the report is the merge's
	}
	recs, _, err := analysis.ReadFiles([]string{jsonl}, nil, slog.Default())
	if err != nil {
		return out, err
	}
	est := out.Estimate // the run's plan is the one judged
	if j.Mode == JobDecide {
		judge, est = j.Plan, 0 // the study's plan, from the records: the decide run measured only its loads
	}
	return out.judge(j, FromRecords(judge, recs), recs, est)
}

// prepare returns the plan measured (p) as prepared for the run with j.Options, continuing
// from the records old: j.Prepared when the caller derived it (not for JobDecide, which
// measures another plan), else p.Prepare.
func (j Job) prepare(p Plan, old []*result.Record) (*Prepared, error) {
	o := j.Options
	o.Resume = old
	if j.Prepared == nil || j.Mode == JobDecide {
		return p.Prepare(o)
	}
	j.Prepared.Options = o
	return j.Prepared, j.Prepared.Resume(old)
}

// judge completes out with the evaluation of recs by plan p, written into j.Dir (Judge), whose
// estimate is est (0: derived from p).
func (out Outcome) judge(j Job, p Plan, recs []*result.Record, est time.Duration) (Outcome, error) {
	out.Judged = p
	ev, js, err := Judge(j.Dir, j.Study, p, recs, est)
	out.Support, out.Judgements = ev, js
	return out, err
}

// Judge evaluates recs with plan p (Evaluate) and writes study st's report into dir
// (WriteReport): the one report pipeline of reproduce, --resume, --decide and --merge. It
// returns analysis.ErrNoRecords when the records hold no page load a plan of loads needs.
// est is the cost model's time of p as its run prepared it (0: the report derives it from p).
func Judge(dir string, st *Study, p Plan, recs []*result.Record, est time.Duration) (*Support, []Judgement, error) {
	ev := Evaluate(st, p, recs)
	ev.Estimate = est
	if len(ev.Loads()) == 0 && (p.Loads() > 0 || len(recs) == 0) {
		return ev, nil, analysis.ErrNoRecords
	}
	js, err := WriteReport(dir, ev)
	return ev, js, err
}

// armNames is "h3 h2".
func armNames(arms []experiment.Arm) string {
	out := make([]string, len(arms))
	for i, a := range arms {
		out[i] = a.String()
	}
	return strings.Join(out, " ")
}
