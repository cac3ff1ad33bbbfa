package testenv

import (
	"fmt"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// MaxLostShare is the largest share of a test's loads (0..1) that host stalls may cost it
// (Lost), one load always allowed: at a host-stall rate the link check accepts
// (result.HostStallsLateShareMax, 20 % of loads late once), about 4 % are late twice; a quarter
// means the machine, or the emulator, is broken, and the test fails naming it.
const MaxLostShare = 0.25

// Lost counts the loads of one test that host stalls cost: a load record the emulator was late
// beyond the lateness bound in on both of its attempts (result.OutcomeEmulatorLate, Attempt 2).
// The harness then did what its rule says, made it once more and recorded it invalid, so a test
// of something other than the host's timing accepts it (docs/design.md, "Host stalls: judged on
// their own"), logs it with the machine's load its reason names, and fails through Check when
// there were too many. The zero value is ready to use.
type Lost struct {
	n int
}

// Excused reports whether r is a load lost to host stalls (counted and logged); false for every
// other record, valid or not, which the test judges as before.
func (l *Lost) Excused(t testing.TB, r *result.Record) bool {
	t.Helper()
	if r.Valid || result.Classify(r) != result.OutcomeEmulatorLate || r.Attempt < 2 {
		return false
	}
	l.n++
	t.Logf("run %d (%s %s): lost to host stalls (the emulator late on both attempts): %s", r.Run, r.Protocol, r.Mode, r.InvalidReason)
	return true
}

// Check fails t when more than one load, and more than MaxLostShare of loads, were lost to host
// stalls.
func (l *Lost) Check(t testing.TB, loads int) {
	t.Helper()
	if tooManyLost(l.n, loads) {
		t.Errorf("%d of %d loads lost to host stalls (the emulator late on both attempts; more than %.0f %%): the machine stalls too often for these loads, or the emulator cannot keep up (see each load's reason for the machine's load)", l.n, loads, 100*MaxLostShare)
	}
}

// tooManyLost reports whether n lost of loads is more than MaxLostShare.
func tooManyLost(n, loads int) bool { return n > 1 && float64(n) > MaxLostShare*float64(loads) }

// N is how many loads were lost to host stalls so far.
func (l *Lost) N() int { return l.n }

// LostRuns is Lost for flow runs: the flows of one run share its emulator, so a run whose flows
// the emulator was late in on both attempts is one run lost, whatever its number of flow lines.
// The zero value is ready to use.
type LostRuns struct {
	runs map[string]bool
}

// Excused reports whether r, a flow line, belongs to a run lost to host stalls (counted once
// per experiment and run, and logged); false for every other record.
func (l *LostRuns) Excused(t testing.TB, r *result.Record) bool {
	t.Helper()
	var one Lost
	if !one.Excused(t, r) {
		return false
	}
	if l.runs == nil {
		l.runs = map[string]bool{}
	}
	l.runs[fmt.Sprintf("%s run %d", r.Experiment, r.Run)] = true
	return true
}

// Check fails t when more than one of runs flow runs, and more than MaxLostShare of them, were
// lost to host stalls.
func (l *LostRuns) Check(t testing.TB, runs int) {
	t.Helper()
	if tooManyLost(len(l.runs), runs) {
		t.Errorf("%d of %d flow runs lost to host stalls (the emulator late on both attempts; more than %.0f %%): the machine stalls too often, or the emulator cannot keep up", len(l.runs), runs, 100*MaxLostShare)
	}
}
