package flows

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/artifacts"
	"github.com/pltlab/pltlab/internal/hostenv"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
)

// TestExecuteLoopback runs a plan of two mixes over the unshaped link (no root, about 2 s) and
// checks that the runs follow the seeded schedule, the records carry the complete env and the
// link spec, the h3 run keeps its qlog through the artifacts lifecycle, and a resumed execution
// skips the runs already recorded.
func TestExecuteLoopback(t *testing.T) {
	art := t.TempDir()
	p := MixExperiment{Link: "none", Mixes: [][]Spec{{{Protocol: "h2", CC: "reno"}}, {{Protocol: "h3", CC: "newreno"}}}, Runs: 1,
		Duration: time.Second, Seed: 3, Experiment: "ex", Version: "test", Pause: 10 * time.Millisecond,
		Artifacts: artifacts.Config{Dir: art, Kinds: []artifacts.Kind{artifacts.Qlog}}, Logger: slog.New(slog.DiscardHandler)}
	var recs []*result.Record
	sum, err := Execute(context.Background(), p, func(r *result.Record) error { recs = append(recs, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	jobs := p.Jobs()
	quic := hostenv.Local("", 0).QUIC // "" in a test binary without module build information
	if len(recs) != 2 || sum.Runs != 2 || sum.Flows != 2 || sum.Valid != 2 {
		t.Fatalf("%d records, summary %+v; want 2 valid flows in 2 runs", len(recs), sum)
	}
	for i, r := range recs {
		if r.Mix != Mix(p.Mixes[jobs[i].Mix]) {
			t.Errorf("record %d is mix %s, the schedule puts %s there", i, r.Mix, Mix(p.Mixes[jobs[i].Mix]))
		}
		if r.Env == nil || r.Env.Kernel == "" || r.Env.QUIC != quic || r.Env.Pltlab != "test" || r.Link.Spec != "none" {
			t.Errorf("record %d: env %+v, link %q", i, r.Env, r.Link.Spec)
		}
		if r.Protocol == "h3" && (len(r.Artifacts) != 1 || !strings.HasSuffix(r.Artifacts[0], ".sqlog")) {
			t.Errorf("h3 run lists %v, want its qlog", r.Artifacts)
		}
		if r.Protocol == "h3" {
			if _, err := os.Stat(filepath.Join(art, r.Artifacts[0])); err != nil {
				t.Error(err)
			}
		}
	}
	p.Resume = recs[:1]
	var again []*result.Record
	sum, err = Execute(context.Background(), p, func(r *result.Record) error { again = append(again, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if sum.Resumed != 1 || sum.Runs != 1 || len(again) != 1 || again[0].Mix == recs[0].Mix {
		t.Fatalf("resumed: summary %+v, %d records; want the other run only", sum, len(again))
	}
}

// TestPlanCheck checks the refusals made before any setup.
func TestPlanCheck(t *testing.T) {
	ok := MixExperiment{Link: "none", Mixes: [][]Spec{{{Protocol: "h1", CC: "cubic"}}}, Runs: 1}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(*MixExperiment){
		"1e6 hours": func(p *MixExperiment) { p.Duration = 1000000 * time.Hour },
		"no mix":    func(p *MixExperiment) { p.Mixes = nil },
		"bad link":  func(p *MixExperiment) { p.Link = "rate=fast" },
		"runs 0":    func(p *MixExperiment) { p.Runs = 0 },
		"slowest": func(p *MixExperiment) {
			p.Artifacts = artifacts.Config{Dir: "x", Kinds: []artifacts.Kind{artifacts.Pcap}, For: artifacts.KeepSlowest}
		},
		"har": func(p *MixExperiment) {
			p.Artifacts = artifacts.Config{Dir: "x", Kinds: []artifacts.Kind{artifacts.HAR}}
		},
	}
	for name, f := range bad {
		p := ok
		f(&p)
		if err := p.Check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	long := ok
	long.Mixes = append(long.Mixes, []Spec{{Protocol: "h1", CC: "cubic", Start: 5 * time.Second}})
	long.Duration, long.Runs = 10*time.Second, 2
	lengths := map[time.Duration]int{}
	for _, j := range long.Jobs() {
		lengths[long.RunLength(j)]++
	}
	if len(long.Jobs()) != 4 || lengths[10*time.Second] != 2 || lengths[15*time.Second] != 2 {
		t.Errorf("run lengths %v, want two of 10 s and two of 15 s", lengths)
	}
}

// TestExecuteLateRetry: a run during which the emulator was late (a packet 20 ms after its
// time, bound 5 ms) is made once more, by the one retry rule: the run leaves one line per flow,
// the second attempt's, summarising the first (its lateness, goodput and reason); a run late
// twice leaves its lines invalid, naming the lateness and the machine's load; a run on time is
// made once.
func TestExecuteLateRetry(t *testing.T) {
	late := &result.Emulator{Down: result.Direction{TimingErrMaxMs: 20}}
	for _, tc := range []struct {
		name      string
		lates     []bool
		calls     int
		valid     bool
		attempt   int
		redone    int
		wantEarly int
	}{
		{"on time", []bool{false}, 1, true, 0, 0, 0},
		{"late, then on time", []bool{true, false}, 2, true, 2, 1, 1},
		{"late twice", []bool{true, true}, 2, false, 2, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			run := func(_ context.Context, _ shaping.Link, _ *server.Server, c Config) ([]*result.Record, error) {
				e := &result.Emulator{}
				if tc.lates[calls] {
					e = late
				}
				calls++
				var out []*result.Record
				for i := range c.Flows {
					out = append(out, &result.Record{Kind: result.KindFlow, Experiment: c.Experiment, Run: c.Run, Valid: true, Emulator: e,
						Flow: &result.Flow{FlowIndex: i, Flows: len(c.Flows), Mix: Mix(c.Flows), GoodputBps: float64(calls) * 1e6}})
				}
				return out, nil
			}
			p := MixExperiment{Link: "none", Mixes: [][]Spec{{{Protocol: "h2", CC: "reno"}, {Protocol: "h3", CC: "newreno"}}}, Runs: 1,
				Duration: time.Second, Seed: 3, Experiment: "ex", Pause: time.Millisecond, Logger: slog.New(slog.DiscardHandler),
				seams: seams{run: run}}
			var recs []*result.Record
			sum, err := Execute(context.Background(), p, func(r *result.Record) error { recs = append(recs, r); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if calls != tc.calls || len(recs) != 2 || sum.Runs != 1 || sum.Redone != tc.redone || sum.Flows != 2 {
				t.Fatalf("%d attempts, %d lines, summary %+v; want %d attempts, 2 lines", calls, len(recs), sum, tc.calls)
			}
			for _, r := range recs {
				if r.Valid != tc.valid || r.Attempt != tc.attempt || len(r.EarlierAttempts) != tc.wantEarly {
					t.Errorf("flow %d: valid %v (%s), attempt %d, %d earlier; want valid %v, attempt %d, %d earlier",
						r.FlowIndex, r.Valid, r.InvalidReason, r.Attempt, len(r.EarlierAttempts), tc.valid, tc.attempt, tc.wantEarly)
				}
				if !tc.valid && !strings.HasPrefix(r.InvalidReason, "emulator late: a packet left 20.00 ms after its time (down), bound 5.00 ms (machine: CPU") {
					t.Errorf("flow %d: reason %q", r.FlowIndex, r.InvalidReason)
				}
				if tc.wantEarly > 0 {
					e := r.EarlierAttempts[0]
					if e.LateMs != 20 || e.GoodputBps != 1e6 || !strings.HasPrefix(e.InvalidReason, "emulator late:") {
						t.Errorf("flow %d: earlier attempt %+v", r.FlowIndex, e)
					}
				}
			}
		})
	}
}
