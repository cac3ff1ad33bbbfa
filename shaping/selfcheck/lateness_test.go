package selfcheck

import (
	"fmt"
	"strings"
	"testing"
	"time"

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

// TestLatenessLine: the emulator's lateness line passes up to the lateness bound and fails
// above it (it was informational, and passed a 58 ms stall).
func TestLatenessLine(t *testing.T) {
	bound := float64(shaping.LatenessBound) / 1e6
	for _, tc := range []struct {
		lateMs float64
		pass   bool
	}{{0, true}, {0.25, true}, {bound, true}, {bound + 0.01, false}, {58.45, false}} {
		c := testChecker("rate=10mbit,rtt=36ms,queue=2bdp", true)
		c.acc.lateMax = tc.lateMs
		c.latenessLine()
		if l := c.res.Lines[0]; l.Pass != tc.pass || !strings.Contains(l.Tolerance, "<= 5.00 ms") {
			t.Errorf("lateness %.2f ms: %+v, want pass %v against <= 5.00 ms", tc.lateMs, l, tc.pass)
		}
	}
}

// TestLatenessLineHostFreeze: lateness a host freeze explained is taken off before the bound
// (8.1 ms of which 7.9 ms frozen passes at 0.2 ms), the line says so with the lateness before,
// and what is left beyond the bound still fails (a 30 ms freeze, 20 ms taken off, 10 ms left).
func TestLatenessLineHostFreeze(t *testing.T) {
	for _, tc := range []struct {
		own, raw, freeze float64
		pass             bool
	}{{0.2, 8.1, 7.9, true}, {10, 30, 20, false}} {
		c := testChecker("rate=10mbit,rtt=36ms,queue=2bdp", true)
		c.acc.lateMax, c.acc.rawMax, c.acc.freezeMax, c.acc.freezeReleases = tc.own, tc.raw, tc.freeze, 1
		c.latenessLine()
		l := c.res.Lines[0]
		want := fmt.Sprintf("%.2f ms beyond the host's freezes (%.2f ms before; up to %.2f ms taken off 1 late releases)", tc.own, tc.raw, tc.freeze)
		if l.Pass != tc.pass || l.Measured != want || !strings.Contains(l.Tolerance, "at most 20 ms per release that a host freeze explains") {
			t.Errorf("%+v, want pass %v, measured %q", l, tc.pass, want)
		}
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
		if l.AllowanceMs != float64(lc.allow)/1e6 || !strings.Contains(l.Tolerance, "of which emulator lateness "+fmtMs(lc.allow)) {
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
