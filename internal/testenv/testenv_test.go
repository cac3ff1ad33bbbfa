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
