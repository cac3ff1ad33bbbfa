package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// progressEvery is the least time between two plain progress lines.
const progressEvery = 10 * time.Second

// defaultCheckTime is what a link self-check is assumed to take until one was timed.
const defaultCheckTime = 10 * time.Second

// eta estimates the time left: the mean time per load so far (link checks excluded) times the
// loads left, plus the mean time of a link check (defaultCheckTime until one was timed) times
// the checks still to come.
type eta struct {
	start, checkStart time.Time
	checkTime         time.Duration // spent in link checks so far
	checks            int           // link checks timed
}

// note updates the estimator with p at time t.
func (e *eta) note(p experiment.Progress, t time.Time) {
	if e.start.IsZero() {
		e.start = t
	}
	switch {
	case p.Checking != "":
		e.checkStart = t
	case p.Record != nil && p.Record.Kind == result.KindLinkCheck && !e.checkStart.IsZero():
		e.checkTime += t.Sub(e.checkStart)
		e.checks++
		e.checkStart = time.Time{}
	}
}

// left returns the estimate at time t, or -1 before the first load.
func (e *eta) left(p experiment.Progress, t time.Time) time.Duration {
	if p.Done == 0 {
		return -1
	}
	perCheck := defaultCheckTime
	if e.checks > 0 {
		perCheck = e.checkTime / time.Duration(e.checks)
	}
	perLoad := (t.Sub(e.start) - e.checkTime) / time.Duration(p.Done)
	return perLoad*time.Duration(p.Total-p.Done) + perCheck*time.Duration(p.ChecksLeft)
}

// etaString formats an estimate: "1m20s", or "?" when there is none yet.
func etaString(d time.Duration) string {
	if d < 0 {
		return "?"
	}
	return d.Round(time.Second).String()
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newProgress returns an experiment observer that shows progress on w: on a terminal a bar with
// ETA and the running median PLT per arm; otherwise (a log file, a pipe) one plain line at the
// first load, then at most every progressEvery, and at the last, plus one line per link check.
// The returned finish func clears the bar.
func newProgress(total int, w io.Writer, terminal bool) (func(experiment.Progress), func()) {
	if !terminal {
		return plainProgress(total, w, time.Now), func() {}
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("loads"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(false), // its ETA ignores link checks: ours is in the description
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	var e eta
	observe := func(p experiment.Progress) {
		t := time.Now()
		e.note(p, t)
		if p.Checking != "" {
			bar.Describe("checking link " + p.Checking + " (about 10 s)")
		} else if p.Record != nil && p.Record.Kind == result.KindLinkCheck {
			bar.Describe("link " + linkCheckWord(p.Record))
		} else {
			bar.Describe(medianLine(p.Medians) + " ETA " + etaString(e.left(p, t)))
		}
		_ = bar.Set(p.Done)
	}
	return observe, func() { _ = bar.Finish(); _ = bar.Clear() }
}

// plainProgress prints progress lines without terminal control codes; now is the clock.
func plainProgress(total int, w io.Writer, now func() time.Time) func(experiment.Progress) {
	start := now()
	var last time.Time
	e := eta{start: start}
	return func(p experiment.Progress) {
		t := now()
		e.note(p, t)
		if p.Checking != "" {
			fmt.Fprintf(w, "pltlab: checking link %s (about 10 s)\n", p.Checking)
			return
		}
		if p.Record != nil && p.Record.Kind == result.KindLinkCheck {
			fmt.Fprintf(w, "pltlab: link %s: self-check %s\n", p.Record.Link.Spec, linkCheckWord(p.Record))
			return
		}
		if !last.IsZero() && t.Sub(last) < progressEvery && p.Done < total {
			return
		}
		last = t
		p.Total = total
		fmt.Fprintf(w, "pltlab: %d/%d loads, %s elapsed, ETA %s; median %s\n", p.Done, total,
			t.Sub(start).Round(time.Second), etaString(e.left(p, t)), medianLine(p.Medians))
	}
}

// linkCheckWord is "pass" or "FAIL" for a link-check record.
func linkCheckWord(r *result.Record) string {
	if r.Check != nil && r.Check.Pass {
		return "pass"
	}
	return "FAIL"
}

// medianLine formats running medians as "h1 2.03s h2 1.45s h3 1.14s".
func medianLine(ms []experiment.ArmMedian) string {
	var parts []string
	for _, m := range ms {
		if m.N == 0 {
			parts = append(parts, m.Arm.String()+" -")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.2fs", m.Arm.String(), m.MedianMs/1000))
	}
	return strings.Join(parts, " ")
}
