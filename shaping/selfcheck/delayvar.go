package selfcheck

import (
	"slices"
	"time"

	"github.com/pltlab/pltlab/shaping/emu"
)

// dvFit is a sequenced stream cut into the emulator's delay-variation intervals. The emulator
// redraws the delay every interval of its own clock (emu's delayAt), whose boundaries the
// stream's clock sees at an unknown phase: fitDelayVar finds it from the stream's own delays.
// Cutting at the first send instead (as the check did up to 2026-12-04) put a boundary inside
// most intervals, so every interval's delay "noise" held a whole draw difference (1.5 s summed
// over a 5 s stream), and the reordering line's band covered 0..3900 packets: it could not fail.
type dvFit struct {
	t0    time.Time     // the stream's first send
	phase time.Duration // the first boundary after t0, in [0, every)
	every time.Duration
	// draws is the delay of each interval with packets, in order: the median one-way delay of
	// the packets it holds (the emulator's draw plus a probe's serialization and the host's
	// timing); index 0 is the interval holding the first send.
	draws []time.Duration
	// mad is each interval's median absolute deviation from its draw: the stream's own timing
	// noise (a stall delays a few packets and moves the median little).
	mad []time.Duration
	has []bool // whether an interval holds a packet (a lost interval has no draw)
	// pkts are the received packets in send (sequence) order, each with its interval.
	pkts []dvPacket
}

// dvPacket is one received packet of a fitted stream.
type dvPacket struct {
	sent  time.Time
	delay time.Duration
	iv    int // its interval, by send time
	// alt is the neighbouring interval it may belong to (-1 if none): a packet sent within
	// guard of a boundary reaches the emulator on one side of it or the other.
	alt int
}

// fitDelayVar fits the interval boundaries of a stream sent gap apart through a delay redrawn
// every interval: the phase minimising the sum of |d(i+1) - d(i)| over consecutive packets (in
// send order) that it puts in one interval, on a grid of gap/4 (at least 10 us). A boundary in
// the right place leaves every draw change between two intervals, so only timing noise stays
// inside them; a misplaced one keeps a draw change inside. Ties take the middle of the lowest
// run of the grid. guard is how close to a boundary a packet's side is uncertain (the host's
// timing from send to the emulator's clock). nil with no arrivals.
func fitDelayVar(got []arrival, every, gap, guard time.Duration) *dvFit {
	if len(got) == 0 || every <= 0 {
		return nil
	}
	pk := slices.Clone(got)
	slices.SortFunc(pk, func(a, b arrival) int { return a.seq - b.seq })
	pk = slices.CompactFunc(pk, func(a, b arrival) bool { return a.seq == b.seq })
	t0 := pk[0].sent
	for _, a := range pk {
		if a.sent.Before(t0) {
			t0 = a.sent
		}
	}
	step := max(gap/4, 10*time.Microsecond)
	grid := int((every + step - 1) / step)
	// The grid search is grid × packets (400 × 5,000 for a 100 ms interval): the send offsets
	// and the delay steps are taken once, in nanoseconds, and each phase's cost summed in
	// integers (exact, as ivOf's interval numbers are).
	off, step1 := make([]int64, len(pk)), make([]int64, len(pk))
	for i, a := range pk {
		off[i] = int64(a.sent.Sub(t0))
		if i > 0 {
			step1[i] = int64(absDur(a.recv.Sub(a.sent) - pk[i-1].recv.Sub(pk[i-1].sent)))
		}
	}
	cost := make([]float64, grid)
	ev := int64(every)
	for g := range grid {
		shift := ev - int64(g)*int64(step) // ivOf: (offset - phase + every) / every
		var sum int64
		prev := (off[0] + shift) / ev
		for i := 1; i < len(off); i++ {
			cur := (off[i] + shift) / ev
			if cur == prev {
				sum += step1[i]
			}
			prev = cur
		}
		cost[g] = float64(sum)
	}
	best := slices.Min(cost)
	// The longest circular run of grid points at the minimum (within 1 ns of rounding).
	runStart, runLen := 0, 0
	for g := range grid {
		if cost[g] > best+1 {
			continue
		}
		n := 0
		for n < grid && cost[(g+n)%grid] <= best+1 {
			n++
		}
		if n > runLen {
			runStart, runLen = g, n
		}
	}
	phase := (time.Duration(runStart)*step + time.Duration(runLen-1)*step/2) % every
	f := &dvFit{t0: t0, phase: phase, every: every}
	nIv := ivOf(pk[len(pk)-1].sent, t0, phase, every) + 1
	byIv := make([][]time.Duration, nIv)
	for _, a := range pk {
		j := ivOf(a.sent, t0, phase, every)
		byIv[j] = append(byIv[j], a.recv.Sub(a.sent))
	}
	f.draws, f.mad, f.has = make([]time.Duration, nIv), make([]time.Duration, nIv), make([]bool, nIv)
	for j, ds := range byIv {
		if len(ds) == 0 {
			continue
		}
		f.has[j] = true
		f.draws[j] = medianDur(ds)
		dev := make([]time.Duration, len(ds))
		for i, d := range ds {
			dev[i] = absDur(d - f.draws[j])
		}
		f.mad[j] = medianDur(dev)
	}
	for _, a := range pk {
		j := ivOf(a.sent, t0, phase, every)
		p := dvPacket{sent: a.sent, delay: a.recv.Sub(a.sent), iv: j, alt: -1}
		start := t0.Add(phase + time.Duration(j-1)*every) // the boundary opening interval j
		switch {
		case j > 0 && a.sent.Sub(start) < guard && f.has[j-1]:
			p.alt = j - 1
		case j+1 < nIv && start.Add(every).Sub(a.sent) < guard && f.has[j+1]:
			p.alt = j + 1
		}
		f.pkts = append(f.pkts, p)
	}
	return f
}

// ivOf is the interval of a send at s: 0 before the first boundary t0+phase, then one more per
// boundary every apart.
func ivOf(s, t0 time.Time, phase, every time.Duration) int {
	return int((s.Sub(t0) - phase + every) / every)
}

// medianDur is the median of ds (the lower middle one of an even count); ds is reordered.
func medianDur(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[(len(ds)-1)/2]
}

// drawList is the fitted draws of the intervals with packets, in order.
func (f *dvFit) drawList() []time.Duration {
	var out []time.Duration
	for j, d := range f.draws {
		if f.has[j] {
			out = append(out, d)
		}
	}
	return out
}

// noise is twice the largest median absolute deviation of an interval from its draw: how far
// the stream's timing may move a draw as measured, so a fall as measured, from the emulator's.
func (f *dvFit) noise() time.Duration {
	var m time.Duration
	for j, d := range f.mad {
		if f.has[j] {
			m = max(m, d)
		}
	}
	return 2 * m
}

// reorder predicts the RFC 4737 reordered count of the fitted stream (section 3.3: a packet is
// reordered when a packet sent after it arrived before it). In interval j every packet gets
// the draw D(j), and within an interval order is kept, so the earliest arrival of a later
// interval m is its first packet's, A(m) = s_first(m) + D(m); a packet of interval j sent at s
// is reordered exactly when s + D(j) > min over m > j of A(m). This holds for falls of any
// size, over several intervals as well (2 delayvar > every). Packets within u of that
// threshold are uncertain (jitter, the emulator's and the host's timing), as is the side of a
// packet sent within the guard of a boundary: lo counts the packets reordered however the
// uncertain ones fall, hi those reordered in some way.
func (f *dvFit) reorder(u time.Duration) (lo, hi int) {
	nIv := len(f.draws)
	// An interval's first packet: the earliest sent in it, or sent just before its opening
	// boundary with a delay nearer its draw than the previous interval's (that packet reached
	// the emulator after the boundary).
	first := make([]time.Time, nIv)
	seen := make([]bool, nIv)
	for _, p := range f.pkts {
		j := p.iv
		if p.alt == j+1 && absDur(p.delay-f.draws[p.alt]) < absDur(p.delay-f.draws[j]) {
			j = p.alt
		}
		if !seen[j] || p.sent.Before(first[j]) {
			first[j], seen[j] = p.sent, true
		}
	}
	// after[j] is the earliest first arrival of an interval after j; ok[j] whether there is one.
	after := make([]time.Time, nIv)
	ok := make([]bool, nIv)
	for j := nIv - 2; j >= 0; j-- {
		after[j], ok[j] = after[j+1], ok[j+1]
		if seen[j+1] {
			if a := first[j+1].Add(f.draws[j+1]); !ok[j] || a.Before(after[j]) {
				after[j], ok[j] = a, true
			}
		}
	}
	// margin is by how much the arrival of a packet sent at s in interval j, given the draw
	// D(j), lies past the earliest later arrival; false when there is none.
	margin := func(s time.Time, j int) (time.Duration, bool) {
		if !ok[j] {
			return 0, false
		}
		return s.Add(f.draws[j]).Sub(after[j]), true
	}
	for _, p := range f.pkts {
		sure, maybe := true, false
		for _, j := range []int{p.iv, p.alt} {
			if j < 0 {
				continue
			}
			m, has := margin(p.sent, j)
			sure = sure && has && m > u
			maybe = maybe || has && m > -u
		}
		if sure {
			lo++
		}
		if maybe {
			hi++
		}
	}
	return lo, hi
}

// dvTiming is the host's timing between a probe's send stamp and the emulator's clock, and
// between its release and its receive stamp, that the reordering prediction allows beyond the
// emulator's recorded lateness: 0.5 ms.
const dvTiming = 500 * time.Microsecond

// fitDelayVar fits a direction's stream (fitDelayVar) with that direction's interval, the
// check's stream gap, and a guard of dvTiming plus the emulator's recorded lateness.
func (c *checker) fitDelayVar(down bool, got []arrival) *dvFit {
	_, gap := c.streamShape(down)
	every := cmpOr(c.imp(down).DelayVarEvery, emu.DefaultDelayVarEvery)
	return fitDelayVar(got, every, gap, dvTiming+lateAllowance(c.streamLate))
}
