package selfcheck

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/shaping"
)

// The idle RTT of a tc-shaped link is judged against a reference pair probed at the same
// moments: each link probe is sent together with a reference probe (microseconds apart, the
// first of the two alternating, on one CPU), so both meet the same machine (the same timer
// lateness, the same stalls of a descheduled vCPU) and the difference of the two RTTs is the
// link's own addition over the reference's netem delay. The median of those paired differences
// is judged by a distribution-free confidence interval, so the tolerance is the measured
// spread, never a constant widened for a busy machine.

// Paired-difference rule constants (stated on the lines that use them).
const (
	// pairedProbes is the number of judged probe pairs, judged as ABBA blocks of two (a warm-up
	// pair before them is not judged: it meets each socket's and route's first use; neither
	// pair resolves a neighbour, both have permanent entries, see netem.Build).
	pairedProbes = 40
	// pairedConfidence is the least coverage of the median's interval.
	pairedConfidence = 0.99
	// pairedSlack is how far the median paired difference may lie from the spec's (the tbf and
	// AQM dequeue path the reference lacks; the interval must reach within it).
	pairedSlack = 300 * time.Microsecond
	// pairedDetect is the RTT error the median line must always detect: the interval may be at
	// most pairedDetect - pairedSlack wide (plus the spread the spec's own jitter explains), so
	// that an interval reaching the slack band cannot also hold a link pairedDetect off.
	pairedDetect = 1 * time.Millisecond
)

// medianCI is the distribution-free confidence interval of the median of sorted (ascending)
// from the sign test: [x(k), x(m-k+1)] (1-based order statistics) for the largest k with
// P(Binomial(m, 1/2) <= k-1) <= (1-conf)/2; its coverage is 1 - 2 P(Binomial(m, 1/2) <= k-1)
// (W. J. Conover, Practical Nonparametric Statistics, 3rd ed., 1999, section 3.2, "confidence
// interval for a quantile"). ok is false when m is too small for conf (m < 8 at 99 %).
func medianCI(sorted []time.Duration, conf float64) (lo, hi time.Duration, coverage float64, ok bool) {
	m := len(sorted)
	tail := (1 - conf) / 2
	k, cdf := 0, 0.0 // cdf = P(X <= k-1)
	for k < m {
		next := cdf + binomPMF(m, k)
		if next > tail {
			break
		}
		cdf, k = next, k+1
	}
	if k == 0 || k > m-k+1 {
		return 0, 0, 0, false
	}
	return sorted[k-1], sorted[m-k], 1 - 2*cdf, true
}

// binomPMF is P(Binomial(m, 1/2) = j).
func binomPMF(m, j int) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x + 1)); return v }
	return math.Exp(lg(m) - lg(j) - lg(m-j) - float64(m)*math.Ln2)
}

// pairedRTTs are the answered probe pairs, in the order sent: link[i] and ref[i] are one pair,
// linkFirst[i] says whether its link probe was sent first; warmLinkLost counts the link probes
// of the warm-up pairs (not judged) that went unanswered.
type pairedRTTs struct {
	link, ref    []time.Duration
	linkFirst    []bool
	warmLinkLost int
}

// blocks averages each pair whose link probe went first with the next pair whose reference
// probe went first (or the reverse), link minus reference: an ABBA block, in which what being
// sent first or second costs cancels. Pairs left without a partner are not used.
func (p pairedRTTs) blocks() []time.Duration {
	var out []time.Duration
	pending := -1
	for i := range p.link {
		if pending >= 0 && p.linkFirst[pending] != p.linkFirst[i] {
			out = append(out, (p.link[pending]-p.ref[pending]+p.link[i]-p.ref[i])/2)
			pending = -1
			continue
		}
		pending = i
	}
	return out
}

// orderMedians are the median paired differences of the pairs whose link probe went first and
// of those whose reference probe went first (0 when there are none).
func (p pairedRTTs) orderMedians() (linkFirst, refFirst time.Duration) {
	var a, b []time.Duration
	for i := range p.link {
		if p.linkFirst[i] {
			a = append(a, p.link[i]-p.ref[i])
		} else {
			b = append(b, p.link[i]-p.ref[i])
		}
	}
	if len(a) > 0 {
		linkFirst = median(a)
	}
	if len(b) > 0 {
		refFirst = median(b)
	}
	return linkFirst, refFirst
}

// pairedStats summarises the paired differences (link minus reference) of the idle probes.
type pairedStats struct {
	pairs, blocks   int
	med, lo, hi     time.Duration // the differences' median and its interval
	coverage        float64       // the interval's coverage (0..1)
	intervalOK      bool          // false: too few pairs for an interval
	maxDiff         time.Duration // the largest difference
	linkMed, refMed time.Duration // the link's and the reference's median RTTs
	// linkFirstMed and refFirstMed are the median differences by which probe went first.
	linkFirstMed, refFirstMed time.Duration
}

// pairStats computes pairedStats from the answered pairs: the median and its interval from the
// ABBA blocks' differences, the largest difference from the single pairs.
func pairStats(p pairedRTTs) pairedStats {
	s := pairedStats{pairs: len(p.link)}
	d := p.blocks()
	s.blocks = len(d)
	if len(p.link) == 0 {
		return s
	}
	s.linkMed, s.refMed = median(p.link), median(p.ref)
	s.maxDiff = p.link[0] - p.ref[0]
	for i := range p.link {
		s.maxDiff = max(s.maxDiff, p.link[i]-p.ref[i])
	}
	s.linkFirstMed, s.refFirstMed = p.orderMedians()
	if len(d) == 0 {
		return s
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	s.med = medianOfSorted(d)
	s.lo, s.hi, s.coverage, s.intervalOK = medianCI(d, pairedConfidence)
	return s
}

func medianOfSorted(d []time.Duration) time.Duration {
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}

// judgePairedMedian judges the median paired difference s against want (the link's expected
// RTT minus the reference's netem delay; 0 for a tc link without jitter): the interval must
// reach into want-pairedSlack..want+pairedSlack+above (above: the spec's own one-sided slack)
// and be at most pairedDetect-pairedSlack+spread wide (spread: the width the spec's jitter
// alone explains). A miss is "the data contradict it"; a wider interval is "too noisy to
// tell" (a link pairedDetect off could hide in it); both fail, as do fewer pairs than the
// interval needs.
func judgePairedMedian(s pairedStats, want, above, spread time.Duration) (pass bool, verdict string) {
	if !s.intervalOK {
		return false, fmt.Sprintf("too few answered blocks to tell (%d; a %.0f %% interval needs 8)", s.blocks, pairedConfidence*100)
	}
	width := pairedDetect - pairedSlack + spread
	switch {
	case s.hi < want-pairedSlack || s.lo > want+pairedSlack+above:
		return false, "the data contradict it"
	case s.hi-s.lo > width:
		return false, fmt.Sprintf("too noisy to tell: interval %s wide > %s", quantity.FormatMsUnit(quantity.Ms(s.hi-s.lo), 2), quantity.FormatMsUnit(quantity.Ms(width), 2))
	}
	return true, ""
}

// idlePaired probes the idle RTT of a tc-shaped link in pairs with the reference pair
// (probePairs), reading the qdisc counters after them, then states the host overhead,
// the paired idle RTT lines, the lost probes and the qdisc counters.
func (c *checker) idlePaired(ctx context.Context) error {
	// Nothing crossed the link since hostOverhead read its counters (the reference's plain
	// probes went over the other pair): that reading is the one before the probes.
	q, counts := c.l.(qdiscCounter)
	counts = counts && c.qdiscStart != nil
	before := c.qdiscStart
	pairs, linkLost, refLost, err := c.probePairs(ctx, pairedProbes)
	var after []shaping.QdiscStats
	if err == nil && counts {
		after, err = q.QdiscStats(ctx)
	}
	if oerr := c.overheadLine(pairs.ref, refLost); err == nil {
		err = oerr
	}
	if err != nil {
		return err
	}
	c.pairedLines(pairs)
	c.lostProbesLine(pairedProbes, pairedProbes-linkLost)
	if counts {
		c.idleQdiscLine(before, after, linkLost+pairs.warmLinkLost)
	}
	return nil
}

// pairedLines judges the idle RTT of a tc-shaped link from its answered pairs. The median line:
// judgePairedMedian of the paired differences against the link's expected RTT less the
// reference's (2 x its netem delay). The min..max line: the minimum as for the emulator (the
// link alone bounds it: the host only adds), the maximum as the largest paired difference, at
// most rttMaxSlack plus the spec's own one-way slack above that expectation: a stall of the
// machine is forgiven only as far as the reference probe sent with it suffered it too.
func (c *checker) pairedLines(p pairedRTTs) {
	link := p.link
	name := fmt.Sprintf("idle RTT median (%d probes, each paired with a reference probe)", pairedProbes)
	if len(link) == 0 {
		c.add(name, quantity.FormatMsUnit(quantity.Ms(c.expectedRTT()), 2), fmt.Sprintf("no pair of %d answered", pairedProbes), ">= 8 answered pairs", false)
		return
	}
	s := pairStats(p)
	sorted := append([]time.Duration(nil), link...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	c.res.RTTMinMs, c.res.RTTMedianMs, c.res.RTTMaxMs = quantity.Ms(sorted[0]), quantity.Ms(s.linkMed), quantity.Ms(sorted[len(sorted)-1])
	c.res.Pairs, c.res.RefRTTMedianMs, c.res.PairedDiffMedianMs = s.pairs, quantity.Ms(s.refMed), quantity.Ms(s.med)
	c.res.PairedDiffLoMs, c.res.PairedDiffHiMs, c.res.PairedDiffMaxMs, c.res.PairedCoverage = quantity.Ms(s.lo), quantity.Ms(s.hi), quantity.Ms(s.maxDiff), s.coverage
	exp := c.expectedRTT()
	want := exp - c.overhead - 2*c.refDelay()
	hold := c.slackOneWay(true) + c.slackOneWay(false) - 2*c.spec.Jitter - c.spec.DownImp.DelayVar - c.spec.UpImp.DelayVar
	// The spec's own jitter widens the interval: by twice the 99 % width it gives a median of
	// these pairs (the interval's ends are order statistics, which scatter more than the median).
	spread := 4 * c.medianTolerance(s.pairs)
	pass, verdict := judgePairedMedian(s, want, hold, spread)
	interval := "no interval"
	if s.intervalOK {
		interval = fmt.Sprintf("%.1f %% interval %+.2f..%+.2f ms", s.coverage*100, quantity.Ms(s.lo), quantity.Ms(s.hi))
	}
	measured := fmt.Sprintf("link %s, reference %s (netem %s each way); difference median %+.2f ms, %s (sign test over %d ABBA blocks of %d pairs; by the probe sent first: link %+.2f, reference %+.2f ms)",
		quantity.FormatMsUnit(quantity.Ms(s.linkMed), 2), quantity.FormatMsUnit(quantity.Ms(s.refMed), 2), c.refDelay(), quantity.Ms(s.med), interval, s.blocks, s.pairs, quantity.Ms(s.linkFirstMed), quantity.Ms(s.refFirstMed))
	if verdict != "" {
		measured += ": " + verdict
	}
	c.add(name, fmt.Sprintf("%s (link - reference %+.2f ms)", quantity.FormatMsUnit(quantity.Ms(exp), 2), quantity.Ms(want)), measured,
		fmt.Sprintf("the interval overlaps %+.2f..%+.2f ms and is at most %s wide (so a %s error cannot pass)",
			quantity.Ms(want-pairedSlack), quantity.Ms(want+pairedSlack+hold), quantity.FormatMsUnit(quantity.Ms(pairedDetect-pairedSlack+spread), 2), quantity.FormatMsUnit(quantity.Ms(pairedDetect), 2)), pass)
	below := 2*c.spec.Jitter + c.spec.DownImp.DelayVar + c.spec.UpImp.DelayVar + c.overhead
	above := c.slackOneWay(true) + c.slackOneWay(false)
	minOK := sorted[0] >= exp-rttSlackBelow-below
	maxOK := s.maxDiff <= want+rttMaxSlack+above
	c.add("idle RTT min..max", quantity.FormatMsUnit(quantity.Ms(exp), 2), fmt.Sprintf("%s..%s; largest link - reference of one pair %+.2f ms", quantity.FormatMsUnit(quantity.Ms(sorted[0]), 2), quantity.FormatMsUnit(quantity.Ms(sorted[len(sorted)-1]), 2), quantity.Ms(s.maxDiff)),
		fmt.Sprintf("min >= -%s; largest difference <= %+.2f ms (a stall counts only as far as the reference probe sent with it suffered it)", quantity.FormatMsUnit(quantity.Ms(rttSlackBelow+below), 2), quantity.Ms(want+rttMaxSlack+above)),
		minOK && maxOK)
}
