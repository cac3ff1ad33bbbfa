package selfcheck

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
)

// latenessCases are the recorded release latenesses every widened line is judged at: none, at
// the cap (shaping.LatenessBound) and well beyond it.
var latenessCases = []struct {
	name  string
	late  time.Duration
	allow time.Duration // what a line may take: the lateness capped
}{
	{"no lateness", 0, 0},
	{"lateness at the cap", shaping.LatenessBound, shaping.LatenessBound},
	{"lateness beyond the cap", 12 * shaping.LatenessBound, shaping.LatenessBound},
}

// TestLatenessLine: the lateness line judges the share of releases made in stalls: one 30 ms
// stall in a full check (250 of 100 000 releases) passes, an emulator that cannot keep up (most
// releases late) fails, and the bound itself (2 %) passes while just above it fails.
func TestLatenessLine(t *testing.T) {
	for _, tc := range []struct {
		stalled, released int64
		pass              bool
	}{{0, 0, true}, {0, 100000, true}, {250, 100000, true}, {2000, 100000, true}, {2001, 100000, false}, {90000, 100000, false}} {
		c := testChecker("rate=10mbit,rtt=36ms,queue=2bdp", true)
		c.acc.stalled, c.acc.released, c.acc.rawMax = tc.stalled, tc.released, 30
		c.latenessLine()
		l := c.res.Lines[0]
		if l.Pass != tc.pass || !strings.Contains(l.Tolerance, "<= 2 % of releases") || !strings.Contains(l.Measured, fmt.Sprintf("%d of %d releases", tc.stalled, tc.released)) {
			t.Errorf("%d of %d late: %+v, want pass %v", tc.stalled, tc.released, l, tc.pass)
		}
	}
}

// TestPoissonLower: the one-sided 95 % lower bounds of a Poisson mean are the chi-square
// table's (half the 0.05 quantile at 2k degrees of freedom).
func TestPoissonLower(t *testing.T) {
	for k, want := range map[int64]float64{0: 0, 1: 0.05129, 2: 0.35536, 3: 0.81770, 4: 1.36632, 10: 5.42539} {
		if got := poissonLower(k); math.Abs(got-want) > 1e-4 {
			t.Errorf("poissonLower(%d) = %.5f, want %.5f", k, got, want)
		}
	}
}

// TestHostStallsLine: one stall never refuses a link, however short the check; a host that
// stalls the emulator many times a minute is refused, and the line and the record say why.
func TestHostStallsLine(t *testing.T) {
	for _, tc := range []struct {
		stalls int64
		window time.Duration
		pass   bool
	}{
		{0, 12 * time.Second, true},
		{1, 3 * time.Second, true},  // one hiccup in a quick check
		{1, 1 * time.Second, true},  // even in a 1 s one: lower bound 0.05/s, 14 % of 3 s loads
		{3, 12 * time.Second, true}, // lower bound 0.82 per 12 s: 18.5 % of 3 s loads
		{4, 12 * time.Second, false},
		{30, 12 * time.Second, false},
	} {
		c := testChecker("rate=100mbit,rtt=36ms,queue=2bdp", false)
		c.start = time.Now().Add(-tc.window)
		c.acc.stalls, c.acc.stalled, c.acc.released = tc.stalls, 100*tc.stalls, 100000
		c.hostStallsLine()
		l := c.res.Lines[0]
		if l.Pass != tc.pass {
			t.Errorf("%d stalls in %v: %+v, want pass %v", tc.stalls, tc.window, l, tc.pass)
		}
		f := c.res.HostStalls
		if f == nil || f.Stalls != tc.stalls || f.LoadSpanS != DefaultLoadSpan.Seconds() || f.LateShareLo > f.LateShare || (f.LateShareLo <= result.HostStallsLateShareMax) != tc.pass {
			t.Errorf("%d stalls in %v: finding %+v", tc.stalls, tc.window, f)
		}
	}
}

// TestOwnStalls: only stalls whose lateness host freezes do not explain count, unlisted stalls
// count whole, and when the guest reclaimed memory every stall counts (no freeze trusted).
func TestOwnStalls(t *testing.T) {
	spans := []result.StallSpan{{LateMs: 12, OwnLateMs: 1.4}, {LateMs: 30, OwnLateMs: 10}, {LateMs: 6, OwnLateMs: 6}}
	if got := ownStalls(3, spans, false); got != 2 {
		t.Errorf("own stalls %d, want 2 (one explained by a freeze)", got)
	}
	if got := ownStalls(5, spans, false); got != 4 {
		t.Errorf("own stalls %d, want 4 (two unlisted count whole)", got)
	}
	if got := ownStalls(3, spans, true); got != 3 {
		t.Errorf("own stalls with reclaim %d, want 3", got)
	}
	// On the line: three stalls of which one is the host's pass where three own ones would not.
	c := testChecker("rate=10mbit,rtt=36ms,queue=2bdp", false)
	c.start = time.Now().Add(-11 * time.Second)
	c.acc.stalls, c.acc.spans = 3, spans
	c.hostStallsLine()
	if l, f := c.res.Lines[0], c.res.HostStalls; !l.Pass || f.Stalls != 3 || f.Own != 2 || !strings.Contains(l.Measured, "3 stalls") || !strings.Contains(l.Measured, "2 beyond host freezes") {
		t.Errorf("line %+v, finding %+v", l, f)
	}
}

// TestStallsSeen: a stall during which a watcher saw its CPU stop is the machine's; one with no
// such stop the emulator's process's alone; the floor is the longest stop.
func TestStallsSeen(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	spans := []result.StallSpan{
		{From: t0.Add(100 * time.Millisecond), To: t0.Add(110 * time.Millisecond)},
		{From: t0.Add(500 * time.Millisecond), To: t0.Add(530 * time.Millisecond)},
	}
	freezes := []idlepoll.Freeze{
		{CPU: 1, Start: t0.Add(101 * time.Millisecond), End: t0.Add(109 * time.Millisecond), Stolen: 7 * time.Millisecond},
		{CPU: 0, Start: t0.Add(900 * time.Millisecond), End: t0.Add(902 * time.Millisecond), Stolen: 2 * time.Millisecond},
		{CPU: 0, Start: t0.Add(400 * time.Millisecond), End: t0.Add(1400 * time.Millisecond), Stolen: time.Second, Spinner: true}, // not trusted
	}
	if seen, floor := stallsSeen(spans, freezes); seen != 1 || floor != 7*time.Millisecond {
		t.Errorf("seen %d, floor %v; want 1, 7ms", seen, floor)
	}
}

// TestOutsideStalls: probes in flight during a recorded stall are left out of the RTT lines
// and counted; when more than half of them overlapped stalls, every probe is judged.
func TestOutsideStalls(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	probes := make([]timedRTT, 10)
	for i := range probes {
		probes[i] = timedRTT{At: t0.Add(time.Duration(i) * 100 * time.Millisecond), RTT: 40 * time.Millisecond}
	}
	probes[3].RTT = 75 * time.Millisecond // sent at 300 ms, in flight during the stall at 320-350 ms
	c := testChecker("rate=10mbit,rtt=36ms,queue=2bdp", true)
	c.acc.spans = []result.StallSpan{{From: t0.Add(320 * time.Millisecond), To: t0.Add(350 * time.Millisecond), LateMs: 30, Releases: 25}}
	kept, left := c.outsideStalls(probes)
	if left != 1 || len(kept) != 9 || slices.Contains(kept, 75*time.Millisecond) || c.acc.leftOut != 1 {
		t.Fatalf("kept %v, left %d (acc %d)", kept, left, c.acc.leftOut)
	}
	c.loadLine(true, kept, left)
	if l := c.res.Lines[0]; !l.Pass || !strings.Contains(l.Measured, "1 of 10 probes left out") {
		t.Errorf("load line %+v", l)
	}
	// Stalls all along: nothing is left out.
	c.acc.spans = []result.StallSpan{{From: t0, To: t0.Add(time.Second)}}
	if kept, left := c.outsideStalls(probes); left != 0 || len(kept) != 10 {
		t.Errorf("stalls all along: kept %d, left %d", len(kept), left)
	}
}

// TestIdleMaxAllowanceCap: the slowest idle probe may exceed the max bound by at most the
// lateness bound whatever lateness the emulator recorded, and the line records the allowance it
// used; 0.1 ms more fails.
func TestIdleMaxAllowanceCap(t *testing.T) {
	const bound = 55 * time.Millisecond
	probes := func(slowest time.Duration) []time.Duration {
		r := make([]time.Duration, 9, 10)
		for i := range r {
			r[i] = 50 * time.Millisecond
		}
		return append(r, slowest)
	}
	for _, lc := range latenessCases {
		for _, tc := range []struct {
			name    string
			slowest time.Duration
			pass    bool
			used    time.Duration
		}{
			{"within the bound", bound, true, 0},
			{"exceeding by the cap", bound + shaping.LatenessBound, true, shaping.LatenessBound},
			{"exceeding beyond the cap", bound + shaping.LatenessBound + 100*time.Microsecond, false, 0},
		} {
			ok, _, used := idleMaxOK(probes(tc.slowest), bound, lc.late)
			if ok != tc.pass || used != tc.used {
				t.Errorf("%s, %s: pass %v, allowance %v; want %v, %v", lc.name, tc.name, ok, used, tc.pass, tc.used)
			}
		}
	}
}

// TestStreamLinesAllowanceCap: the delay-variation, reordering and jitter lines widen their
// tolerance by the stream's recorded lateness capped at the lateness bound, record what they
// took, and a delay beyond the capped range fails the delay-variation line however late the
// emulator says it was.
func TestStreamLinesAllowanceCap(t *testing.T) {
	const spec = "rate=10mbit,rtt=112ms,queue=2bdp,down.delayvar=50ms"
	c0 := testChecker(spec, true)
	n, gap := c0.streamShape(true)
	base := 56*time.Millisecond + c0.rate(true).Transmit(probeIPSize)
	model := dvStream(n, gap, 100*time.Millisecond, base, 50*time.Millisecond, 3)
	// The range's upper end without any allowance: base + D + jitter above + 1 ms.
	hi0 := base + 50*time.Millisecond + rttSlackAbove
	for _, lc := range latenessCases {
		for _, extra := range []time.Duration{0, shaping.LatenessBound, shaping.LatenessBound + time.Millisecond} {
			got := append([]arrival(nil), model...)
			last := &got[len(got)-1]
			last.recv = last.sent.Add(hi0 + extra) // one delay above the range by extra
			c := testChecker(spec, true)
			c.streamLate = lc.late
			st := analyse(n, got)
			c.delayVarLine(true, st, got)
			c.reorderLine(true, st, gap, got)
			dv, ro := c.res.Lines[0], c.res.Lines[1]
			if want := extra <= lc.allow; (st.maxDelay <= hi0+lc.allow) != want {
				t.Fatalf("%s, extra %v: fixture's max delay %v", lc.name, extra, st.maxDelay)
			}
			wantPass := extra <= lc.allow
			if dv.Pass != wantPass && extra > 0 {
				t.Errorf("%s, one delay %v above the range: delay line pass %v, want %v (%s)", lc.name, extra, dv.Pass, wantPass, dv.Tolerance)
			}
			for _, l := range []result.CheckLine{dv, ro} {
				if l.AllowanceMs != float64(lc.allow)/1e6 {
					t.Errorf("%s: %s records allowance %.2f ms, want %.2f", lc.name, l.Name, l.AllowanceMs, float64(lc.allow)/1e6)
				}
			}
		}
	}
	for _, lc := range latenessCases {
		c := testChecker("rate=10mbit,rtt=40ms,jitter=5ms,jitter_dist=normal", false)
		c.streamLate = lc.late
		c.jitterLine(true, time.Millisecond, jitterStream(t, "rate=10mbit,rtt=40ms,jitter=5ms,jitter_dist=normal", 1000, time.Millisecond, 11))
		l := c.res.Lines[0]
		if l.AllowanceMs != float64(lc.allow)/1e6 || !strings.Contains(l.Tolerance, "of which emulator lateness "+quantity.FormatMsUnit(quantity.Ms(lc.allow), 2)) {
			t.Errorf("%s: jitter line %+v, want allowance %v", lc.name, l, lc.allow)
		}
	}
}

// TestLinkProcs: the Ps a test binary adds for its links (testenv.LinkProcs) are those the
// forwarders and a check's probes hold, as pltlab's main adds them.
func TestLinkProcs(t *testing.T) {
	if testenv.LinkProcs != shaping.ProcsPerLink+ProbeProcs {
		t.Errorf("testenv.LinkProcs = %d, want shaping.ProcsPerLink + ProbeProcs = %d", testenv.LinkProcs, shaping.ProcsPerLink+ProbeProcs)
	}
}
