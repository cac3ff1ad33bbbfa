package shaping

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/shaping/emu"
)

func TestBinomialOK(t *testing.T) {
	tests := []struct {
		name string
		k, n int
		p    float64
		want bool
	}{
		{"exact", 10, 1000, 0.01, true},
		{"edge inside", 18, 1000, 0.01, true},
		{"far above", 40, 1000, 0.01, false},
		{"none lost at 5%", 0, 1000, 0.05, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := binomialOK(tt.k, tt.n, tt.p); got != tt.want {
				t.Fatalf("binomialOK(%d, %d, %v) = %v", tt.k, tt.n, tt.p, got)
			}
		})
	}
}

func testChecker(spec string, quick bool) *checker {
	s, err := ParseSpec(spec)
	if err != nil {
		panic(err)
	}
	return &checker{l: noneLink{spec: s}, spec: s, quick: quick}
}

func TestCheckLines(t *testing.T) {
	c := testChecker("carlucci2015", false)
	if got := c.qDelay(true); got != 50*time.Millisecond {
		t.Fatalf("qDelay = %v, want 50ms (18750 B at 3 Mbit/s)", got)
	}
	// Probe of 92 B at 3 Mbit/s: 245.333 us each way.
	if got := c.expectedRTT(); got != 50*time.Millisecond+2*245333*time.Nanosecond {
		t.Fatalf("expectedRTT = %v", got)
	}
	c.goodputLine(true, 2.88e6)  // 99.4% of 2.896: pass
	c.goodputLine(false, 2.60e6) // 89.8%: fail in a full check
	c.loadLine(true, []time.Duration{60 * time.Millisecond, 101 * time.Millisecond})
	c.loadLine(false, []time.Duration{103 * time.Millisecond})
	want := []bool{true, false, true, false}
	for i, line := range c.res.Lines {
		if line.Pass != want[i] {
			t.Errorf("line %q measured %s: pass %v, want %v", line.Name, line.Measured, line.Pass, want[i])
		}
	}
	q := testChecker("carlucci2015", true)
	q.goodputLine(false, 2.60e6) // quick accepts 85%
	if !q.res.Lines[0].Pass {
		t.Errorf("quick goodput 2.6 Mbit/s failed: %+v", q.res.Lines[0])
	}
}

// TestCheckTolerancesCanFail (issue 11 item 12): jitter is at most rtt/2 (ParseSpec refuses
// more), so the idle RTT tolerance stays finite: a median of 0.27 ms on rtt=20ms,jitter=10ms
// fails.
func TestCheckTolerancesCanFail(t *testing.T) {
	if _, err := ParseSpec("rate=10mbit,rtt=20ms,jitter=50ms"); err == nil {
		t.Fatal("jitter 50ms on rtt=20ms accepted")
	}
	c := testChecker("rate=10mbit,rtt=20ms,jitter=10ms", true)
	// The median of 10 RTTs, each RTT + the sum of two uniform jitters in +-10 ms, is within
	// 2.576 x 1.2533 x sqrt(2 x 10^2 / 3) / sqrt(10) = 8.34 ms of RTT at 99 %.
	tol := c.medianTolerance(10)
	if tol < 8300*time.Microsecond || tol > 8400*time.Microsecond {
		t.Fatalf("median tolerance %v, want 8.34 ms", tol)
	}
	c.idleLines([]time.Duration{270 * time.Microsecond, 270 * time.Microsecond, 300 * time.Microsecond}, 3)
	if c.res.Lines[0].Pass { // the min..max line keeps the physical range: with jitter = rtt/2 a delay may be 0
		t.Fatalf("idle RTT 0.27 ms passed: %+v", c.res.Lines)
	}
	if s := c.slackOneWay(true); s != 10*time.Millisecond {
		t.Fatalf("one-way slack %v, want 10ms", s)
	}
}

// TestGoodputTinyQueue (issue 11 item 13): queue=1pkt is a valid experiment: its goodput is
// reported but not judged, while a 1 BDP queue's is.
func TestGoodputTinyQueue(t *testing.T) {
	c := testChecker("rate=10mbit,rtt=20ms,queue=1pkt", true)
	c.goodputLine(true, 1.1e6)
	if l := c.res.Lines[0]; !l.Pass || !strings.Contains(l.Tolerance, "below 1 BDP") {
		t.Fatalf("queue=1pkt goodput line %+v", l)
	}
	c = testChecker("rate=10mbit,rtt=20ms", true)
	c.goodputLine(true, 1.1e6)
	if c.res.Lines[0].Pass {
		t.Fatalf("1 BDP queue at 1.1 of 9.7 Mbit/s passed: %+v", c.res.Lines[0])
	}
	c = testChecker("rate=8kbit,rtt=50ms", true)
	c.notMeasurable(true, "TCP could not connect", c.unmeasurableExpected())
	if l := c.res.Lines[0]; !l.Pass || !strings.Contains(l.Measured, "not measurable at this setting") {
		t.Fatalf("8kbit line %+v", l)
	}
	c = testChecker("rate=10mbit,rtt=50ms", true)
	c.notMeasurable(false, "TCP could not connect", c.unmeasurableExpected())
	if c.res.Lines[0].Pass {
		t.Fatalf("an unreachable 10 Mbit/s link passed: %+v", c.res.Lines[0])
	}
}

func TestAnalyseStream(t *testing.T) {
	at := func(seq int, delayMs int) arrival {
		t0 := time.Unix(100, 0)
		return arrival{seq: seq, sent: t0, recv: t0.Add(time.Duration(delayMs) * time.Millisecond)}
	}
	// 10 sent; 2, 3 and 7 lost (2 bursts); 5 overtaken by 6 (RFC 4737: 5 < NextExp 7).
	got := []arrival{at(0, 10), at(1, 11), at(4, 12), at(6, 9), at(5, 30), at(8, 10), at(9, 10)}
	st := analyse(10, got)
	if st.lost != 3 || st.bursts != 2 || st.longestRun != 2 || st.reordered != 1 || st.minDelay != 9*time.Millisecond || st.maxDelay != 30*time.Millisecond {
		t.Fatalf("analyse = %+v", st)
	}
}

func TestLossLinesBursty(t *testing.T) {
	c := testChecker("rate=3mbit,rtt=50ms,loss=2%,burst=4", false)
	c.lossLines(true, streamStats{n: 3000, lost: 66, bursts: 16})
	c.lossLines(true, streamStats{n: 3000, lost: 300, bursts: 16})
	c.lossLines(true, streamStats{n: 3000, lost: 60, bursts: 60})
	want := []bool{true, true, false, false, true, false}
	for i, l := range c.res.Lines {
		if l.Pass != want[i] {
			t.Errorf("line %d %q %s %s: pass %v, want %v", i, l.Name, l.Measured, l.Tolerance, l.Pass, want[i])
		}
	}
}

func TestDirectionCounters(t *testing.T) {
	d := direction(emu.Counters{PacketsOut: 100, DropsLoss: 12, LossBursts: 4, Reordered: 5, ReorderExtentSum: 15,
		ReorderExtentMax: 7, MarksCE: 3, DropsAQM: 2, DropsOutage: 9, HeldOutage: 1, QueueDelayP50: 2 * time.Millisecond})
	if d.LossBurstMean != 3 || d.ReorderRatio != 0.05 || d.ReorderExtentMean != 3 || d.ReorderExtentMax != 7 || d.MarksCE != 3 ||
		d.DropsAQM != 2 || d.DropsOutage != 9 || d.HeldOutage != 1 || d.QueueDelayP50Ms != 2 {
		t.Fatalf("direction = %+v", d)
	}
}

// TestBulkTooSlow (issue 11 item 13): at 8 kbit/s a bounded transfer cannot be measured; the
// check says so instead of failing to dial.
func TestBulkTooSlow(t *testing.T) {
	c := testChecker("rate=8kbit,rtt=50ms", true)
	if err := c.bulk(true)(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l := c.res.Lines[0]; !l.Pass || !strings.Contains(l.Measured, "not measurable at this setting") {
		t.Fatalf("8kbit bulk line %+v", l)
	}
	c = testChecker("rate=10mbit,rtt=10s", true)
	c.bulk(false)(context.Background())
	if l := c.res.Lines[0]; !strings.Contains(l.Measured, "under 10 RTTs") {
		t.Fatalf("rtt=10s bulk line %+v", l)
	}
}

// TestIdleMaxAllowsOneOutlier: of 10 idle probes one may be late (a stall of the machine delays
// a single probe); two late probes fail the min..max line, as does one late probe of 5.
func TestIdleMaxAllowsOneOutlier(t *testing.T) {
	probes := func(late ...time.Duration) []time.Duration {
		var r []time.Duration
		for range 10 - len(late) {
			r = append(r, 50600*time.Microsecond)
		}
		return append(r, late...)
	}
	line := func(rtts []time.Duration) bool {
		c := testChecker("carlucci2015", true)
		c.idleLines(rtts, len(rtts))
		for _, l := range c.res.Lines {
			if l.Name == "idle RTT min..max" {
				return l.Pass
			}
		}
		t.Fatal("no min..max line")
		return false
	}
	if !line(probes(72 * time.Millisecond)) {
		t.Error("one probe of 10 at 72 ms failed the check")
	}
	if line(probes(72*time.Millisecond, 60*time.Millisecond)) {
		t.Error("two late probes of 10 passed the check")
	}
	if line(probes(72 * time.Millisecond)[5:]) {
		t.Error("one late probe of 5 passed the check")
	}
}

// TestIdleMaxHostTail: on a tc link the idle RTT's max bound grows by the host's own tail
// measured on the reference pair, and only by that: the same probes fail without it.
func TestIdleMaxHostTail(t *testing.T) {
	mk := func(tail time.Duration) *checker {
		c := testChecker("carlucci2015", true)
		c.hostTail = tail
		return c
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	// Expected 50.49 ms; two probes 8 ms late (the second largest is judged).
	rtts := []time.Duration{ms(50.6), ms(50.6), ms(50.7), ms(50.6), ms(50.7), ms(50.6), ms(50.7), ms(50.6), ms(58.5), ms(58.6)}
	for _, tc := range []struct {
		tail time.Duration
		pass bool
	}{{0, false}, {10 * time.Millisecond, true}, {2 * time.Millisecond, false}} {
		c := mk(tc.tail)
		c.idleLines(append([]time.Duration(nil), rtts...), 10)
		line := c.res.Lines[1]
		if line.Name != "idle RTT min..max" || line.Pass != tc.pass {
			t.Errorf("tail %v: %+v, want pass=%v", tc.tail, line, tc.pass)
		}
		if tc.tail > 0 && !strings.Contains(line.Tolerance, "host's tail") {
			t.Errorf("tail not stated: %q", line.Tolerance)
		}
	}
}
