package selfcheck

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pltlab/pltlab/internal/hostload"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
)

// RetryOptions configures Retry.
type RetryOptions struct {
	// Check are the options of every check.
	Check Options
	// Run is the check; nil means Run (a seam for the tests of the retry rule).
	Run func(context.Context, shaping.Link, Options) (result.LinkCheck, error)
	// Before, when set, is called before each attempt (numbered from 1).
	Before func(attempt int)
	// Record receives every check, its Attempt set, before the next one starts (the caller
	// writes its link_check line); its error ends the checks and is returned.
	Record func(result.LinkCheck) error
	// Name names the link in the log line of a repeat (its LINK spec as given).
	Name string
	// Logger receives that line (slog.Default() when nil).
	Logger *slog.Logger
	// Now is the clock that times each check for result.LinkCheck.DurationMs (time.Now when
	// nil; a seam for the tests).
	Now func() time.Time
	// Busy measures the machine's busy and stolen shares over one window of SettleWindow, in
	// percent (hostload over a sleep when nil; a seam for the tests).
	Busy func(ctx context.Context, window time.Duration) (busyPct, stealPct float64)
}

// Settling before the repeat: a check that failed because the machine was busy (a process that
// had just ended, its browsers still exiting; a job's prolog) fails its repeat too when the
// repeat starts at once, so the repeat first waits for one window of SettleWindow in which the
// machine was at most SettleBusyPct busy and the hypervisor took at most SettleStealPct of its
// time, for SettleMax at most, and records the wait (result.LinkCheck.SettledMs). A host that
// steals is as bad for a check as a busy guest: on 2026-12-03 the development VM's host took
// 0-12 % of an idle guest's time from one half-second to the next and up to 36 % during checks,
// which then failed their idle RTT and lateness lines at once. The check itself is unchanged:
// a link outside tolerance fails its repeat on a quiet machine as on a busy one.
const (
	SettleWindow   = 500 * time.Millisecond
	SettleBusyPct  = 30.0
	SettleStealPct = 5.0 // analysis.HostStealBoundPct, above which report flags a load
	SettleMax      = 30 * time.Second
)

// settle waits for a quiet machine (see SettleWindow), returning how long it waited and the busy
// and stolen shares of its last window; it ends early when ctx is done.
func settle(ctx context.Context, busy func(context.Context, time.Duration) (float64, float64)) (waited time.Duration, lastBusy, lastSteal float64) {
	for waited < SettleMax && ctx.Err() == nil {
		lastBusy, lastSteal = busy(ctx, SettleWindow)
		waited += SettleWindow
		if lastBusy <= SettleBusyPct && lastSteal <= SettleStealPct {
			break
		}
	}
	return waited, lastBusy, lastSteal
}

// busyOver is the machine's busy and stolen shares over window (hostload), in percent.
func busyOver(ctx context.Context, window time.Duration) (float64, float64) {
	s := hostload.Start()
	select {
	case <-ctx.Done():
	case <-time.After(window):
	}
	return s.End()
}

// Retry is the one retry rule of the link self-check, used wherever a link is checked
// before it carries measurements (page loads, bulk flows): it checks l up to result.Attempts
// times (result.Retry), repeating a failed check once, because one late probe on a busy machine does not make
// a broken link while a link outside tolerance fails both. Every check is recorded with its
// attempt number (result.LinkCheck.Attempt; result.RecheckedLinks finds the repeats in the
// records). It returns, when a second check was made, the sentence for a run's summary:
// "passed on its second check (the first failed: ...)" or "failed both checks (the first
// failed: ...)", "" otherwise; and an error wrapping ErrFailed when every check failed,
// the error of a check that could not run (wrapped "link self-check: "), Record's error, or,
// after an interrupt, ctx's error joined with the failure.
func Retry(ctx context.Context, l shaping.Link, o RetryOptions) (string, error) {
	run := o.Run
	if run == nil {
		run = Run
	}
	log := o.Logger
	log = cmp.Or(log, slog.Default())
	now := o.Now
	if now == nil {
		now = time.Now
	}
	busy := o.Busy
	if busy == nil {
		busy = busyOver
	}
	var note string
	var first, failed error
	_, err := result.Retry(func(attempt int) (again bool, err error) {
		var settled time.Duration
		var settledBusy, settledSteal float64
		if attempt > 1 {
			settled, settledBusy, settledSteal = settle(ctx, busy)
		}
		if o.Before != nil {
			o.Before(attempt)
		}
		start := now()
		chk, err := run(ctx, l, o.Check)
		if err != nil {
			return false, fmt.Errorf("link self-check: %w", err)
		}
		chk.Attempt = attempt
		if attempt > 1 {
			chk.SettledMs, chk.SettledBusyPct, chk.SettledStealPct = quantity.Ms(settled), settledBusy, settledSteal
		}
		chk.DurationMs = quantity.Ms(now().Sub(start))
		if o.Record != nil {
			if err := o.Record(chk); err != nil {
				return false, err
			}
		}
		failed = Failure(chk)
		if attempt > 1 {
			outcome := "passed on its second check"
			if failed != nil {
				outcome = "failed both checks"
			}
			note = fmt.Sprintf("%s, made after %.1f s of waiting for a quiet machine (then %.0f %% busy, %.1f %% stolen) (the first failed: %v)",
				outcome, settled.Seconds(), settledBusy, settledSteal, first)
		}
		switch {
		case failed == nil:
			return false, nil
		case ctx.Err() != nil:
			return false, errors.Join(ctx.Err(), failed)
		case attempt >= result.Attempts:
			return false, failed
		}
		first = failed
		log.Warn("link self-check failed; checking once more", "link", o.Name, "err", failed)
		return true, nil
	})
	return note, err
}
