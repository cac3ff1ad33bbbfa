package selfcheck

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

// dvStream builds a stream of n packets gap apart through a delay that is redrawn uniformly in
// [base-v, base+v] every interval (as the emulator does), in arrival order.
func dvStream(n int, gap, every, base, v time.Duration, seed uint64) []arrival {
	rng := rand.New(rand.NewPCG(seed, 1))
	t0 := time.Unix(1000, 0)
	draws := map[int]time.Duration{}
	var got []arrival
	for i := range n {
		sent := t0.Add(time.Duration(i) * gap)
		k := int(time.Duration(i) * gap / every)
		if _, ok := draws[k]; !ok {
			draws[k] = base - v + time.Duration(rng.Int64N(int64(2*v)+1))
		}
		got = append(got, arrival{seq: i, sent: sent, recv: sent.Add(draws[k])})
	}
	slices.SortStableFunc(got, func(a, b arrival) int { return a.recv.Compare(b.recv) })
	return got
}

// TestDelayVarDistribution: the delay-variation line judges the distribution of the one-way
// delays (a Kolmogorov-Smirnov test of one draw per interval) and the reordering line the
// RFC 4737 count the draws predict: the emulator's model passes; a variation half as wide as
// configured fails although every delay lies in range (the old min..max line passed it); a
// stream that kept order fails the reordering line (the old line was informational); a stream
// too short for 40 draws asks for a longer check.
func TestDelayVarDistribution(t *testing.T) {
	const spec = "rate=10mbit,rtt=112ms,queue=2bdp,down.delayvar=50ms"
	c := testChecker(spec, true)
	n, gap := c.streamShape(true)
	if time.Duration(n)*gap < minDelayIntervals*100*time.Millisecond {
		t.Fatalf("stream of %d x %s is shorter than %d draws", n, gap, minDelayIntervals)
	}
	base := 56*time.Millisecond + c.rate(true).Transmit(probeIPSize)
	judge := func(got []arrival, n int) (dv, ro bool, lines int) {
		c := testChecker(spec, true)
		st := analyse(n, got)
		c.delayVarLine(true, st, got)
		c.reorderLine(true, st, gap, got)
		if len(c.res.Lines) != 2 {
			t.Fatalf("lines %+v", c.res.Lines)
		}
		return c.res.Lines[0].Pass, c.res.Lines[1].Pass, len(c.res.Lines)
	}
	model := dvStream(n, gap, 100*time.Millisecond, base, 50*time.Millisecond, 3)
	if dv, ro, _ := judge(model, n); !dv || !ro {
		t.Errorf("the emulator's model: delay line %v, reordering line %v, want both pass", dv, ro)
	}
	narrow := dvStream(n, gap, 100*time.Millisecond, base, 25*time.Millisecond, 3)
	if dv, _, _ := judge(narrow, n); dv {
		t.Error("a variation of +-25 ms on a +-50 ms link passed the distribution test")
	}
	inOrder := slices.Clone(model)
	slices.SortFunc(inOrder, func(a, b arrival) int { return a.seq - b.seq })
	if _, ro, _ := judge(inOrder, n); ro {
		t.Error("a stream that kept its order passed the reordering line of a delay-variation link")
	}
	short := dvStream(1000, gap, 100*time.Millisecond, base, 50*time.Millisecond, 3)
	c = testChecker(spec, true)
	c.delayVarLine(true, analyse(1000, short), short)
	if l := c.res.Lines[0]; l.Pass {
		t.Errorf("10 draws passed: %+v", l)
	}
}

// TestRandomOutageGaps: random outages are judged by the mean length of their gaps (chi-square
// interval of an exponential mean): gaps of the configured mean pass, gaps four times as long
// fail, fewer than 3 gaps ask for a longer check.
func TestRandomOutageGaps(t *testing.T) {
	lo, hi := expMeanInterval(100*time.Millisecond, 10)
	// chi2(20; 0.005) = 7.43, chi2(20; 0.995) = 40.0: the mean of 10 lies in 37..200 ms.
	if lo < 36*time.Millisecond || lo > 38*time.Millisecond || hi < 198*time.Millisecond || hi > 202*time.Millisecond {
		t.Errorf("expMeanInterval(100 ms, 10) = %v..%v, want about 37..200 ms", lo, hi)
	}
	mk := func(gaps ...int) []arrival { // gaps in packets lost, 20 received between them
		var got []arrival
		seq := 0
		t0 := time.Unix(0, 0)
		for _, g := range append(gaps, 0) {
			for range 20 {
				got = append(got, arrival{seq: seq, sent: t0, recv: t0})
				seq++
			}
			seq += g
		}
		return got
	}
	g := gapLengths(20*4+10+30+50, mk(10, 30, 50), 5*time.Millisecond)
	if len(g) != 3 || g[0] != 52500*time.Microsecond || g[2] != 252500*time.Microsecond {
		t.Errorf("gapLengths = %v", g)
	}
}

// TestECNLine: ecn=true is judged by the AQM's CE marks under the check's TCP load: marks pass,
// none fails (before, ecn=true had no line of its own).
func TestECNLine(t *testing.T) {
	c := testChecker("rate=20mbit,rtt=40ms,aqm=codel,ecn=true", true)
	c.ecnLine(true, &result.Emulator{Down: result.Direction{MarksCE: 7}})
	c.ecnLine(false, &result.Emulator{Up: result.Direction{DropsAQM: 12}})
	if len(c.res.Lines) != 2 || !c.res.Lines[0].Pass || c.res.Lines[1].Pass {
		t.Fatalf("lines %+v", c.res.Lines)
	}
}

// TestJitterReorderLine: with reorder=true, jitter of +-5 ms reorders packets 1 ms apart (each
// overtaken by its successor with probability (10 - 1)^2 / 200 = 40.5 %): a stream that kept its
// order fails, one with 55 % reordered passes (before, reorder=true had no line).
func TestJitterReorderLine(t *testing.T) {
	for _, tc := range []struct {
		reordered int
		pass      bool
	}{{0, false}, {165, true}} {
		c := testChecker("rate=10mbit,rtt=40ms,jitter=5ms,reorder=true", true)
		c.reorderLine(true, streamStats{n: 300, reordered: tc.reordered}, time.Millisecond, nil)
		if len(c.res.Lines) != 1 || c.res.Lines[0].Pass != tc.pass {
			t.Errorf("%d of 300 reordered: %+v, want pass %v", tc.reordered, c.res.Lines, tc.pass)
		}
	}
}

// TestStreamLinesOutsideStalls: a 30 ms stall of the emulator holds the packets in flight
// through it; the delay-variation and reordering lines judge the model on the others and say
// how many they left out (before, the stalled packets' delays failed the delay line of a
// delay-variation link beside a CPU hog). Without the recorded stall the same stream fails.
func TestStreamLinesOutsideStalls(t *testing.T) {
	const spec = "rate=10mbit,rtt=112ms,queue=2bdp,down.delayvar=50ms"
	c := testChecker(spec, true)
	n, gap := c.streamShape(true)
	base := 56*time.Millisecond + c.rate(true).Transmit(probeIPSize)
	got := dvStream(n, gap, 100*time.Millisecond, base, 50*time.Millisecond, 3)
	// The stall: nothing is released for 30 ms from just before the stream's longest delay;
	// what was due then leaves at its end, up to 30 ms late.
	slowest := slices.MaxFunc(got, func(a, b arrival) int { return cmp.Compare(a.recv.Sub(a.sent), b.recv.Sub(b.sent)) })
	from := slowest.recv.Add(-time.Millisecond)
	to := from.Add(30 * time.Millisecond)
	held := 0
	for i := range got {
		if got[i].recv.After(from) && got[i].recv.Before(to) {
			got[i].recv = to.Add(time.Duration(held) * 10 * time.Microsecond)
			held++
		}
	}
	if held == 0 {
		t.Fatal("no packet was due during the stall")
	}
	slices.SortStableFunc(got, func(a, b arrival) int { return a.recv.Compare(b.recv) })
	judge := func(spans []result.StallSpan) []result.CheckLine {
		c := testChecker(spec, true)
		c.acc.spans = spans
		c.streamLines(true, n, gap, got)
		return c.res.Lines
	}
	lines := judge([]result.StallSpan{{From: from, To: to, LateMs: 30, Releases: int64(held)}})
	if len(lines) != 2 {
		t.Fatalf("lines %+v", lines)
	}
	for _, l := range lines {
		if !l.Pass || !strings.Contains(l.Measured, "packets left out: in flight during an emulator stall") {
			t.Errorf("with the stall recorded: %+v", l)
		}
	}
	if lines := judge(nil); lines[0].Pass {
		t.Errorf("without the stall recorded the held packets passed the delay line: %+v", lines[0])
	}
}
