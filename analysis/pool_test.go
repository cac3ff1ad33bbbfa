package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

// TestPooledRunsKeepTheirLosses: two runs of one experiment name pooled from two files; a
// harness_error of the later run is not hidden by the earlier run's load of the same schedule
// slot, while a resumed run's later load does make good its own earlier harness_error.
func TestPooledRunsKeepTheirLosses(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(r *result.Record, run int, d time.Duration) *result.Record {
		r.Run, r.Time = run, t0.Add(d)
		return r
	}
	lost := func(run int, d time.Duration) *result.Record {
		r := rec("h1", 0)
		r.Kind, r.Valid, r.Error = result.KindHarnessError, false, "browser would not launch"
		return at(r, run, d)
	}
	recs := []*result.Record{
		at(rec("h1", 100), 0, 0), at(rec("h1", 110), 1, time.Second), // the first run
		at(rec("h1", 120), 0, time.Hour), lost(1, time.Hour+time.Second), // the second run lost its load 1
	}
	g := groupOf(t, Analyze(recs, Options{}), "h1")
	if g.Lost != 1 || g.Runs != 3 {
		t.Fatalf("pooled runs: lost %d, runs %d; want the second run's loss counted (1) beside 3 loads", g.Lost, g.Runs)
	}
	resumed := []*result.Record{at(rec("h1", 100), 0, 0), lost(1, time.Second), at(rec("h1", 110), 1, time.Minute)}
	if g := groupOf(t, Analyze(resumed, Options{}), "h1"); g.Lost != 0 || g.Runs != 2 {
		t.Fatalf("resumed run: lost %d, runs %d; want the later load to make good the loss", g.Lost, g.Runs)
	}
}

// TestPooledNote: groups holding the loads of several experiments say so in the warnings.
func TestPooledNote(t *testing.T) {
	a, b := rec("h1", 100), rec("h1", 200)
	b.Experiment = "other"
	rep := Analyze([]*result.Record{a, b, rec("h2", 50)}, Options{})
	want := "POOLED: 1 of 2 groups hold the loads of 2 experiments whose settings match (e, other)"
	if !strings.Contains(strings.Join(rep.Warnings, "\n"), want) {
		t.Fatalf("warnings %q lack %q", rep.Warnings, want)
	}
	if g := groupOf(t, rep, "h1"); len(g.Experiments) != 2 || g.Runs != 2 {
		t.Fatalf("group h1: experiments %v, runs %d", g.Experiments, g.Runs)
	}
	if w := Analyze([]*result.Record{rec("h1", 1), rec("h2", 2)}, Options{}).Warnings; strings.Contains(strings.Join(w, ""), "POOLED") {
		t.Fatalf("one experiment said pooled: %q", w)
	}
}
