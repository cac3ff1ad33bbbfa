package selfcheck

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// tcFakeLink is a tc-shaped link for the checker's rules (no kernel behind it).
type tcFakeLink struct{ spec linkspec.Spec }

func (tcFakeLink) Namespace() string              { return "" }
func (tcFakeLink) HostAddr() netip.Addr           { return netip.AddrFrom4([4]byte{127, 0, 0, 1}) }
func (tcFakeLink) ClientAddr() netip.Addr         { return netip.AddrFrom4([4]byte{127, 0, 0, 1}) }
func (l tcFakeLink) Spec() linkspec.Spec          { return l.spec }
func (tcFakeLink) TakeCounters() *result.Emulator { return nil }
func (tcFakeLink) Close() error                   { return nil }
func (tcFakeLink) Qdiscs() []string               { return nil }
func (tcFakeLink) OpenReference(context.Context) (shaping.Reference, error) {
	return nil, errors.ErrUnsupported
}

var _ overheadProber = tcFakeLink{}

func tcChecker(t *testing.T, spec string) *checker {
	t.Helper()
	s, err := linkspec.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return &checker{l: tcFakeLink{s}, spec: s, quick: true}
}

// TestMedianCI: the sign-test interval of the median of m ordered values is
// [x(k), x(m-k+1)] with k the largest such that P(Binomial(m, 1/2) <= k-1) <= 0.5 %: k = 4 for
// 20 (coverage 1 - 2 x 1351/2^20 = 99.74 %), k = 1 for 10 (99.80 %), none for 7.
func TestMedianCI(t *testing.T) {
	seq := func(m int) []time.Duration {
		var d []time.Duration
		for i := 1; i <= m; i++ {
			d = append(d, time.Duration(i))
		}
		return d
	}
	for _, tc := range []struct {
		m      int
		lo, hi time.Duration
		cov    float64
		ok     bool
	}{
		{20, 4, 17, 1 - 2*1351.0/(1<<20), true},
		{10, 1, 10, 1 - 2.0/1024, true},
		{8, 1, 8, 1 - 2.0/256, true},
		{7, 0, 0, 0, false},
	} {
		lo, hi, cov, ok := medianCI(seq(tc.m), 0.99)
		if lo != tc.lo || hi != tc.hi || ok != tc.ok || math.Abs(cov-tc.cov) > 1e-12 {
			t.Errorf("m=%d: [%d, %d] coverage %.6f ok %v, want [%d, %d] %.6f %v", tc.m, lo, hi, cov, ok, tc.lo, tc.hi, tc.cov, tc.ok)
		}
	}
}

// pairs makes pairedProbes probe pairs, the link's probe first in even ones: the reference at
// 52.84 ms with the machine's own spread (a pattern of +-0.4 ms, the same in both probes of a
// pair, as both meet the same timers), the link at the reference plus add plus its own spread
// (uniform +-0.1 ms x noise) plus order (the cost of being sent second: +order when the link's
// probe went second, -order when first); stalls (pair index -> extra ms) delay both probes of a
// pair, linkOnly only the link's.
func pairs(add time.Duration, noise, order float64, stalls, linkOnly map[int]float64) pairedRTTs {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	machine := []float64{0, 0.3, -0.2, 0.4, -0.1, 0.1, -0.4, 0.2, -0.3, 0}
	rng := rand.New(rand.NewPCG(1, 2))
	var p pairedRTTs
	for i := range pairedProbes {
		r := 52.84 + machine[i%len(machine)] + stalls[i]
		first := i%2 == 0
		o := order
		if first {
			o = -order
		}
		p.ref = append(p.ref, ms(r))
		p.link = append(p.link, ms(r+noise*(rng.Float64()*0.2-0.1)+o+linkOnly[i])+add)
		p.linkFirst = append(p.linkFirst, first)
	}
	return p
}

// TestPairedIdleRule: the idle RTT median of a tc link is judged by the interval of the
// median paired difference: it passes when the link adds what its spec says (its own delay:
// the same as the reference's netem delay), FAILS when it adds 1 ms more or 1 ms less, fails
// "too noisy to tell" when the differences spread too wide to see a 1 ms error, and fails
// with fewer than 8 ABBA blocks; what being sent first or second costs cancels in the blocks.
// The max: a stall both probes of a pair suffered passes, a stall of
// the link's probe alone fails (never forgiven by what the reference did not suffer). With the
// old rule (median against a separately measured overhead, -0.20 ms) the CI dry run failed a
// link 0.35 ms under an expectation that drifted with the machine.
func TestPairedIdleRule(t *testing.T) {
	ms := time.Millisecond
	type want struct{ median, minmax bool }
	for _, tc := range []struct {
		name      string
		add       time.Duration
		noise     float64
		order     float64
		stalls    map[int]float64
		linkOnly  map[int]float64
		n         int
		want      want
		verdictIn string
	}{
		{name: "the link adds its spec", noise: 1, want: want{true, true}},
		{name: "1 ms more", add: ms, noise: 1, want: want{false, true}, verdictIn: "contradict"},
		{name: "1 ms less", add: -ms, noise: 1, want: want{false, true}, verdictIn: "contradict"},
		{name: "0.7 ms more", add: 700 * time.Microsecond, noise: 1, want: want{false, true}, verdictIn: "contradict"},
		{name: "spread too wide to tell", noise: 12, want: want{false, true}, verdictIn: "too noisy"},
		{name: "a stall both probes suffered", noise: 1, stalls: map[int]float64{7: 57}, want: want{true, true}},
		{name: "a stall of the link's probe alone", noise: 1, linkOnly: map[int]float64{7: 57}, want: want{true, false}},
		{name: "being sent second costs 0.5 ms (ABBA blocks cancel it)", noise: 1, order: 0.5, want: want{true, true}},
		{name: "7 blocks", noise: 1, n: 14, want: want{false, true}, verdictIn: "too few"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tcChecker(t, "carlucci2015,shaper=netem")
			c.overhead = 2840 * time.Microsecond
			p := pairs(tc.add, tc.noise, tc.order, tc.stalls, tc.linkOnly)
			if tc.n > 0 {
				p = pairedRTTs{link: p.link[:tc.n], ref: p.ref[:tc.n], linkFirst: p.linkFirst[:tc.n]}
			}
			c.pairedLines(p)
			lines := map[string]result.CheckLine{}
			for _, l := range c.res.Lines {
				lines[strings.SplitN(l.Name, " (", 2)[0]] = l
			}
			med, mm := lines["idle RTT median"], lines["idle RTT min..max"]
			if med.Pass != tc.want.median || mm.Pass != tc.want.minmax {
				t.Errorf("median pass %v, min..max pass %v; want %v, %v\n%+v\n%+v", med.Pass, mm.Pass, tc.want.median, tc.want.minmax, med, mm)
			}
			if tc.verdictIn != "" && !strings.Contains(med.Measured, tc.verdictIn) {
				t.Errorf("median line does not say %q: %s", tc.verdictIn, med.Measured)
			}
			if !strings.Contains(med.Measured, "reference 52.8") {
				t.Errorf("the reference's own figures are not on the line: %s", med.Measured)
			}
			if tc.n == 0 && (c.res.Pairs != pairedProbes || c.res.PairedCoverage < 0.99 || c.res.PairedDiffLoMs > c.res.PairedDiffMedianMs || c.res.PairedDiffHiMs < c.res.PairedDiffMedianMs) {
				t.Errorf("record: pairs %d coverage %v interval %v..%v median %v", c.res.Pairs, c.res.PairedCoverage, c.res.PairedDiffLoMs, c.res.PairedDiffHiMs, c.res.PairedDiffMedianMs)
			}
		})
	}
}

// TestPairedIdleJitter: a link with jitter is not "too noisy" for the spread its spec explains
// (the interval may be wider by the jitter's own 99 % width of a median), and still fails a
// 3 ms error.
func TestPairedIdleJitter(t *testing.T) {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	for _, tc := range []struct {
		add  time.Duration
		pass bool
	}{{0, true}, {ms(3), false}} {
		c := tcChecker(t, "rate=3mbit,rtt=50ms,jitter=2ms,shaper=netem")
		var p pairedRTTs
		rng := rand.New(rand.NewPCG(3, 4))
		for i := range pairedProbes {
			r := ms(52.8)
			j := ms(2*rng.Float64() - 1 + 2*rng.Float64() - 1) // both directions' jitter: -2..+2 ms each
			p.ref, p.link, p.linkFirst = append(p.ref, r), append(p.link, r+j+tc.add), append(p.linkFirst, i%2 == 0)
		}
		c.pairedLines(p)
		if l := c.res.Lines[0]; l.Pass != tc.pass {
			t.Errorf("jitter 2 ms, link +%v: %+v, want pass %v", tc.add, l, tc.pass)
		}
	}
}

// stats builds one end's reading as the kernel counts it: a netem root over a tbf, each drop
// counted in the qdisc that dropped and in every ancestor (netem's count includes the tbf's).
func stats(dev string, netemDrops, tbfDrops, overlimits, qlen int64) []shaping.QdiscStats {
	return []shaping.QdiscStats{
		{Dev: dev, Kind: "netem", Handle: "1:", Drops: netemDrops + tbfDrops},
		{Dev: dev, Kind: "tbf", Handle: "10:", Parent: "1:1", Drops: tbfDrops, Overlimits: overlimits, Qlen: qlen},
	}
}

// TestIdleQdiscLine: the qdisc counters over the idle probes pass when nothing was dropped,
// held or left queued, and FAIL for a tbf drop, a tbf overlimit (an isolated probe waited for
// tokens), a packet left in the queue, a netem drop on a loss-free link, a lost probe that was
// no netem drop, or a tree that changed; on a lossy link netem's drops must be exactly the lost
// probes (a drop more was of traffic the link must not carry).
func TestIdleQdiscLine(t *testing.T) {
	base := append(stats("h", 0, 0, 0, 0), stats("c", 0, 0, 0, 0)...)
	for _, tc := range []struct {
		name  string
		spec  string
		after []shaping.QdiscStats
		lost  int
		pass  bool
	}{
		{"clean", "carlucci2015", append(stats("h", 0, 0, 0, 0), stats("c", 0, 0, 0, 0)...), 0, true},
		{"tbf drop", "carlucci2015", append(stats("h", 0, 1, 0, 0), stats("c", 0, 0, 0, 0)...), 0, false},
		{"tbf overlimit", "carlucci2015", append(stats("h", 0, 0, 0, 0), stats("c", 0, 0, 2, 0)...), 0, false},
		{"backlog left", "carlucci2015", append(stats("h", 0, 0, 0, 1), stats("c", 0, 0, 0, 0)...), 0, false},
		{"netem drop, loss-free", "carlucci2015", append(stats("h", 1, 0, 0, 0), stats("c", 0, 0, 0, 0)...), 1, false},
		{"lost without a drop", "rate=10mbit,rtt=40ms,loss=2%", append(stats("h", 0, 0, 0, 0), stats("c", 0, 0, 0, 0)...), 1, false},
		{"lossy, one drop per lost probe", "rate=10mbit,rtt=40ms,loss=2%", append(stats("h", 1, 0, 0, 0), stats("c", 1, 0, 0, 0)...), 2, true},
		{"lossy, a drop that was no probe", "rate=10mbit,rtt=40ms,loss=2%", append(stats("h", 1, 0, 0, 0), stats("c", 1, 0, 0, 0)...), 1, false},
		{"tree changed", "carlucci2015", stats("h", 0, 0, 0, 0), 0, false},
	} {
		c := tcChecker(t, tc.spec+",shaper=netem")
		c.idleQdiscLine(base, tc.after, tc.lost)
		if l := c.res.Lines[0]; l.Pass != tc.pass {
			t.Errorf("%s: %+v, want pass %v", tc.name, l, tc.pass)
		}
	}
	// Over the whole check: a loss-free link's netem never drops; the tbf's and an AQM's drops
	// are the model's, and count in their ancestors too (the guest's kernel: carlucci2015's
	// netem showed 50 drops for the tbf's 50, a codel link's netem and tbf 56 for codel's 56).
	aqm := func(netemOwn, codel int64) []shaping.QdiscStats {
		return []shaping.QdiscStats{
			{Dev: "h", Kind: "netem", Handle: "1:", Drops: netemOwn + codel},
			{Dev: "h", Kind: "tbf", Handle: "10:", Parent: "1:1", Drops: codel},
			{Dev: "h", Kind: "codel", Handle: "20:", Parent: "10:1", Drops: codel},
		}
	}
	for _, tc := range []struct {
		after []shaping.QdiscStats
		pass  bool
	}{{aqm(0, 56), true}, {aqm(1, 56), false}} {
		c := tcChecker(t, "rate=3mbit,rtt=50ms,aqm=codel,shaper=netem")
		c.wholeQdiscLine(aqm(0, 0), tc.after)
		if l := c.res.Lines[0]; l.Pass != tc.pass || !strings.Contains(l.Measured, "56 queue drops") {
			t.Errorf("codel, whole check: %+v, want pass %v and 56 queue drops", l, tc.pass)
		}
	}
	for _, tc := range []struct {
		after []shaping.QdiscStats
		pass  bool
	}{
		{append(stats("h", 0, 30, 500, 0), stats("c", 0, 12, 400, 0)...), true},
		{append(stats("h", 3, 30, 500, 0), stats("c", 0, 12, 400, 0)...), false},
	} {
		c := tcChecker(t, "carlucci2015,shaper=netem")
		c.wholeQdiscLine(base, tc.after)
		if l := c.res.Lines[0]; l.Pass != tc.pass {
			t.Errorf("whole check: %+v, want pass %v", l, tc.pass)
		}
	}
}
