package studies

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
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

// fakeHighway replaces the arms runner of highway2023 for the test (its retry and env are
// flows' tests'): an emulated path is checked first, then each run not done writes a valid
// flow line; it fails with errKilled after kill runs (0: never), as a killed process would
// stop. It sets o's arms runner and returns the checks made, by path.
func fakeHighway(o *RunOptions, kill int) map[string]int {
	checks := map[string]int{}
	made := 0
	o.executeArms = func(ctx context.Context, p flows.ArmExperiment, emit func(*result.Record) error) error {
		env := &result.Env{Kernel: "fake", Pltlab: p.Version}
		if p.Path != "veth" && !p.SkipLinkCheck {
			checks[p.Path]++
			if err := emit(&result.Record{Kind: result.KindLinkCheck, Experiment: p.Experiment, Run: -1, Check: &result.LinkCheck{Pass: true}, Env: env}); err != nil {
				return err
			}
		}
		for run := range p.Runs {
			for _, a := range p.Arms {
				if p.Done(a.Name, run) {
					continue
				}
				if kill > 0 && made == kill {
					return errKilled
				}
				made++
				if err := emit(&result.Record{Kind: result.KindFlow, Experiment: p.Experiment, Run: run, Time: time.Unix(int64(made), 0).UTC(), Valid: true, Env: env, Scheduled: p.Scheduled,
					Flow: &result.Flow{Stack: &result.FlowStack{Path: p.Path, Arm: a.Name}}}); err != nil {
					return err
				}
			}
		}
		return nil
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
	o := RunOptions{Version: "test", Seed: 1, Runs: 2, Process: processStub{}}
	checks := fakeHighway(&o, 5)
	first, err := runPlan(t, p, o)
	if !errors.Is(err, errKilled) {
		t.Fatalf("the killed run: %v", err)
	}
	if Complete(p, first) {
		t.Fatalf("5 of %d runs judged complete", want)
	}
	fakeHighway(&o, 0)
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
	_, err := highwayArm{name: "quic-no-gso", flow: "h3", noGSO: true}.setup(context.Background(), fakeLink{}, RunOptions{})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("process-wide")) {
		t.Fatalf("no-GSO arm without the setting: %v", err)
	}
}

// processStub is a ProcessSettings that changes nothing.
type processStub struct{}

func (processStub) DisableQUICGSO() func()      { return func() {} }
func (processStub) CaptureLog(io.Writer) func() { return func() {} }

// TestHighwayShardsMerge: the two shards of highway2023 at quick scale, one path each, merge
// into a complete run whose shard check owes nothing; a shard that stopped early owes its path's
// missing lines.
func TestHighwayShardsMerge(t *testing.T) {
	st, _ := Lookup(Highway2023)
	p := st.Plan(Quick)
	var srcs []plan.Source
	for k := range 2 {
		o := RunOptions{Version: "test", Seed: 1, Runs: 1, Process: processStub{}, Shard: plan.Shard{Index: k, Count: 2}}
		fakeHighway(&o, 0)
		recs, err := runPlan(t, p, o)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, plan.Source{Name: fmt.Sprintf("shard-%d.jsonl", k), Records: recs})
	}
	o := RunOptions{Seed: 1, Runs: 1}
	merged, check, err := MergeShards(p, o, srcs, plan.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(check.Missing) > 0 || len(check.Short) > 0 || !Complete(p.Apply(o), merged) {
		t.Errorf("merged shards: missing %v, short %v, complete %v", check.Missing, check.Short, Complete(p.Apply(o), merged))
	}
	short := srcs[1]
	short.Records = short.Records[:len(short.Records)-1]
	if _, check, err := MergeShards(p, o, []plan.Source{srcs[0], short}, plan.MergeOptions{}); err != nil || len(check.Short) != 1 || !strings.Contains(check.Short[0], "emu-1gbit") {
		t.Errorf("a shard short of a line: %v, %+v", err, check)
	}
}
