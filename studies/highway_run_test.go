package studies

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// fakeLink is a link that carries nothing: the highway schedule's tests replace the runs.
type fakeLink struct{ spec linkspec.Spec }

func (fakeLink) Namespace() string              { return "fake" }
func (fakeLink) HostAddr() netip.Addr           { return netip.MustParseAddr("10.0.0.1") }
func (fakeLink) ClientAddr() netip.Addr         { return netip.MustParseAddr("10.0.0.2") }
func (l fakeLink) Spec() linkspec.Spec          { return l.spec }
func (fakeLink) TakeCounters() *result.Emulator { return nil }
func (fakeLink) Close() error                   { return nil }

// fakeHighway replaces the paths, checks and runs of highway2023 for the test: each run writes a
// valid flow line; it fails with errKilled after kill runs (0: never), as a killed process
// would stop. It returns the checks made, by path.
func fakeHighway(t *testing.T, kill int) map[string]int {
	t.Helper()
	checks := map[string]int{}
	oldOpen, oldCheck, oldArm, oldPause := openHighwayPath, checkHighwayPath, runHighwayArmFunc, highwayPause
	t.Cleanup(func() {
		openHighwayPath, checkHighwayPath, runHighwayArmFunc, highwayPause = oldOpen, oldCheck, oldArm, oldPause
	})
	highwayPause = 0
	openHighwayPath = func(ctx context.Context, p highwayPath, log *slog.Logger) (shaping.Link, *shaping.VethLink, error) {
		return fakeLink{}, nil, nil
	}
	checkHighwayPath = func(ctx context.Context, l shaping.Link, name, exp string, env *result.Env, log *slog.Logger, emit func(*result.Record) error) error {
		checks[name]++
		return emit(&result.Record{Kind: result.KindLinkCheck, Experiment: exp, Run: -1, Check: &result.LinkCheck{Pass: true}, Env: env})
	}
	made := 0
	runHighwayArmFunc = func(ctx context.Context, l shaping.Link, veth *shaping.VethLink, p highwayPath, a highwayArm, run int,
		dur time.Duration, o RunOptions, env *result.Env) (*result.Record, error) {
		if kill > 0 && made == kill {
			return nil, errKilled
		}
		made++
		return &result.Record{Kind: result.KindFlow, Experiment: PartExperiment(Highway2023, p.name), Run: run, Valid: true, Env: env,
			Flow: &result.Flow{Stack: &result.FlowStack{Path: p.key(), Arm: a.name}}}, nil
	}
	return checks
}

var errKilled = errors.New("killed")

// runPlan runs p with o into records.
func runPlan(t *testing.T, p Plan, o RunOptions) ([]*result.Record, error) {
	t.Helper()
	var buf bytes.Buffer
	_, err := Run(context.Background(), p, o, result.NewWriter(&buf))
	rd := result.NewReader(&buf, "run")
	var recs []*result.Record
	for {
		r, rerr := rd.Next()
		if rerr == io.EOF {
			return recs, err
		}
		if rerr != nil {
			t.Fatal(rerr)
		}
		recs = append(recs, r)
	}
}

// TestHighwayResumesAndChecks checks highway2023's schedule: its emulated path is self-checked
// before its runs (the check's line first), every record carries the full env and the schedule's
// length, a run killed part-way is not complete, and --resume makes exactly the runs left.
func TestHighwayResumesAndChecks(t *testing.T) {
	st, _ := Lookup(Highway2023)
	p := st.Plan(Quick).Apply(RunOptions{Runs: 2})
	want := p.Custom.Runs()
	checks := fakeHighway(t, 5)
	o := RunOptions{Version: "test", Seed: 1, Runs: 2, Process: processStub{}}
	first, err := runPlan(t, p, o)
	if !errors.Is(err, errKilled) {
		t.Fatalf("the killed run: %v", err)
	}
	if Complete(p, first) {
		t.Fatalf("5 of %d runs judged complete", want)
	}
	fakeHighway(t, 0)
	o.Resume = first
	rest, err := runPlan(t, p, o)
	if err != nil {
		t.Fatal(err)
	}
	all := append(first, rest...)
	if !Complete(p, all) {
		t.Fatal("the resumed run is not complete")
	}
	flows, seen := 0, map[string]bool{}
	for _, r := range all {
		if k := highwayKeyOf(r); k != "" {
			if seen[k] {
				t.Errorf("run %s made twice", k)
			}
			seen[k] = true
			flows++
			if r.Scheduled != want || r.Env == nil || r.Env.Kernel == "" || r.Env.Pltlab != "test" {
				t.Errorf("record %s: scheduled %d (want %d), env %+v", k, r.Scheduled, want, r.Env)
			}
		}
	}
	if flows != want {
		t.Errorf("%d runs made, want %d", flows, want)
	}
	if checks["rate=1gbit,rtt=1ms"] != 1 {
		t.Errorf("the emulated path was checked %d times, want once: %v", checks["rate=1gbit,rtt=1ms"], checks)
	}
	if len(checks) != 1 {
		t.Errorf("paths checked %v: the veth path has no link model to check", checks)
	}
	// A complete file of another --runs is judged by its own schedule.
	if !Complete(st.Plan(Quick), all) {
		t.Error("a complete --runs 2 file judged incomplete without --runs")
	}
}

// TestHighwayGSOArmNeedsTheSetting checks that the arm without GSO refuses to run without the
// process-wide setting (a library never sets it itself).
func TestHighwayGSOArmNeedsTheSetting(t *testing.T) {
	_, err := runHighwayArm(context.Background(), fakeLink{}, nil, highwayPath{name: "veth"}, highwayArm{name: "quic-no-gso", flow: "h3", noGSO: true}, 0, time.Second, RunOptions{}, &result.Env{})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("process-wide")) {
		t.Fatalf("no-GSO arm without the setting: %v", err)
	}
}

// processStub is a ProcessSettings that changes nothing.
type processStub struct{}

func (processStub) DisableQUICGSO() func()      { return func() {} }
func (processStub) CaptureLog(io.Writer) func() { return func() {} }

// TestHighwayLateRetry: a highway run during which the emulator was late is made once more by
// the one retry rule (result.Retry): the run leaves one line, the second attempt's,
// summarising the first; a run late twice leaves its line invalid, naming the lateness.
func TestHighwayLateRetry(t *testing.T) {
	st, _ := Lookup(Highway2023)
	p := st.Plan(Quick).Apply(RunOptions{Runs: 1})
	want := p.Custom.Runs()
	fakeHighway(t, 0)
	fake := runHighwayArmFunc
	calls := 0
	runHighwayArmFunc = func(ctx context.Context, l shaping.Link, veth *shaping.VethLink, hp highwayPath, a highwayArm, run int,
		dur time.Duration, o RunOptions, env *result.Env) (*result.Record, error) {
		calls++
		r, err := fake(ctx, l, veth, hp, a, run, dur, o, env)
		if calls <= 3 { // the first run late, its retry late, then the second run late once
			r.Emulator = &result.Emulator{Down: result.Direction{TimingErrMaxMs: 12}}
		}
		return r, err
	}
	recs, err := runPlan(t, p, RunOptions{Version: "test", Seed: 1, Runs: 1, Process: processStub{}})
	if err != nil {
		t.Fatal(err)
	}
	var runs []*result.Record
	for _, r := range recs {
		if highwayKeyOf(r) != "" {
			runs = append(runs, r)
		}
	}
	if len(runs) != want || calls != want+2 {
		t.Fatalf("%d lines from %d attempts, want %d lines from %d", len(runs), calls, want, want+2)
	}
	first, second := runs[0], runs[1]
	if first.Valid || first.Attempt != 2 || len(first.EarlierAttempts) != 1 ||
		!strings.HasPrefix(first.InvalidReason, "emulator late: a packet left 12.00 ms after its time (down), bound 5.00 ms (machine: CPU") {
		t.Errorf("late twice: valid %v, attempt %d, %d earlier, reason %q", first.Valid, first.Attempt, len(first.EarlierAttempts), first.InvalidReason)
	}
	if !second.Valid || second.Attempt != 2 || len(second.EarlierAttempts) != 1 || second.EarlierAttempts[0].LateMs != 12 {
		t.Errorf("late once: valid %v (%s), attempt %d, earlier %+v", second.Valid, second.InvalidReason, second.Attempt, second.EarlierAttempts)
	}
	for _, r := range runs[2:] {
		if !r.Valid || r.Attempt != 0 {
			t.Errorf("a run on time: valid %v, attempt %d", r.Valid, r.Attempt)
		}
	}
}
