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
		{0, 12, 14, 2 * time.Millisecond},     // CPU 0's own
		{2, 0, 100, 0},                        // a CPU no spinner watched
		{1, 15, 15, 0},                        // an empty interval
	} {
		if got := Stolen(tc.cpu, at(tc.from), at(tc.to)); got != tc.want {
			t.Errorf("Stolen(CPU %d, %v..%v ms) = %v, want %v", tc.cpu, tc.from, tc.to, got, tc.want)
		}
	}
	if n := len(Freezes(at(15), at(20))); n != 2 {
		t.Errorf("%d freezes overlap 15..20 ms, want 2", n)
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
