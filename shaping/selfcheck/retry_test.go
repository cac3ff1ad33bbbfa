package selfcheck

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
)

// TestRetryStops checks the paths of the retry rule that end it early: a check that cannot run
// is a harness error (never repeated), a record that cannot be written ends the checks with its
// error, and an interrupt after a failed check is not followed by a second one. The pass, fail
// then pass, and fail twice paths are tested through the runners (experiment TestLinkRecheck,
// flows TestFlowsLinkRecheck).
func TestRetryStops(t *testing.T) {
	bad := result.LinkCheck{Lines: []result.CheckLine{{Name: "idle RTT median", Pass: false}}}
	boom := errors.New("no socket")
	full := errors.New("disk full")
	for _, tc := range []struct {
		name   string
		check  func(context.CancelFunc) (result.LinkCheck, error)
		record error
		want   func(error) bool
		calls  int
	}{
		{"harness error", func(context.CancelFunc) (result.LinkCheck, error) { return result.LinkCheck{}, boom },
			nil, func(err error) bool {
				return errors.Is(err, boom) && strings.HasPrefix(err.Error(), "link self-check: ")
			}, 1},
		{"record fails", func(context.CancelFunc) (result.LinkCheck, error) { return bad, nil },
			full, func(err error) bool { return errors.Is(err, full) }, 1},
		{"interrupted", func(cancel context.CancelFunc) (result.LinkCheck, error) { cancel(); return bad, nil },
			nil, func(err error) bool { return errors.Is(err, context.Canceled) && errors.Is(err, ErrFailed) }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			calls, records := 0, 0
			note, err := Retry(ctx, nil, RetryOptions{
				Run: func(context.Context, shaping.Link, Options) (result.LinkCheck, error) {
					calls++
					return tc.check(cancel)
				},
				Record: func(c result.LinkCheck) error {
					records++
					if c.Attempt != records {
						t.Errorf("record %d has attempt %d", records, c.Attempt)
					}
					return tc.record
				}})
			if !tc.want(err) || calls != tc.calls || note != "" {
				t.Errorf("err %v, %d checks, note %q; want %d check and no note", err, calls, note, tc.calls)
			}
		})
	}
}

// TestRetryRecordsDuration checks that every recorded check carries how long it took, by the
// injected clock: the first check 4 s (it fails), the repeat 2.5 s.
func TestRetryRecordsDuration(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ticks := []time.Duration{0, 4 * time.Second, 10 * time.Second, 12500 * time.Millisecond}
	calls := 0
	now := func() time.Time { d := ticks[calls%len(ticks)]; calls++; return t0.Add(d) }
	attempt := 0
	bad := result.LinkCheck{Lines: []result.CheckLine{{Name: "idle RTT median", Pass: false}}}
	var got []float64
	_, err := Retry(context.Background(), nil, RetryOptions{
		Now: now,
		Run: func(context.Context, shaping.Link, Options) (result.LinkCheck, error) {
			attempt++
			if attempt == 1 {
				return bad, nil
			}
			return result.LinkCheck{Pass: true, Lines: []result.CheckLine{{Name: "idle RTT median", Pass: true}}}, nil
		},
		Record: func(c result.LinkCheck) error { got = append(got, c.DurationMs); return nil },
		Busy:   func(context.Context, time.Duration) (float64, float64) { return 0, 0 },
	})
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	if len(got) != 2 || got[0] != 4000 || got[1] != 2500 {
		t.Fatalf("recorded durations %v ms, want [4000 2500]", got)
	}
}

// TestRetrySettles: the repeat of a failed check waits for one quiet window (busy at most
// SettleBusyPct, stolen at most SettleStealPct) and records the wait; on a machine that stays busy it waits SettleMax and
// checks anyway; the first check never waits; the bounds of the repeat are the same (the same
// check function runs).
func TestRetrySettles(t *testing.T) {
	bad := result.LinkCheck{Lines: []result.CheckLine{{Name: "emulator release lateness (share late)", Pass: false}}}
	good := result.LinkCheck{Pass: true, Lines: []result.CheckLine{{Name: "emulator release lateness (share late)", Pass: true}}}
	for _, tc := range []struct {
		name     string
		busy     [][2]float64 // successive windows: busy, stolen
		wantMs   float64
		wantBusy float64
	}{
		{"quiet at once", [][2]float64{{10, 0}}, 500, 10},
		{"quiet after 3 busy windows", [][2]float64{{95, 0}, {80, 0}, {31, 0}, {30, 0}}, 2000, 30},
		{"quiet guest, stealing host, then calm", [][2]float64{{20, 12}, {25, 5.1}, {25, 5}}, 1500, 25},
		{"never quiet", [][2]float64{{99, 0}}, float64(SettleMax / time.Millisecond), 99},
		{"host never calm", [][2]float64{{10, 30}}, float64(SettleMax / time.Millisecond), 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			windows, attempt := 0, 0
			var recs []result.LinkCheck
			note, err := Retry(context.Background(), nil, RetryOptions{
				Run: func(context.Context, shaping.Link, Options) (result.LinkCheck, error) {
					attempt++
					if attempt == 1 {
						if windows != 0 {
							t.Error("the first check waited")
						}
						return bad, nil
					}
					return good, nil
				},
				Busy: func(_ context.Context, w time.Duration) (float64, float64) {
					if w != SettleWindow {
						t.Errorf("window %v", w)
					}
					b := tc.busy[min(windows, len(tc.busy)-1)]
					windows++
					return b[0], b[1]
				},
				Record: func(c result.LinkCheck) error { recs = append(recs, c); return nil },
			})
			if err != nil || len(recs) != 2 || recs[0].SettledMs != 0 || recs[1].SettledMs != tc.wantMs || recs[1].SettledBusyPct != tc.wantBusy {
				t.Fatalf("err %v, records %+v: want the repeat settled %v ms at %v %%", err, recs, tc.wantMs, tc.wantBusy)
			}
			if !strings.Contains(note, "passed on its second check, made after") {
				t.Errorf("note %q", note)
			}
		})
	}
}
