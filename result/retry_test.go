package result

import (
	"errors"
	"strings"
	"testing"
)

// TestRetry: an attempt that stands ends the rule; one that missed is made once more and no
// more (Attempts = 2); an error ends it at once with that attempt's number.
func TestRetry(t *testing.T) {
	for _, tc := range []struct {
		again []bool
		err   int // the attempt that errs, 0 for none
		want  int
	}{
		{[]bool{false}, 0, 1},
		{[]bool{true, false}, 0, 2},
		{[]bool{true, true, true}, 0, 2},
		{[]bool{true, true}, 1, 1},
	} {
		calls := 0
		n, err := Retry(func(attempt int) (bool, error) {
			calls++
			if attempt != calls {
				t.Fatalf("attempt %d on call %d", attempt, calls)
			}
			if attempt == tc.err {
				return true, errors.New("boom")
			}
			return tc.again[attempt-1], nil
		})
		if n != tc.want || calls != tc.want || (err != nil) != (tc.err != 0) {
			t.Errorf("again %v, err at %d: %d attempts (%d calls), err %v; want %d", tc.again, tc.err, n, calls, err, tc.want)
		}
	}
}

// TestMarkLate: the records of a measurement the emulator was late in are invalid, the reason
// naming the lateness and the machine's load before any earlier reason; on time, they are left
// as they were. Earlier keeps a load's PLT and a flow's goodput.
func TestMarkLate(t *testing.T) {
	late := &Emulator{LateBoundMs: 5, Down: Direction{TimingErrMaxMs: 12.5}}
	a := &Record{Valid: true, Emulator: late, PLTMs: 900}
	b := &Record{Valid: true, InvalidReason: "starved", Emulator: late, Flow: &Flow{GoodputBps: 2e6}}
	if !MarkLate("machine: CPU 97 % busy, 0.0 % stolen by the hypervisor", a, b) {
		t.Fatal("a late emulator was not marked")
	}
	if a.Valid || !strings.HasPrefix(a.InvalidReason, "emulator late: a packet left 12.50 ms after its time (down), bound 5.00 ms (machine: CPU 97 %") {
		t.Errorf("load: %v %q", a.Valid, a.InvalidReason)
	}
	if b.Valid || !strings.HasSuffix(b.InvalidReason, "; starved") {
		t.Errorf("flow: %v %q", b.Valid, b.InvalidReason)
	}
	if e := Earlier(a, 97, 0); e.PLTMs != 900 || e.GoodputBps != 0 || e.LateMs != 12.5 || e.HostBusyPct != 97 {
		t.Errorf("Earlier(load) = %+v", e)
	}
	if e := Earlier(b, 97, 0); e.PLTMs != 0 || e.GoodputBps != 2e6 {
		t.Errorf("Earlier(flow) = %+v", e)
	}
	onTime := &Record{Valid: true, Emulator: &Emulator{LateBoundMs: 5, Down: Direction{TimingErrMaxMs: 1}}}
	if MarkLate("", onTime) || !onTime.Valid || onTime.InvalidReason != "" {
		t.Errorf("on time: %+v", onTime)
	}
	if MarkLate("") {
		t.Error("no records were marked late")
	}
}
