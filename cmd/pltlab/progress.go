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
)

// newProgress returns an experiment observer that draws a progress bar with ETA and the running
// median PLT per arm on w when w is a terminal, and does nothing otherwise. The returned finish
// func clears the bar.
func newProgress(w io.Writer, total int) (func(experiment.Progress), func()) {
	if !isTerminal(w) {
		return nil, func() {}
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("loads"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetWidth(24),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	observe := func(p experiment.Progress) {
		bar.Describe(medianLine(p.Medians))
		_ = bar.Set(p.Done)
	}
	return observe, func() { _ = bar.Finish(); _ = bar.Clear() }
}

// isTerminal reports whether w is a file that is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
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

// lazyFile is an io.Writer that creates its file on the first Write, so that a run that fails
// before its first record leaves no empty file behind.
type lazyFile struct {
	name string
	f    *os.File
}

func (l *lazyFile) Write(b []byte) (int, error) {
	if l.f == nil {
		f, err := os.OpenFile(l.name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return 0, err
		}
		l.f = f
	}
	return l.f.Write(b)
}

func (l *lazyFile) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}

var _ io.WriteCloser = (*lazyFile)(nil)
