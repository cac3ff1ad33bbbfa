package flows

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/artifacts"
	"github.com/pltlab/pltlab/internal/cpushield"
	"github.com/pltlab/pltlab/internal/hostenv"
	"github.com/pltlab/pltlab/internal/hostload"
	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/selfcheck"
)

// MixExperiment is a bulk-flows experiment: every mix run Runs times through one link, in the order of
// Schedule. Execute is the one runner of such experiments ('pltlab flows' and the studies' flow
// parts both call it): it opens the link, self-checks it, keeps the artifacts through the
// artifacts lifecycle and writes one KindFlow record per flow and run.
type MixExperiment struct {
	// Link is the LINK spec (linkspec.Parse) as given; records carry it in Link.Spec.
	Link string
	// Mixes are the flow mixes; each Spec's Start and Duration apply (Duration defaults to
	// MixExperiment.Duration).
	Mixes [][]Spec
	// H3Stack is the HTTP/3 stack serving the QUIC flows: server.StackQUICGo (also "") or
	// server.StackNgtcp2, which runs one gtlsserver per controller the mixes name.
	H3Stack string
	// QUICCC is the controller of a QUIC flow given without one ("" for the stack's default,
	// ResolveQUIC).
	QUICCC string
	// Runs is the number of repetitions of every mix (at least 1).
	Runs int
	// Duration is the length of every flow that gives none (DefaultDuration when 0).
	Duration time.Duration
	// Bin is the width of the series' bins (DefaultBin when 0).
	Bin time.Duration
	// Seed seeds the schedule, the dial order and the link's random loss (when the spec has
	// no seed of its own).
	Seed int64
	// Experiment names the experiment in every record and its artifacts folder.
	Experiment string
	// Version is the pltlab version written into every record's env.
	Version string
	// Pause is the quiet time between runs so the next starts on an empty queue (DefaultPause
	// when 0).
	Pause time.Duration
	// Artifacts chooses the evidence kept per run (pcap and qlog only; For: all or invalid).
	Artifacts artifacts.Config
	// SkipLinkCheck skips the link's self-check (recorded as a KindLinkCheck line otherwise).
	SkipLinkCheck bool
	// Resume holds the records of an earlier, interrupted execution of the same plan: a run
	// whose every flow record is there is not run again. Execute refuses records of the
	// experiment made with other settings (checkResume).
	Resume []*result.Record
	// Logger receives diagnostics (slog.Default() when nil).
	Logger *slog.Logger
	// Progress, when set, is called after every run with the number done and scheduled, the
	// job and its records.
	Progress func(done, total int, j Job, recs []*result.Record)
	// seams are the steps the tests of the retry rules replace (nil: the real ones).
	seams seams
}

// DefaultPause is the quiet time between the runs of a MixExperiment.
const DefaultPause = time.Second

// maxFlowsStart bounds a flow's start offset (a year): anything later is a typo.
const maxFlowsStart = 24 * time.Hour * 365

func (p MixExperiment) withDefaults() MixExperiment {
	p.Duration = cmp.Or(p.Duration, DefaultDuration)
	p.Bin = cmp.Or(p.Bin, DefaultBin)
	p.Pause = cmp.Or(p.Pause, DefaultPause)
	p.Logger = cmp.Or(p.Logger, slog.Default())
	mixes := make([][]Spec, len(p.Mixes))
	for i, m := range p.Mixes {
		if r, err := ResolveQUIC(m, p.H3Stack, p.QUICCC); err == nil {
			mixes[i] = r
		} else {
			mixes[i] = m // Check refuses it
		}
	}
	p.Mixes = mixes
	return p
}

// length returns how long one run of mix lasts: its latest flow's start plus duration.
func (p MixExperiment) length(mix []Spec) time.Duration {
	var total time.Duration
	for _, f := range mix {
		d := f.Duration
		d = cmp.Or(d, p.Duration)
		total = max(total, f.Start+d)
	}
	return total
}

// Check refuses, before anything is set up, a plan that cannot run: no mix, a bad link spec,
// bad durations or bins, runs whose series would not fit in memory (CheckSize), or an
// artifacts filter flows cannot apply. Errors are one line naming the bad value and what is
// accepted.
func (p MixExperiment) Check() error {
	p = p.withDefaults()
	if _, err := linkspec.Parse(p.Link); err != nil {
		return fmt.Errorf("bad link %q: %w", p.Link, err)
	}
	if len(p.Mixes) == 0 {
		return errors.New("no flow mix given: accepted at least one mix of one flow")
	}
	if p.Runs < 1 {
		return fmt.Errorf("bad runs %d: accepted 1 or more", p.Runs)
	}
	if p.Duration < time.Second {
		return fmt.Errorf("bad duration %v: accepted 1s or more", p.Duration)
	}
	if p.Bin < time.Millisecond || p.Bin > p.Duration {
		return fmt.Errorf("bad bin %v: accepted 1ms up to the duration %v", p.Bin, p.Duration)
	}
	if err := server.CheckH3Stack(p.H3Stack, p.QUICCC); err != nil {
		return err
	}
	quic := false
	for _, mix := range p.Mixes {
		if len(mix) == 0 {
			return errors.New("empty flow mix: accepted at least one flow per mix")
		}
		if _, err := ResolveQUIC(mix, p.H3Stack, p.QUICCC); err != nil {
			return err
		}
		quic = quic || slices.ContainsFunc(mix, isQUICSpec)
		for _, f := range mix {
			if f.Start < 0 || f.Duration < 0 || f.Start > maxFlowsStart {
				return fmt.Errorf("flow %s: bad start %v or duration %v: accepted a start of 0 up to %v and a duration >= 0", f, f.Start, f.Duration, maxFlowsStart)
			}
		}
		if err := CheckSize(len(mix), p.length(mix), p.Bin); err != nil {
			return err
		}
	}
	if quic && p.H3Stack == server.StackNgtcp2 {
		if err := server.CheckNgtcp2(); err != nil {
			return err
		}
	}
	if p.Artifacts.Enabled() {
		for _, k := range p.Artifacts.Kinds {
			if k != artifacts.Pcap && k != artifacts.Qlog {
				return fmt.Errorf("bad artifact kind %s for flows: accepted pcap, qlog", k)
			}
		}
		if quic && p.H3Stack == server.StackNgtcp2 && slices.Contains(p.Artifacts.Kinds, artifacts.Qlog) {
			return errors.New("bad artifact kind qlog with --h3-stack ngtcp2: gtlsserver's qlogs are read for the flows' sender counters and removed; accepted --artifacts-kinds pcap")
		}
		if p.Artifacts.For == artifacts.KeepSlowest {
			return errors.New("bad artifacts filter slowest: flows have no PLT; accepted invalid, all")
		}
	}
	return nil
}

// Jobs returns the plan's schedule (Schedule(len(Mixes), Runs, Seed)).
func (p MixExperiment) Jobs() []Job { return Schedule(len(p.Mixes), p.Runs, p.Seed) }

// RunLength returns how long run j of the schedule lasts: its mix's latest flow start plus
// duration (the set-up, teardown and pause around it are the cost model's, in experiment).
func (p MixExperiment) RunLength(j Job) time.Duration { return p.withDefaults().length(p.Mixes[j.Mix]) }

// Describe returns the schedule, one line per run (for --dry-run).
func (p MixExperiment) Describe() string {
	p = p.withDefaults()
	var b strings.Builder
	jobs := p.Jobs()
	fmt.Fprintf(&b, "experiment %s: link %s, %d mixes x %d runs = %d runs of flows\n", p.Experiment, p.Link, len(p.Mixes), p.Runs, len(jobs))
	for i, j := range jobs {
		fmt.Fprintf(&b, "  run %d/%d: %s, repetition %d, %v\n", i+1, len(jobs), Mix(p.Mixes[j.Mix]), j.Run, p.length(p.Mixes[j.Mix]))
	}
	return b.String()
}

// done reports whether the resume records hold every flow record of job j.
func (p MixExperiment) done(j Job) bool {
	mix := Mix(p.Mixes[j.Mix])
	n := 0
	for _, r := range p.Resume {
		if r.IsFlow() && r.Experiment == p.Experiment && r.Run == j.Run && r.Mix == mix {
			n++
		}
	}
	return n >= len(p.Mixes[j.Mix])
}

// Summary counts what Execute did.
type Summary struct {
	// Runs counts the runs made (a run skipped by Resume is not counted); Flows their flow
	// records, Valid the valid ones, Starved the starved ones (result.Flow.Starved).
	Runs, Flows, Valid, Starved int
	// Resumed counts the runs skipped because MixExperiment.Resume holds them.
	Resumed int
	// Redone counts the runs made once more because the emulator was late during them (the
	// one retry rule, result.Retry: every attempt's records are invalid with the lateness as
	// their reason; the last attempt's are written, each summarising the earlier ones); Runs
	// counts each scheduled run once.
	Redone int
	// ArtifactsFailed counts the evidence files of the runs not written whole (every flow of a
	// run lists the same files; they are counted once per run).
	ArtifactsFailed int
}

// Execute runs the plan: it checks it, opens the link, self-checks a shaped link (a failed
// check is repeated once; both are emitted as KindLinkCheck records), starts the flows server
// with the artifacts' options, and runs the schedule, emitting every flow record (with the
// complete env: kernel, QUIC stack, UDP buffers) and keeping each run's artifacts whole or
// listed as failed. A run's artifacts problem is logged, not fatal. It fails on a bad plan, a
// link that cannot be set up or fails its check, resume records of other settings
// (checkResume), an emit error, or when ctx ends (ctx.Err()
// wrapped; the records of finished runs are emitted). The summary counts what was done, also
// when it fails.
func Execute(ctx context.Context, p MixExperiment, emit func(*result.Record) error) (Summary, error) {
	var sum Summary
	if err := p.Check(); err != nil {
		return sum, err
	}
	p = p.withDefaults()
	if err := p.checkResume(); err != nil {
		return sum, err
	}
	spec, _ := linkspec.Parse(p.Link)
	spec.Seed = cmp.Or(spec.Seed, p.Seed)
	rec, err := artifacts.NewRecorder(p.Artifacts, p.Experiment, nil, p.Logger)
	if err != nil {
		return sum, err
	}
	l, err := shaping.Open(ctx, spec, shaping.WithLogger(p.Logger))
	if err != nil {
		return sum, fmt.Errorf("open link: %w", err)
	}
	defer l.Close()
	env := hostenv.Local(p.Version, p.Seed)
	env.IdlePollCPUs = idlepoll.Active()
	env.ShieldCPU = cpushield.CPU()
	if err := p.checkLink(ctx, l, env, emit); err != nil {
		return sum, err
	}
	srv, err := NewServer(ctx, l, p.Logger, append(rec.ServerOptions(), p.stackOptions()...)...)
	if err != nil {
		return sum, err
	}
	defer srv.Close()
	info := srv.Info()
	env.UDPRcvBuf, env.UDPSndBuf = info.UDPRcvBuf, info.UDPSndBuf
	if info.H3Stack == server.StackNgtcp2 {
		env.QUIC = info.QUICStack // read from the running server
	}
	jobs := p.Jobs()
	for i, j := range jobs {
		if p.done(j) {
			sum.Resumed++
			continue
		}
		recs, err := p.runAttempts(ctx, i, j, l, srv, rec, env, &sum)
		if err != nil {
			return sum, err
		}
		for _, r := range recs {
			r.Link.Spec = p.Link
			sum.Flows++
			switch {
			case r.Valid:
				sum.Valid++
			case r.Starved:
				sum.Starved++
			}
			if err := emit(r); err != nil {
				return sum, err
			}
		}
		if p.Progress != nil {
			p.Progress(i+1, len(jobs), j, recs)
		}
		if i+1 < len(jobs) && !sleepUntil(ctx, time.Now().Add(p.Pause)) {
			return sum, ctx.Err()
		}
	}
	return sum, ctx.Err()
}

// runAttempts makes run i of the schedule (job j) on l and srv by the one retry rule
// (result.Retry: a run the emulator was late in is invalid and made once more, its flows'
// records summarising the earlier attempt), keeping each attempt's artifacts through rec, and
// counts it in sum. It returns the last attempt's records.
func (p MixExperiment) runAttempts(ctx context.Context, i int, j Job, l shaping.Link, srv *server.Server, rec *artifacts.Recorder, env *result.Env, sum *Summary) ([]*result.Record, error) {
	var recs []*result.Record
	var earlier [][]result.EarlierAttempt
	_, err := result.Retry(func(attempt int) (again bool, err error) {
		if _, err := rec.Begin(i, l); err != nil {
			return false, err
		}
		host := hostload.Start()
		recs, err = p.seams.runFlows(ctx, l, srv, Config{Flows: p.Mixes[j.Mix], Duration: p.Duration, Bin: p.Bin,
			Seed: p.Seed, Run: j.Run, Experiment: p.Experiment, Env: env, Logger: p.Logger, Settings: p.settings(p.Mixes[j.Mix])})
		busy, steal := host.End()
		rec.StopQlogs()
		cerr := srv.CloseConnections() // ends the qlogs of the run's connections
		late := result.MarkLate(hostload.Describe(busy, steal), recs...)
		keep := p.Artifacts.For != artifacts.KeepInvalid
		for _, r := range recs {
			keep = keep || !r.Valid
		}
		if aerr := rec.End(keep, recs); aerr != nil {
			p.Logger.Warn("artifacts", "run", i, "err", aerr)
		}
		if err != nil {
			return false, err
		}
		if cerr != nil {
			return false, cerr
		}
		if attempt == 1 {
			sum.Runs++
		}
		if len(recs) > 0 {
			sum.ArtifactsFailed += len(recs[0].ArtifactsFailed)
		}
		if attempt > 1 {
			sum.Redone++
			for k, r := range recs {
				r.Attempt, r.EarlierAttempts = attempt, earlier[k]
			}
		}
		if !late || attempt >= result.Attempts {
			return false, nil
		}
		p.Logger.Warn("emulator late during a flow run: made again", "run", j.Run, "mix", Mix(p.Mixes[j.Mix]),
			"late_ms", recs[0].Emulator.LateMs(), "bound_ms", recs[0].Emulator.LateBound())
		if earlier == nil {
			earlier = make([][]result.EarlierAttempt, len(recs))
		}
		for k, r := range recs {
			earlier[k] = append(earlier[k], result.Earlier(r, busy, steal))
		}
		return true, nil
	})
	return recs, err
}

// StackNgtcp2 is the ngtcp2 HTTP/3 stack (server.StackNgtcp2), for the packages above flows.
const StackNgtcp2 = server.StackNgtcp2

// CheckStack reports whether the HTTP/3 stack can run here: for StackNgtcp2 whether gtlsserver
// is on PATH (server.CheckNgtcp2, naming the package), nil for quic-go ("").
func CheckStack(stack string) error {
	if stack == StackNgtcp2 {
		return server.CheckNgtcp2()
	}
	return nil
}

// stackOptions are the server options of the plan's h3 stack: for ngtcp2 one process per
// controller the mixes name (server.WithNgtcp2BulkCCs).
func (p MixExperiment) stackOptions() []server.Option {
	if p.H3Stack != server.StackNgtcp2 {
		return nil
	}
	opts := []server.Option{server.WithH3Stack(p.H3Stack, p.QUICCC)}
	if ccs := QUICCCsOf(p.Mixes...); len(ccs) > 0 {
		opts = append(opts, server.WithNgtcp2BulkCCs(ccs...))
	}
	return opts
}

// seams are what the tests of the bulk-flow runners put in place of the real steps, carried by
// MixExperiment and ArmExperiment (unexported: only this package's tests set them); a nil field
// takes the real step.
type seams struct {
	// run makes one flow run for Execute (Run).
	run func(context.Context, shaping.Link, *server.Server, Config) ([]*result.Record, error)
	// check is the link self-check (selfcheck.Run) and busy how the repeat of a failed check
	// measures the machine's busy share while it waits for a quiet one (selfcheck's own).
	check func(context.Context, shaping.Link, selfcheck.Options) (result.LinkCheck, error)
	busy  func(ctx context.Context, window time.Duration) (busyPct, stealPct float64)
	// openPath opens an arms plan's path (openArmPath), runArm makes one run of an arm
	// (runArm) and armCheck self-checks an emulated path (checkLink with check and busy).
	openPath func(ctx context.Context, path string, log *slog.Logger) (shaping.Link, error)
	runArm   func(ctx context.Context, l shaping.Link, p ArmExperiment, a Arm, run int, env *result.Env) (*result.Record, error)
	armCheck func(ctx context.Context, l shaping.Link, name, experiment string, env *result.Env, log *slog.Logger, emit func(*result.Record) error) error
}

// runFlows is s.run or Run.
func (s seams) runFlows(ctx context.Context, l shaping.Link, srv *server.Server, c Config) ([]*result.Record, error) {
	if s.run != nil {
		return s.run(ctx, l, srv, c)
	}
	return Run(ctx, l, srv, c)
}

// checkLink self-checks p's link by the one retry rule unless p.SkipLinkCheck.
func (p MixExperiment) checkLink(ctx context.Context, l shaping.Link, env *result.Env, emit func(*result.Record) error) error {
	if p.SkipLinkCheck {
		return nil
	}
	return checkLink(ctx, l, p.Link, p.Experiment, env, p.Logger, emit, p.seams)
}

// checkLink self-checks a shaped link (one with a namespace; an unshaped link or a veth path is
// not checked) by the one retry rule (selfcheck.Retry: up to result.Attempts quick checks,
// the repeat after the machine settles), with the self-check and settle steps of s, and emits
// every check as a KindLinkCheck record of experiment, its Link.Spec the spec name as given; the
// error wraps selfcheck.ErrFailed when every attempt failed. It is the check of every bulk-flow
// runner (Execute and ExecuteArms).
func checkLink(ctx context.Context, l shaping.Link, name, experiment string, env *result.Env, log *slog.Logger, emit func(*result.Record) error, s seams) error {
	if l.Namespace() == "" || l.Spec().Shaper == shaping.ShaperVeth {
		return nil
	}
	log = cmp.Or(log, slog.Default())
	_, err := selfcheck.Retry(ctx, l, selfcheck.RetryOptions{
		Check: selfcheck.Options{Quick: true}, Run: s.check, Busy: s.busy, Name: name, Logger: log,
		Record: func(chk result.LinkCheck) error {
			// A repeat is named in every report from its attempt number (result.RecheckedLinks).
			r := &result.Record{Kind: result.KindLinkCheck, Experiment: experiment, Run: -1, Time: time.Now().UTC(),
				Link: l.Spec().Result(), Check: &chk, Env: env}
			r.Link.Spec = name
			return emit(r)
		}})
	return err
}
