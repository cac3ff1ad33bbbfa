package studies

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/result"
)

// modquicRecs makes runs of one stack alone on a path of the modquic study: goodputs in Mbit/s
// and a constant queueing delay in ms over a 10 s flow (steady from 2 s).
func modquicRecs(path, spec string, queueMs float64, mbps ...float64) []*result.Record {
	var out []*result.Record
	for i, m := range mbps {
		q := make([]float64, 100)
		for k := range q {
			q[k] = queueMs + float64(i) // the runs differ by 1 ms
		}
		out = append(out, &result.Record{Kind: result.KindFlow, Experiment: PartExperiment(ModQUIC, path), Run: i, Valid: true,
			Protocol: spec[:2], Link: result.Link{RTTMs: 36},
			Flow: &result.Flow{Mix: spec, Flows: 1, GoodputBps: m * 1e6, BinMs: 100, SteadyFromS: 2, SteadyToS: 10, QueueDelayMs: q}})
	}
	return out
}

// TestModQUICImplied: the baselines' relations from the thesis' figures (the study file's
// derivation): QUIC/BBR 7.4 % above QUIC/CUBIC, 8.4 % lower delay, QUIC 12.0 % above TCP.
func TestModQUICImplied(t *testing.T) {
	for _, c := range []struct {
		got, want float64
	}{
		{impliedPct(ModQUICOverQUICBBRPct, ModQUICOverQUICCUBICPct), 7.42},
		{((1+ModQUICDelayVsCUBICPct/100)/(1+ModQUICDelayVsBBRPct/100) - 1) * 100, -8.37},
		{impliedPct(ModQUICOverQUICPct, ModQUICOverTCPPct), 11.99},
	} {
		if math.Abs(c.got-c.want) > 0.01 {
			t.Errorf("implied %.3f %%, want %.2f", c.got, c.want)
		}
	}
}

// TestModQUICJudges: each relation is reproduced when every path goes the claimed way
// significantly, contradicted when one goes the other way, inconclusive when the paths overlap
// (with the runs that would decide them), not run without runs, and not testable without
// gtlsserver.
func TestModQUICJudges(t *testing.T) {
	st, err := Lookup(ModQUIC)
	if err != nil {
		t.Fatal(err)
	}
	all := func(bbr, cubic, tcp []float64, bbrQ, cubicQ float64, lossyBBR []float64) []*result.Record {
		var recs []*result.Record
		for _, p := range []string{"limited", "sufficient", "lossy"} {
			b := bbr
			if p == "lossy" && lossyBBR != nil {
				b = lossyBBR
			}
			recs = append(recs, modquicRecs(p, "h3:bbr", bbrQ, b...)...)
			recs = append(recs, modquicRecs(p, "h3:cubic", cubicQ, cubic...)...)
			recs = append(recs, modquicRecs(p, "h1:cubic", 40, tcp...)...)
		}
		return recs
	}
	clear := all([]float64{9.6, 9.65, 9.55}, []float64{8.0, 8.1, 7.9}, []float64{7.0, 7.05, 6.95}, 10, 40, nil)
	js := verdicts(st, Quick, clear)
	for id, want := range map[string]Verdict{"bbr-throughput": Reproduced, "bbr-delay": Reproduced, "quic-tcp": Reproduced, "modquic": NotTestable} {
		if js[id].Verdict != want {
			t.Errorf("clear: %s: %s (%s), want %s", id, js[id].Verdict, js[id].Evidence, want)
		}
	}
	if e := js["bbr-throughput"].Evidence; !strings.Contains(e, "implied by the thesis: +7.4 %") || !strings.Contains(e, "limited: QUIC/BBR 9.60 Mbit/s, QUIC/CUBIC 8.00 Mbit/s, +20.0 %") {
		t.Errorf("evidence %q", e)
	}
	if e := js["bbr-delay"].Evidence; !strings.Contains(e, "QUIC/BBR 47.00 ms, QUIC/CUBIC 77.00 ms") {
		t.Errorf("delay evidence %q", e)
	}
	if len(js["quic-tcp"].Cells) != 3 {
		t.Errorf("cells %v, want one per path", js["quic-tcp"].Cells)
	}
	// BBR below CUBIC on the lossy path, and BBR's delay above CUBIC's everywhere.
	other := all([]float64{9.6, 9.65, 9.55}, []float64{8.0, 8.1, 7.9}, []float64{7.0, 7.05, 6.95}, 60, 40, []float64{5.0, 5.1, 4.9})
	js = verdicts(st, Quick, other)
	if js["bbr-throughput"].Verdict != Contradicted || js["bbr-delay"].Verdict != Contradicted {
		t.Errorf("the other way: %s (%s), %s", js["bbr-throughput"].Verdict, js["bbr-throughput"].Evidence, js["bbr-delay"].Verdict)
	}
	// Overlapping runs: inconclusive, saying what would decide.
	flat := all([]float64{8.0, 9.0, 7.0}, []float64{8.1, 7.0, 9.1}, []float64{7.0, 8.0, 6.0}, 40, 40, nil)
	if j := verdicts(st, Quick, flat)["bbr-throughput"]; j.Verdict != Inconclusive || !strings.Contains(j.Evidence, "decided by") {
		t.Errorf("overlapping: %s (%s), want inconclusive with the runs needed", j.Verdict, j.Evidence)
	}
	// ... and --decide makes those runs of the two stacks alone on each undecided path, or
	// names the relation no --decide can settle (BBR and CUBIC 0.2 % apart: 5530 runs a stack).
	e := Evaluate(st, FromRecords(st.Plan(Quick), flat), flat)
	dp, skipped := DecidePlan(e)
	if len(dp.Flows) != 3 {
		t.Fatalf("decide plan for the overlapping runs: flows %+v, skipped %q", dp.Flows, skipped)
	}
	for _, f := range dp.Flows {
		if !strings.Contains(f.Name, "/decide/") || f.Runs != 19 || f.H3Stack != flows.StackNgtcp2 ||
			!slices.EqualFunc(f.Mixes, [][]string{{"h3:cubic"}, {"h1:cubic"}}, slices.Equal) {
			t.Errorf("decide flow part %+v", f)
		}
	}
	if s := strings.Join(skipped, "\n"); !strings.Contains(s, "goodput of QUIC/BBR against QUIC/CUBIC: needs 5525 more runs per mix, above the 60") {
		t.Errorf("skipped: %q", skipped)
	}
	if j := verdicts(st, Quick, nil)["quic-tcp"]; j.Verdict != NotRun {
		t.Errorf("no runs: %s, want not run", j.Verdict)
	}
	noNgtcp2 := Host{Ngtcp2: errors.New("the ngtcp2 HTTP/3 stack needs gtlsserver")}
	if j := verdictsOn(st, Quick, noNgtcp2, clear)["bbr-throughput"]; j.Verdict != NotTestable {
		t.Errorf("without gtlsserver: %s, want not testable", j.Verdict)
	}
	if j := verdicts(st, Quick, clear)["bbr-throughput"]; j.Verdict == NotTestable {
		t.Errorf("records of a host with gtlsserver, judged on any machine: %s (%s)", j.Verdict, j.Evidence)
	}
	if p := st.PlanOn(Quick, noNgtcp2); len(p.Flows) != 0 || len(p.NotRun) != 1 {
		t.Errorf("plan without gtlsserver: %d flow parts, not run %v", len(p.Flows), p.NotRun)
	}
}

// TestIdentifyFlowsAsRun: modquic's smoke records made with --seed 7, and again as if made with
// --runs 2, match no scale exactly and are known as smoke by their flow parts (limited and
// sufficient; quick and full add the lossy path), not taken for the default scale, whose
// paths they never ran; a --seed run's records of one path only are no scale's (the default).
func TestIdentifyFlowsAsRun(t *testing.T) {
	recs := readFixture(t, "../view/testdata/modquic/results.jsonl").recs
	seeded := make([]*result.Record, len(recs))
	twice := slices.Clone(recs)
	for i, r := range recs {
		c := *r
		if r.Env != nil {
			env := *r.Env
			env.Seed = 7
			c.Env = &env
		}
		seeded[i] = &c
		if r.IsFlow() {
			d := *r
			d.Run++
			twice = append(twice, &d)
		}
	}
	onePath := slices.DeleteFunc(slices.Clone(seeded), func(r *result.Record) bool { return r.Experiment != PartExperiment(ModQUIC, "limited") })
	for _, tt := range []struct {
		name  string
		recs  []*result.Record
		scale Scale
		runs  int
	}{
		{"--seed 7", seeded, Smoke, 1},
		{"--runs 2", twice, Smoke, 2},
		{"one path", onePath, Quick, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, p, exact, ok := Identify(tt.recs)
			if !ok || st.Name != ModQUIC || exact || p.Scale != tt.scale {
				t.Fatalf("identified %v %s scale %s exact %v; want modquic at %s, not exact", ok, st.Name, p.Scale, exact, tt.scale)
			}
			if d := FromRecords(p, tt.recs); d.Flows[0].Runs != tt.runs {
				t.Errorf("plan as measured: %d runs of path %s, want %d", d.Flows[0].Runs, d.Flows[0].Name, tt.runs)
			}
		})
	}
}
