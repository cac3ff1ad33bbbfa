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

// TestBusyHostNote: loads made on a machine busier than HostBusyBoundPct, or with more than
// HostStealBoundPct stolen, are counted per protocol in one warning; none, no warning.
func TestBusyHostNote(t *testing.T) {
	mk := func(proto string, busy, steal float64) *result.Record {
		return &result.Record{Experiment: "e", Protocol: proto, Valid: true, PLTMs: 100, HostBusyPct: busy, HostStealPct: steal}
	}
	recs := []*result.Record{mk("h1", 30, 0), mk("h2", 95, 0), mk("h3", 40, 6), mk("h3", 40, 5), mk("h1", 90, 1)}
	w := busyHostNote(recs)
	if !strings.HasPrefix(w, "BUSY HOST: 2 of 5 loads") || !strings.Contains(w, "(h2 1, h3 1;") {
		t.Errorf("note %q", w)
	}
	if w := busyHostNote(recs[:1]); w != "" {
		t.Errorf("a quiet machine flagged: %q", w)
	}
}

// TestHostFreezeNote: loads whose lateness a host freeze explained are counted in one warning
// with the most taken off; none, no warning.
func TestHostFreezeNote(t *testing.T) {
	mk := func(freeze float64) *result.Record {
		r := &result.Record{Experiment: "e", Protocol: "h2", Valid: true, PLTMs: 100, Emulator: &result.Emulator{}}
		r.Emulator.Up.HostFreezeMs = freeze
		return r
	}
	recs := []*result.Record{mk(0), mk(7.9), mk(0), mk(12.34)}
	if w := hostFreezeNote(recs); !strings.HasPrefix(w, "HOST FROZE: in 2 of 4 loads") || !strings.Contains(w, "up to 12.3 ms") {
		t.Errorf("note %q", w)
	}
	if w := hostFreezeNote(recs[:1]); w != "" {
		t.Errorf("no freeze, yet %q", w)
	}
}

// TestEmulatorLateGroup: a load the emulator was late in is its own outcome (not valid, not
// in the PLT statistics), a load made again counts once, by its last attempt, and is counted
// as redone; the lateness column holds every attempt's largest lateness.
func TestEmulatorLateGroup(t *testing.T) {
	em := func(late float64) *result.Emulator {
		return &result.Emulator{Down: result.Direction{TimingErrMaxMs: late}, LateBoundMs: 5}
	}
	recs := []*result.Record{
		{Experiment: "e", Protocol: "h2", Valid: true, PLTMs: 1000, Emulator: em(0.3)},
		{Experiment: "e", Protocol: "h2", Valid: true, PLTMs: 1010, Emulator: em(0.4), Attempt: 2,
			EarlierAttempts: []result.EarlierAttempt{{PLTMs: 1070, LateMs: 58.45, InvalidReason: "emulator late: ..."}}},
		{Experiment: "e", Protocol: "h2", Valid: false, InvalidReason: "emulator late: ...", PLTMs: 1100, Emulator: em(12)},
	}
	gs := groupRecords(recs, PLT)
	if len(gs) != 1 {
		t.Fatalf("%d groups", len(gs))
	}
	g := gs[0]
	if g.Runs != 3 || g.Valid != 2 || g.EmulatorLate != 1 || g.Redone != 1 || g.InvalidTotal() != 0 {
		t.Errorf("runs %d valid %d late %d redone %d invalid %d, want 3 2 1 1 0", g.Runs, g.Valid, g.EmulatorLate, g.Redone, g.InvalidTotal())
	}
	if g.LateMaxMs != 58.45 || len(g.Lateness) != 4 || g.Median != 1005 {
		t.Errorf("lateness %v (max %v), median %v", g.Lateness, g.LateMaxMs, g.Median)
	}
}

// TestTraceContentsNotPooled: loads over one link spec whose trace file had different contents
// (result.Link.Inputs) are two groups, with a warning, never one pooled group (on 8436f4a loads
// of 303 and 688 ms made one h2 group, "POOLED ... whose settings match").
func TestTraceContentsNotPooled(t *testing.T) {
	spec := "down=trace:a.trace,up=10mbit,rtt=20ms"
	mk := func(exp, digest string, plt float64) *result.Record {
		return &result.Record{Experiment: exp, Protocol: "h2", Valid: true, PLTMs: plt,
			Link: result.Link{Spec: spec, Inputs: []result.InputFile{{Path: "a.trace", SHA256: digest}}}}
	}
	recs := []*result.Record{mk("a", "1111111111111111", 303), mk("a", "1111111111111111", 305), mk("b", "2222222222222222", 688), mk("b", "2222222222222222", 690)}
	rep := Analyze(recs, Options{})
	if len(rep.Groups) != 2 {
		t.Fatalf("%d groups, want 2", len(rep.Groups))
	}
	for _, g := range rep.Groups {
		if len(g.Experiments) != 1 {
			t.Errorf("group %s pools %v", g.Link, g.Experiments)
		}
	}
	found := false
	for _, w := range rep.Warnings {
		if strings.Contains(w, "POOLED") {
			t.Errorf("warning %q", w)
		}
		found = found || strings.Contains(w, "measured over 2 different contents of its input files")
	}
	if !found {
		t.Errorf("no warning on the two trace contents: %q", rep.Warnings)
	}
}

// TestReplayArchivesNotPooled: loads of one replayed page spec (har:FILE) whose archives
// differ (result.Replay.Digest; on 3e73eb5 one group, "POOLED ... whose settings match") are
// two groups with a warning; a harness_error line goes with its experiment's archive.
func TestReplayArchivesNotPooled(t *testing.T) {
	mk := func(exp, digest string, plt float64) *result.Record {
		return &result.Record{Experiment: exp, ConfigHash: "cfg-" + exp, Protocol: "h2", Valid: true, PLTMs: plt,
			Page: result.Page{Spec: "har:site.har"}, Replay: &result.Replay{Archive: "site.har", Digest: digest}}
	}
	lost := &result.Record{Experiment: "b", ConfigHash: "cfg-b", Protocol: "h2", Kind: result.KindHarnessError,
		Run: 9, Error: "browser would not launch", Page: result.Page{Spec: "har:site.har"}}
	recs := []*result.Record{mk("a", "aaaaaaaaaaaaaaaa1", 303), mk("a", "aaaaaaaaaaaaaaaa1", 305),
		mk("b", "bbbbbbbbbbbbbbbb2", 688), mk("b", "bbbbbbbbbbbbbbbb2", 690), lost}
	rep := Analyze(recs, Options{})
	if len(rep.Groups) != 2 {
		t.Fatalf("%d groups, want 2", len(rep.Groups))
	}
	for _, g := range rep.Groups {
		if len(g.Experiments) != 1 {
			t.Errorf("group %s pools %v", g.Page, g.Experiments)
		}
		if want := g.Experiments[0] == "b"; (g.Lost == 1) != want {
			t.Errorf("group %s: lost %d", g.Page, g.Lost)
		}
	}
	found := false
	for _, w := range rep.Warnings {
		if strings.Contains(w, "POOLED") {
			t.Errorf("warning %q", w)
		}
		found = found || strings.Contains(w, "page har:site.har replayed 2 different archives")
	}
	if !found {
		t.Errorf("no warning on the two archives: %q", rep.Warnings)
	}
}
