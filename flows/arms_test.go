package flows

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// armsLink is a link that carries nothing: the arms runner's tests replace the runs.
type armsLink struct{}

func (armsLink) Namespace() string              { return "fake" }
func (armsLink) HostAddr() netip.Addr           { return netip.MustParseAddr("10.0.0.1") }
func (armsLink) ClientAddr() netip.Addr         { return netip.MustParseAddr("10.0.0.2") }
func (armsLink) Spec() linkspec.Spec            { return linkspec.Spec{} }
func (armsLink) TakeCounters() *result.Emulator { return nil }
func (armsLink) Close() error                   { return nil }

// fakeArms replaces the path, its check and the runs of ExecuteArms: each run gives a valid
// flow record, late (emulator behind its bound) when late says so. It returns the checks made.
func fakeArms(t *testing.T, late func(call int) bool) (s seams, checks *int, calls *int) {
	t.Helper()
	checks, calls = new(int), new(int)
	s.openPath = func(context.Context, string, *slog.Logger) (shaping.Link, error) { return armsLink{}, nil }
	s.armCheck = func(_ context.Context, _ shaping.Link, _, exp string, env *result.Env, _ *slog.Logger, emit func(*result.Record) error) error {
		*checks++
		return emit(&result.Record{Kind: result.KindLinkCheck, Experiment: exp, Run: -1, Check: &result.LinkCheck{Pass: true}, Env: env})
	}
	s.runArm = func(_ context.Context, _ shaping.Link, p ArmExperiment, a Arm, run int, env *result.Env) (*result.Record, error) {
		*calls++
		r := &result.Record{Kind: result.KindFlow, Experiment: p.Experiment, Run: run, Valid: true, Env: env,
			Flow: &result.Flow{Stack: &result.FlowStack{Path: p.Path, Arm: a.Name}}}
		if late(*calls) {
			r.Emulator = &result.Emulator{Down: result.Direction{TimingErrMaxMs: 12}}
		}
		return r, nil
	}
	return s, checks, calls
}

// execArms runs p and returns its records.
func execArms(t *testing.T, p ArmExperiment) []*result.Record {
	t.Helper()
	var recs []*result.Record
	if err := ExecuteArms(context.Background(), p, func(r *result.Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return recs
}

// TestArmsLateRetry: a run during which the emulator was late is made once more by the one
// retry rule (result.Retry): the run leaves one line, the second attempt's, summarising the
// first; a run late twice leaves its line invalid, naming the lateness.
func TestArmsLateRetry(t *testing.T) {
	fake, _, calls := fakeArms(t, func(call int) bool { return call <= 3 }) // the first run late twice, the second once
	p := ArmExperiment{Path: shaping.ShaperVeth, Arms: []Arm{{Name: "a"}, {Name: "b"}, {Name: "c"}}, Runs: 1, Pause: 1, Version: "test", Scheduled: 3, seams: fake}
	recs := execArms(t, p)
	if len(recs) != 3 || *calls != 5 {
		t.Fatalf("%d lines from %d attempts, want 3 from 5", len(recs), *calls)
	}
	first, second := recs[0], recs[1]
	if first.Valid || first.Attempt != 2 || len(first.EarlierAttempts) != 1 ||
		!strings.HasPrefix(first.InvalidReason, "emulator late: a packet left 12.00 ms after its time (down), bound 5.00 ms (machine: CPU") {
		t.Errorf("late twice: valid %v, attempt %d, %d earlier, reason %q", first.Valid, first.Attempt, len(first.EarlierAttempts), first.InvalidReason)
	}
	if !second.Valid || second.Attempt != 2 || len(second.EarlierAttempts) != 1 || second.EarlierAttempts[0].LateMs != 12 {
		t.Errorf("late once: valid %v (%s), attempt %d, earlier %+v", second.Valid, second.InvalidReason, second.Attempt, second.EarlierAttempts)
	}
	if r := recs[2]; !r.Valid || r.Attempt != 0 {
		t.Errorf("a run on time: valid %v, attempt %d", r.Valid, r.Attempt)
	}
	for _, r := range recs {
		if r.Scheduled != 3 || r.Env == nil || r.Env.Kernel == "" || r.Env.Pltlab != "test" {
			t.Errorf("record %s: scheduled %d, env %+v", r.Stack.Arm, r.Scheduled, r.Env)
		}
	}
}

// TestArmsResumeCheckAndSkip: the emulated path is self-checked before its runs (the veth pair
// is not), a run Done is not made again, and an arm the host cannot run (Requires, asked at run
// time) leaves an invalid record per run naming why.
func TestArmsResumeCheckAndSkip(t *testing.T) {
	fake, checks, calls := fakeArms(t, func(int) bool { return false })
	missing := errors.New("no gtlsserver")
	arms := []Arm{{Name: "a"}, {Name: "ng", Requires: func() error { return missing }}}
	p := ArmExperiment{Path: "rate=1gbit,rtt=1ms", Arms: arms, Runs: 2, Pause: 1,
		Done: func(arm string, run int) bool { return arm == "a" && run == 0 }, seams: fake}
	recs := execArms(t, p)
	if *checks != 1 || recs[0].Kind != result.KindLinkCheck {
		t.Errorf("%d checks, first line %s: want the path checked once, first", *checks, recs[0].Kind)
	}
	if *calls != 1 || len(recs) != 4 {
		t.Fatalf("%d runs made, %d lines: want 1 run (a, run 1) and 4 lines", *calls, len(recs))
	}
	for _, r := range recs[1:] {
		if r.Stack.Arm == "ng" && (r.Valid || r.InvalidReason != ArmSkipped+"no gtlsserver") {
			t.Errorf("arm ng run %d: valid %v, reason %q", r.Run, r.Valid, r.InvalidReason)
		}
	}
	*checks = 0
	p.Path = shaping.ShaperVeth
	p.Done = func(string, int) bool { return true }
	if recs := execArms(t, p); len(recs) != 0 || *checks != 0 {
		t.Errorf("every run done: %d lines, %d checks, want none", len(recs), *checks)
	}
}

// TestArmSetupRefusal: an arm whose Setup refuses makes no run (no server is started) and the
// refusal is the run's error.
func TestArmSetupRefusal(t *testing.T) {
	refused := errors.New("needs a process-wide setting")
	a := Arm{Name: "x", Setup: func(context.Context, shaping.Link) (func(*result.Record), error) { return nil, refused }}
	if _, err := runArm(context.Background(), armsLink{}, ArmExperiment{}, a, 0, &result.Env{}); !errors.Is(err, refused) {
		t.Fatalf("runArm: %v, want the refusal", err)
	}
}
