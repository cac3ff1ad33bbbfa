package testenv

import (
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestHave: a tool on every PATH is found, a made-up one is not; PLTLAB_CHROME names Chromium.
func TestHave(t *testing.T) {
	if !Have("sh") {
		t.Error("sh not found")
	}
	if Have("pltlab-no-such-tool") {
		t.Error("a made-up tool found")
	}
	t.Setenv("PLTLAB_CHROME", "/nonexistent/chromium")
	if Have("chromium") {
		t.Error("chromium found at a PLTLAB_CHROME that does not exist")
	}
}

// TestInCI: CI=true is CI, unset or "false" is not.
func TestInCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "false": false, "0": false, "true": true, "1": true} {
		t.Setenv("CI", v)
		if InCI() != want {
			t.Errorf("CI=%q: InCI %v, want %v", v, InCI(), want)
		}
	}
}

// TestLost: only a load late on both attempts is excused, and more than one load and more than
// a quarter of the loads lost is too many.
func TestLost(t *testing.T) {
	lateEmu := &result.Emulator{Down: result.Direction{TimingErrMaxMs: 16}}
	late := &result.Record{Attempt: 2, Emulator: lateEmu, InvalidReason: "emulator late: a packet left 16.01 ms after its time"}
	once := &result.Record{Emulator: lateEmu, InvalidReason: "emulator late"}
	other := &result.Record{Attempt: 2, Emulator: &result.Emulator{}, InvalidReason: "object /a.jpg: missing"}
	var l Lost
	if !l.Excused(t, late) || l.Excused(t, once) || l.Excused(t, other) || l.Excused(t, &result.Record{Valid: true}) || l.n != 1 {
		t.Fatalf("excused the wrong records (count %d)", l.n)
	}
	for _, tc := range []struct {
		n, loads int
		want     bool
	}{{0, 0, false}, {1, 4, false}, {2, 8, false}, {3, 8, true}, {1, 1, false}, {1, 3, false}, {2, 4, true}} {
		if got := tooManyLost(tc.n, tc.loads); got != tc.want {
			t.Errorf("tooManyLost(%d, %d) = %v", tc.n, tc.loads, got)
		}
	}
}

// TestLostRuns: the flow lines of one run late on both attempts count as one run lost.
func TestLostRuns(t *testing.T) {
	lateEmu := &result.Emulator{Down: result.Direction{TimingErrMaxMs: 12}}
	flow := func(exp string, run int) *result.Record {
		return &result.Record{Experiment: exp, Run: run, Attempt: 2, Emulator: lateEmu, InvalidReason: "emulator late"}
	}
	var l LostRuns
	for _, r := range []*result.Record{flow("a", 0), flow("a", 0), flow("a", 1), flow("b", 1)} {
		if !l.Excused(t, r) {
			t.Fatalf("flow %s run %d not excused", r.Experiment, r.Run)
		}
	}
	if l.Excused(t, &result.Record{Experiment: "a", Run: 2, Emulator: lateEmu}) || len(l.runs) != 3 {
		t.Errorf("%d runs lost, want 3 (a 0, a 1, b 1; a once-late run not excused)", len(l.runs))
	}
	if !tooManyLost(len(l.runs), 4) || tooManyLost(1, 1) {
		t.Error("3 of 4 runs lost should be too many, 1 of 1 not")
	}
}
