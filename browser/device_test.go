package browser

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

// TestDesktopSpeed: the slowdown is taken against the script's work alone. Beside a CPU hog on
// the budget's pinned CPU the desktop timing's wall time doubled (220 ms for 110 ms of the
// renderer's CPU time) and motog4 (4x) measured 2.03x: the CPU time is taken then. On a quiet
// CPU the wall time (the smaller: the CPU reading holds the call's own overhead) is kept, and
// without schedstat too.
func TestDesktopSpeed(t *testing.T) {
	for _, tc := range []struct{ wall, cpu, want float64 }{
		{220, 110, 110}, // shared CPU: the work alone
		{110, 111, 110}, // quiet: the call's overhead is not the script's
		{110, 0, 110},   // no schedstat
	} {
		if got := desktopSpeed(tc.wall, tc.cpu); got != tc.want {
			t.Errorf("desktopSpeed(%v, %v) = %v, want %v", tc.wall, tc.cpu, got, tc.want)
		}
	}
	// The device timing under the 4x budget on that shared CPU: 440 ms holds (4x), not 2x.
	if err := checkSlowdown(round2(440/desktopSpeed(220, 110)), 4); err != nil {
		t.Errorf("a 4x budget beside a hog: %v", err)
	}
	if err := checkSlowdown(round2(440/220.0), 4); err == nil || !strings.Contains(err.Error(), "2.00x slower") {
		t.Errorf("the wall-time ratio beside a hog: %v, want a miss at 2.00x", err)
	}
}

// TestScriptCPU: the tab's renderer is the one whose main thread grew most; a renderer that
// appeared or left between the readings is not counted.
func TestScriptCPU(t *testing.T) {
	before := map[int]time.Duration{10: time.Second, 11: 2 * time.Second, 12: 0}
	after := map[int]time.Duration{10: time.Second + 112*time.Millisecond, 11: 2*time.Second + 3*time.Millisecond, 13: time.Hour}
	if got := scriptCPU(before, after); got != 112 {
		t.Errorf("scriptCPU = %v ms, want 112", got)
	}
	if got := scriptCPU(nil, after); got != 0 {
		t.Errorf("scriptCPU with no first reading = %v, want 0", got)
	}
}

// TestSlowdownAttempts: a calibration whose slowdown holds stands at once; one that missed is
// timed once more and the second timing stands, held or not (the caller judges it); an error
// ends it at once. rec.CalibrationAttempt names the last attempt.
func TestSlowdownAttempts(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name      string
		slow      []float64 // device ms per attempt against 100 ms at desktop speed (4x expected)
		err       error     // returned by the first attempt
		wantCalls int
		wantSlow  float64
	}{
		{"held", []float64{400, 400}, nil, 1, 400},
		{"missed once", []float64{200, 410}, nil, 2, 410},
		{"missed twice", []float64{200, 250, 400}, nil, 2, 250},
		{"error", []float64{400}, boom, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &result.Device{ExpectedSlowdown: 4}
			calls := 0
			desk, slow, err := slowdownAttempts(rec, func() (float64, float64, error) {
				calls++
				if tc.err != nil {
					return 0, 0, tc.err
				}
				return 100, tc.slow[calls-1], nil
			}, slog.New(slog.DiscardHandler))
			if calls != tc.wantCalls || !errors.Is(err, tc.err) || (tc.err == nil) != (err == nil) {
				t.Fatalf("%d attempts, err %v; want %d, %v", calls, err, tc.wantCalls, tc.err)
			}
			if tc.err != nil {
				return
			}
			if desk != 100 || slow != tc.wantSlow || rec.CalibrationAttempt != calls {
				t.Errorf("desktop %v ms, device %v ms, attempt %d; want 100, %v, %d", desk, slow, rec.CalibrationAttempt, tc.wantSlow, calls)
			}
		})
	}
}
