package matrix

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/pltlab/pltlab/interop"
)

// TestMeasureRetryRule: a goodput measurement the emulator was on time in stands at once; one
// it was late in is made once more and the second attempt's record keeps the first (attempt 2,
// Earlier); one late twice stands after two attempts; a record without a figure, or an attempt
// made after the context ended, stands as it is.
func TestMeasureRetryRule(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithCancel(live)
	cancel()
	for _, tc := range []struct {
		name        string
		ctx         context.Context
		late        []bool // per attempt; nil entries past the end are on time
		noFigure    bool
		wantCalls   int
		wantAttempt int
		wantEarlier int
	}{
		{"on time", live, []bool{false}, false, 1, 0, 0},
		{"late once", live, []bool{true, false}, false, 2, 2, 1},
		{"late twice", live, []bool{true, true, true}, false, 2, 2, 1},
		{"no figure", live, []bool{true}, true, 1, 0, 0},
		{"context ended", ended, []bool{true, true}, false, 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			once := func() interop.Record {
				calls++
				r := interop.Record{Time: fmt.Sprintf("t%d", calls)}
				if tc.noFigure {
					return r
				}
				g := &interop.Goodput{Mbps: float64(calls), LateBoundMS: 10, Valid: true}
				if calls <= len(tc.late) && tc.late[calls-1] {
					g.LateMS, g.Valid, g.InvalidReason = 25, false, "late"
				}
				r.Observed.Goodput = g
				return r
			}
			rec := measure(tc.ctx, once, slog.New(slog.DiscardHandler))
			if calls != tc.wantCalls {
				t.Fatalf("%d attempts, want %d", calls, tc.wantCalls)
			}
			if rec.Time != fmt.Sprintf("t%d", calls) {
				t.Errorf("record of attempt %q, want the last (%d)", rec.Time, calls)
			}
			g := rec.Observed.Goodput
			if tc.noFigure {
				if g != nil {
					t.Errorf("goodput %+v, want none", g)
				}
				return
			}
			if g.Attempt != tc.wantAttempt || len(g.Earlier) != tc.wantEarlier {
				t.Fatalf("attempt %d with %d earlier, want %d with %d", g.Attempt, len(g.Earlier), tc.wantAttempt, tc.wantEarlier)
			}
			if tc.wantEarlier > 0 {
				want := interop.GoodputAttempt{Time: "t1", Mbps: 1, InvalidReason: "late", LateMS: 25}
				if g.Earlier[0] != want {
					t.Errorf("earlier %+v, want %+v", g.Earlier[0], want)
				}
			}
		})
	}
}
