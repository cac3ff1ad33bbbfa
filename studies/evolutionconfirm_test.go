package studies

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/matrix"
	"github.com/pltlab/pltlab/result"
)

// fakeCells is a cellRunner that runs nothing: each cell ("CLIENT>SERVER|CASE") answers the
// outcome given for it (a peer that does not open: fails), and every call is counted.
type fakeCells struct {
	outcomes map[string]interop.Outcome
	fails    map[string]error
	calls    []string
}

var _ cellRunner = (*fakeCells)(nil)

func (f *fakeCells) probe(_ context.Context, server string, c interop.Case) interop.Record {
	f.calls = append(f.calls, interop.ProbeClient+">"+server+"|"+c.Name)
	rec, _ := interopOf(evoLine(server, c.Name, 0, f.outcomes[interop.ProbeClient+">"+server+"|"+c.Name], 3879))
	return rec
}

func (f *fakeCells) exchange(_ context.Context, client, server string, c matrix.Exchange) (interop.Record, error) {
	k := client + ">" + server + "|" + c.Name
	f.calls = append(f.calls, k)
	if err := f.fails[k]; err != nil {
		return interop.Record{Case: c.Name, Client: client, Server: server, Outcome: interop.Error, Reason: "a peer did not open: " + err.Error()}, err
	}
	rec, _ := interopOf(evoExLine(client, server, c.Name, 0, f.outcomes[k]))
	return rec, nil
}

// confirmLines runs confirmRegressions over recs with runner f (reps 1, no goodput cells, every
// subject) and returns the lines it wrote, as runEvolution writes them, and its error.
func confirmLines(t *testing.T, recs []*result.Record, subjects []string, f *fakeCells) ([]*result.Record, error) {
	t.Helper()
	var out []*result.Record
	write := func(run int, rec interop.Record) error {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		out = append(out, &result.Record{Kind: result.KindInterop, Experiment: PartExperiment(Evolution, EvolutionPart), Run: run,
			Valid: rec.Outcome != interop.Error, Interop: b})
		return nil
	}
	runOf := func(client, server, c string) int { return confirmRun(nil, 1, client, server, c) }
	err := confirmRegressions(context.Background(), evolutionData(recs), subjects, f, runOf, slog.New(slog.DiscardHandler), write)
	return out, err
}

// TestEvolutionSuspects: a release's cell that failed in its one run after an earlier release
// passed it is a suspect, in a probe column and in an exchange column; a cell that failed in
// two runs (judged as it stands), a fail with no earlier pass, ngtcp2 and disagreeing runs are
// not.
func TestEvolutionSuspects(t *testing.T) {
	P, F, U := interop.Pass, interop.Fail, interop.Unsupported
	recs := join(
		evoRelease("v0.40.1", 0, []string{v1}, F, P, U), evoRelease("v0.48.2", 0, []string{v1}, F, F, U),
		evoRelease("v0.52.0", 0, []string{v1}, F, F, U), evoRelease("v0.52.0", 1, []string{v1}, F, F, U),
		evoRelease("v0.66.0", 0, []string{v1}, F, P, U), evoRelease("v0.66.0", 1, []string{v1}, F, F, U),
		[]*result.Record{evoAsClient("v0.40.1", "zerortt", 0, P), evoAsClient("v0.66.0", "zerortt", 0, F),
			evoAsServer("v0.40.1", "zerortt", 0, U), evoAsServer("v0.66.0", "zerortt", 0, F),
			evoLine(matrix.Ngtcp2, "amplification-limit", 0, F, 2400)})
	var got []string
	for _, s := range suspects(evolutionData(recs)) {
		client, server, c, probe := s.cell()
		got = append(got, strings.Join([]string{client, server, c, s.passed}, " "))
		if probe != (client == interop.ProbeClient) {
			t.Errorf("%v: probe %v", s, probe)
		}
	}
	want := []string{"pltlab-probe quic-go@v0.48.2 amplification-limit v0.40.1", "quic-go@v0.66.0 quic-go zerortt v0.40.1"}
	if !slices.Equal(got, want) {
		t.Errorf("suspects:\n got %q\nwant %q", got, want)
	}
	s := suspects(evolutionData(recs))[0]
	if w := s.why(); w != "a confirmation of a suspected regression: amplification-limit failed at v0.48.2 in its one run, after passing at v0.40.1" {
		t.Errorf("why: %s", w)
	}
}

// TestEvolutionConfirmRegressions: from one repetition, amplification-limit passes at v0.40.1
// and fails once at v0.48.2, and zerortt as client passes at v0.48.2 and fails once at v0.66.0;
// both are re-run (fake outcomes, nothing runs): the first re-run fails, so the regression is
// confirmed and reproduced; the second passes, so that one is named as not reproduced, never a
// regression nor silently a pass. The re-runs are lines outside the schedule (no key), run 1,
// saying what they confirm; resuming makes no second re-run.
func TestEvolutionConfirmRegressions(t *testing.T) {
	P, F, U := interop.Pass, interop.Fail, interop.Unsupported
	rel := func(v string, amp, zc interop.Outcome) []*result.Record {
		return append(evoRelease(v, 0, []string{v1}, P, amp, U), evoAsClient(v, "zerortt", 0, zc))
	}
	recs := join(rel("v0.40.1", P, P), rel("v0.48.2", F, P), rel("v0.66.0", P, F))
	if _, r, _ := judgeEvo(recs); r.Verdict != Inconclusive || !strings.Contains(r.Evidence, "seen in one run only, not confirmed by a re-run") {
		t.Fatalf("before the re-runs: %s: %s", r.Verdict, r.Evidence)
	}
	f := &fakeCells{outcomes: map[string]interop.Outcome{
		"pltlab-probe>quic-go@v0.48.2|amplification-limit": F,
		"quic-go@v0.66.0>quic-go|zerortt":                  P,
	}}
	lines, err := confirmLines(t, recs, nil, f)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"pltlab-probe>quic-go@v0.48.2|amplification-limit", "quic-go@v0.66.0>quic-go|zerortt"}; !slices.Equal(f.calls, want) {
		t.Fatalf("re-ran %q, want %q", f.calls, want)
	}
	for _, l := range lines {
		rec, _ := interopOf(l)
		if l.Run != 1 || !strings.HasPrefix(rec.Rerun, "a confirmation of a suspected regression: ") || evolutionKeyOf(l) != "" {
			t.Errorf("re-run line: run %d, rerun %q, key %q", l.Run, rec.Rerun, evolutionKeyOf(l))
		}
	}
	all := append(slices.Clone(recs), lines...)
	_, r, _ := judgeEvo(all)
	if r.Verdict != Reproduced || r.Evidence != "confirmed by a re-run: amplification-limit passes at v0.40.1 (1 run(s)) and fails at v0.48.2 (2 run(s)); "+
		"not confirmed, not reproduced on the re-run: zerortt as client passes at v0.48.2 and fails at v0.66.0 in 1 of 2 run(s), passing in the others" {
		t.Errorf("after the re-runs: %s: %s", r.Verdict, r.Evidence)
	}
	// The grid says which cell was re-run and how it came out.
	d := evolutionData(all)
	if c := evoCell(d.byServer["quic-go@v0.66.0"]["zerortt as client"]); !strings.HasPrefix(c, "fail/pass (re-run to confirm a regression: pass)") {
		t.Errorf("grid cell: %s", c)
	}
	// Resumed with the re-runs in the file: nothing is re-run again.
	f2 := &fakeCells{}
	if more, err := confirmLines(t, all, nil, f2); err != nil || len(more)+len(f2.calls) != 0 {
		t.Errorf("resumed: %d lines, calls %q, %v", len(more), f2.calls, err)
	}
}

// TestEvolutionConfirmNotReproduced: the only suspected regression's re-run passes: not
// confirmed, named, and the verdict is not reproduced; a re-run whose peer does not open is an
// error line (evidence of nothing), the fail stays seen once (inconclusive) and the error is
// returned; a shard re-runs only its own endpoints.
func TestEvolutionConfirmNotReproduced(t *testing.T) {
	P, F, U := interop.Pass, interop.Fail, interop.Unsupported
	recs := join(evoRelease("v0.40.1", 0, []string{v1}, P, P, U), evoRelease("v0.48.2", 0, []string{v1}, P, F, U),
		evoRelease("v0.66.0", 0, []string{v1}, P, P, U))
	f := &fakeCells{outcomes: map[string]interop.Outcome{"pltlab-probe>quic-go@v0.48.2|amplification-limit": P}}
	lines, err := confirmLines(t, recs, nil, f)
	if err != nil || len(lines) != 1 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	_, r, _ := judgeEvo(append(slices.Clone(recs), lines...))
	if r.Verdict == Reproduced || !strings.Contains(r.Evidence, "not confirmed, not reproduced on the re-run: amplification-limit passes at v0.40.1 and fails at v0.48.2 in 1 of 2 run(s)") {
		t.Errorf("not reproduced: %s: %s", r.Verdict, r.Evidence)
	}

	recs = join(evoRelease("v0.40.1", 0, []string{v1}, P, P, U), evoRelease("v0.48.2", 0, []string{v1}, P, P, U),
		evoRelease("v0.66.0", 0, []string{v1}, P, P, U), []*result.Record{evoAsServer("v0.40.1", "v2", 0, P), evoAsServer("v0.66.0", "v2", 0, F)})
	boom := errors.New("quic-go v0.66.0 does not build")
	f = &fakeCells{fails: map[string]error{"quic-go>quic-go@v0.66.0|v2": boom}}
	lines, err = confirmLines(t, recs, nil, f)
	if !errors.Is(err, boom) || len(lines) != 1 {
		t.Fatalf("peer not opened: %d lines, %v", len(lines), err)
	}
	if rec, _ := interopOf(lines[0]); rec.Outcome != interop.Error || rec.Rerun == "" {
		t.Errorf("peer not opened: %+v", rec)
	}
	if _, r, _ := judgeEvo(append(slices.Clone(recs), lines...)); r.Verdict != Inconclusive || !strings.Contains(r.Evidence, "seen in one run only, not confirmed by a re-run: v2 as server") {
		t.Errorf("peer not opened: %s: %s", r.Verdict, r.Evidence)
	}
	f = &fakeCells{}
	if lines, err := confirmLines(t, recs, []string{"quic-go@v0.40.1", "quic-go@v0.48.2"}, f); err != nil || len(lines) != 0 || len(f.calls) != 0 {
		t.Errorf("another shard's endpoint re-run: %d lines, %q, %v", len(lines), f.calls, err)
	}
}

// TestEvolutionConfirmRun: a re-run's run number is the cell's scheduled runs: the repetitions,
// or repetitions x runs per repetition for a goodput cell.
func TestEvolutionConfirmRun(t *testing.T) {
	cells := []exCell{{client: EvolutionFixed, server: "quic-go@v0.66.0", c: GoodputCase, k: 2, per: 3},
		{client: "quic-go@v0.66.0", server: EvolutionFixed, c: "v2"}}
	for _, tc := range []struct {
		name              string
		client, server, c string
		want              int
	}{
		{"goodput", EvolutionFixed, "quic-go@v0.66.0", GoodputCase, 6},
		{"exchange", "quic-go@v0.66.0", EvolutionFixed, "v2", 2},
		{"probe", interop.ProbeClient, "quic-go@v0.66.0", "stateless-reset", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := confirmRun(cells, 2, tc.client, tc.server, tc.c); got != tc.want {
				t.Errorf("run %d, want %d", got, tc.want)
			}
		})
	}
}
