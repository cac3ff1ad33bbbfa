package idlepoll

import (
	"testing"
	"time"
)

// TestStolen: the stolen time of an interval is the overlap with each freeze of that CPU, at most
// the freeze's own Stolen; other CPUs' freezes and freezes outside the interval count nothing.
func TestStolen(t *testing.T) {
	ResetFreezes()
	defer ResetFreezes()
	t0 := time.Now()
	at := func(ms float64) time.Time { return t0.Add(time.Duration(ms * float64(time.Millisecond))) }
	AddFreeze(Freeze{CPU: 1, Start: at(10), End: at(18), Stolen: 7900 * time.Microsecond}) // an 8 ms gap, 7.9 ms stolen
	AddFreeze(Freeze{CPU: 0, Start: at(10), End: at(30), Stolen: 20 * time.Millisecond})
	AddFreeze(Freeze{CPU: 1, Start: at(40), End: at(41), Stolen: time.Millisecond})
	AddFreeze(Freeze{CPU: 0, Start: at(12), End: at(20), Stolen: 8 * time.Millisecond}) // the same freeze, seen by CPU 0's watcher
	for _, tc := range []struct {
		cpu      int
		from, to float64
		want     time.Duration
	}{
		{1, 9, 19, 7900 * time.Microsecond},   // the whole freeze
		{1, 14, 19, 4 * time.Millisecond},     // its last 4 ms
		{1, 17.95, 30, 50 * time.Microsecond}, // its last 0.05 ms
		{1, 9, 42, 8900 * time.Microsecond},   // two freezes
		{1, 19, 39, 0},                        // between them
		{0, 12, 14, 2 * time.Millisecond},     // CPU 0's own, seen twice, counted once
		{0, 5, 35, 20 * time.Millisecond},     // all of it, seen twice, counted once
		{2, 0, 100, 0},                        // a CPU no spinner watched
		{1, 15, 15, 0},                        // an empty interval
	} {
		if got := Stolen(tc.cpu, at(tc.from), at(tc.to)); got != tc.want {
			t.Errorf("Stolen(CPU %d, %v..%v ms) = %v, want %v", tc.cpu, tc.from, tc.to, got, tc.want)
		}
	}
	if n := len(Freezes(at(15), at(20))); n != 3 {
		t.Errorf("%d freezes overlap 15..20 ms, want 3", n)
	}
}

// TestParseFreeze: a spinner's line becomes a Freeze in this process's clock; bad lines and
// stolen times longer than the gap are refused or cut to it.
func TestParseFreeze(t *testing.T) {
	f, ok := parseFreeze(1, "freeze 1000000000 1008000000 7900000\n")
	if !ok || f.CPU != 1 || f.End.Sub(f.Start) != 8*time.Millisecond || f.Stolen != 7900*time.Microsecond {
		t.Fatalf("%+v %t", f, ok)
	}
	if f, ok := parseFreeze(0, "freeze 10 20 50"); !ok || f.Stolen != 10 {
		t.Errorf("stolen beyond the gap: %+v %t", f, ok)
	}
	for _, bad := range []string{"freeze 20 10 1", "freeze 1 2", "ok", "freeze 1 2 -3"} {
		if _, ok := parseFreeze(0, bad); ok {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestStolenIn: a spinner's gap is the hypervisor's except for the spinner's run-queue wait
// and at most GuestIRQMax of CPU time charged to it; what is left must exceed FreezeMin.
func TestStolenIn(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	for _, tc := range []struct {
		gap, cpu, wait, want float64
	}{
		{8.66, 8.27, 0.11, 6.55}, // charged as CPU time: all but GuestIRQMax and the wait
		{8.62, 0.65, 0.13, 7.84}, // reported as steal: the spinner's CPU clock left it out
		{8.0, 0.1, 7.9, 0},       // another thread ran: the spinner waited the whole gap
		{2.2, 2.0, 0, 0},         // guest softirqs for 2 ms: the guest's own
		{2.4, 2.0, 0, 0.4},       // beyond them
		{0.3, 0, 0, 0},           // FreezeMin is not a freeze
		{5, -1, -1, 5},           // clock readings out of order count nothing
	} {
		if got := stolenIn(ms(tc.gap), ms(tc.cpu), ms(tc.wait)); (got - ms(tc.want)).Abs() > time.Microsecond {
			t.Errorf("stolenIn(gap %v, cpu %v, wait %v ms) = %v, want %v ms", tc.gap, tc.cpu, tc.wait, got, tc.want)
		}
	}
}

// TestSpinnerFreezeExplainsNothing: a freeze only a spinner reported (its CPU time and wait
// under a CPU hog are not trusted) explains no lateness; the same stop from the watcher does.
func TestSpinnerFreezeExplainsNothing(t *testing.T) {
	ResetFreezes()
	defer ResetFreezes()
	base := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	AddFreeze(Freeze{CPU: 1, Start: at(0), End: at(1000), Stolen: time.Second, Spinner: true})
	if got := Stolen(1, at(100), at(120)); got != 0 {
		t.Fatalf("a spinner's freeze explained %v", got)
	}
	AddFreeze(Freeze{CPU: 1, Start: at(105), End: at(113), Stolen: 8 * time.Millisecond})
	if got := Stolen(1, at(100), at(120)); got != 8*time.Millisecond {
		t.Fatalf("the watcher's freeze explained %v, want 8ms", got)
	}
}
