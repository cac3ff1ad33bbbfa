package flows

import (
	"math"
	"time"
)

// Steady-state and convergence parameters (documented on result.Flow).
const (
	// MinSkip is the least time cut from a flow's start before its steady state: slow start to
	// a multi-megabyte window takes about a second, and a 1 BDP queue fills after it. Slow start
	// doubles the window once per RTT (RFC 5681 section 3.1) from an initial 10 segments, about
	// 14.6 KB (RFC 6928), so a 4 MB window takes log2(4 MB / 14.6 KB) ~ 8 RTTs: 0.8 s at 100 ms.
	MinSkip = 2 * time.Second
	// SkipRTTs is how many base RTTs are cut when that is more than MinSkip: slow start doubles
	// the window once per RTT, so 10 RTTs reach 1000x the initial window.
	SkipRTTs = 10
	// ConvergeJain is the Jain's index a mix must reach to count as converged to fair shares.
	ConvergeJain = 0.9
	// ConvergeSmooth is the moving-average window of the goodputs compared for convergence.
	ConvergeSmooth = time.Second
	// ConvergeHold is how long the index must stay at or above ConvergeJain.
	ConvergeHold = 2 * time.Second
)

// Jain returns Jain's fairness index of the allocations xs: (sum x)^2 / (n * sum x^2), in
// [1/n, 1], 1 when all are equal (R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of
// Fairness and Discrimination for Resource Allocation in Shared Computer Systems", DEC-TR-301,
// 1984, eq. 1). It is NaN for no allocations and 1 when all are 0.
func Jain(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 1
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// Skip returns the time cut from the start of a flow of length dur before its steady state:
// max(MinSkip, SkipRTTs x rtt), but at most half of dur.
func Skip(rtt, dur time.Duration) time.Duration {
	return min(max(MinSkip, SkipRTTs*rtt), dur/2)
}

// Window is a span of whole bins [From, To) of a series, bins counted from the run's start.
type Window struct{ From, To int }

// Len is the number of bins in w (0 when empty).
func (w Window) Len() int { return max(w.To-w.From, 0) }

// Seconds returns the window's bounds in seconds for bins of width bin.
func (w Window) Seconds(bin time.Duration) (from, to float64) {
	return float64(w.From) * bin.Seconds(), float64(w.To) * bin.Seconds()
}

// SteadyWindow returns the bins of a flow's steady state: from start+Skip(rtt, end-start),
// rounded up to a bin boundary, to end, rounded down.
func SteadyWindow(start, end, rtt, bin time.Duration) Window {
	from := start + Skip(rtt, end-start)
	return Window{From: int((from + bin - 1) / bin), To: int(end / bin)}
}

// Intersect returns the bins common to every window (empty when they do not overlap).
func Intersect(ws []Window) Window {
	if len(ws) == 0 {
		return Window{}
	}
	out := ws[0]
	for _, w := range ws[1:] {
		out.From, out.To = max(out.From, w.From), min(out.To, w.To)
	}
	return out
}

// ReadEdges finds, while a flow's body is read, the two reads its steady-state goodput is
// measured between, one at or before each edge (from, to) of the steady window. A read's bytes
// arrived at the transport before it returned, so the bytes read after one read up to and
// including a later one, over the time between the two, is the goodput of exactly that time,
// provided nothing had arrived and was still held back at the first read and nothing at the
// second. A receive hole holds bytes back: a lost packet holds every byte behind it until its
// retransmission arrives (head-of-line blocking, about one RTT), and the catch-up read after
// it carries bytes that arrived long before. An edge at such a read biases the goodput: at the
// from edge upwards, at the to edge downwards. Two measured cases on a 10 Mbit/s, 36 ms link
// (TestIntegrationNgtcp2Flows, quic-go's NewReno flow, which has a loss episode near 2 s in
// most runs): the bins' mean over the window measured 9.838 Mbit/s (2026-12-04), and the last
// read before the edge 9.793 (CI, 2026-12-07), both over the 9.777 the link carries of QUIC
// payload: that read fell inside a recovery of two losses, after the first retransmission and
// 1 ms before the second, which released 83 KB held since before it.
//
// So an edge read must be clean: no later read within the horizon (one loaded RTT: the base
// RTT plus the queue's drain time, the longest a retransmission fills a hole after a read)
// may have read more than the link can carry since it, rate x elapsed plus a slack of three
// MTUs and 3 ms at the link's rate (receive batching and the reader's own scheduling). Bytes
// beyond that had arrived before the read: they were held. Each edge is the last clean read
// at or before it and at most the lookback (a quarter of the window) before it, and a read is
// clean only when reads went on for the whole horizon after it, so the to edge lies at least
// one horizon before the window's end. Without a clean read in the lookback the edge is the
// last read at or before it, as before, and Goodput reports the bytes it held. On a link of
// unlimited rate no read can be judged (rate 0): every read counts as clean.
//
// Note is called by the one goroutine reading; Goodput after it is done.
type ReadEdges struct {
	from, to          time.Time
	rate              float64 // the link's rate in bytes per second; 0 = unlimited (not judged)
	slack             float64 // bytes a later read may be ahead of the link's rate
	horizon, lookback time.Duration
	last              [2]readEdge // the last read at or before each edge
	reads             []readEdge  // reads in [edge-lookback, edge+horizon] of either edge
}

// readEdge is a read: when it returned and the bytes read up to and including it.
type readEdge struct {
	at  time.Time
	cum int64
	ok  bool
}

// EdgeSlackDelay is the time at the link's rate that a read may be ahead of the link, beside
// three MTUs, before ReadEdges counts the bytes as held back (see ReadEdges).
const EdgeSlackDelay = 3 * time.Millisecond

// NewReadEdges returns a ReadEdges for a steady window [from, to] on a link of rate bit/s (0:
// unlimited), MTU mtu bytes and a loaded RTT of horizon (the base RTT plus the queue's drain
// time). The horizon is at most an eighth of the window and the lookback a quarter.
func NewReadEdges(from, to time.Time, rate float64, mtu int, horizon time.Duration) *ReadEdges {
	w := to.Sub(from)
	return &ReadEdges{from: from, to: to, rate: rate / 8, slack: 3*float64(mtu) + rate/8*EdgeSlackDelay.Seconds(),
		horizon: min(horizon, w/8), lookback: w / 4}
}

// Note records a read that returned at at, cum bytes having been read up to and including it.
func (e *ReadEdges) Note(at time.Time, cum int64) {
	r := readEdge{at: at, cum: cum, ok: true}
	near := false
	for i, edge := range [2]time.Time{e.from, e.to} {
		if !at.After(edge) {
			e.last[i] = r
		}
		near = near || !at.Before(edge.Add(-e.lookback)) && !at.After(edge.Add(e.horizon))
	}
	if near {
		e.reads = append(e.reads, r)
	}
}

// held returns the bytes the read reads[i] is known to have held back: the most any later read
// within the horizon read beyond the link's rate and the slack (0 when none did), and whether
// reads went on for the whole horizon after it.
func (e *ReadEdges) held(i int) (held float64, verified bool) {
	a := e.reads[i]
	for _, c := range e.reads[i+1:] {
		dt := c.at.Sub(a.at)
		if dt > e.horizon {
			return held, true
		}
		held = max(held, float64(c.cum-a.cum)-e.rate*dt.Seconds()-e.slack)
		if dt == e.horizon {
			return held, true
		}
	}
	return held, false
}

// edge returns the read an edge is measured at (see ReadEdges) and the bytes it held back.
func (e *ReadEdges) edge(k int, edge time.Time) (readEdge, float64) {
	if e.rate <= 0 {
		return e.last[k], 0
	}
	for i := len(e.reads) - 1; i >= 0; i-- {
		r := e.reads[i]
		if r.at.After(edge) {
			continue
		}
		if r.at.Before(edge.Add(-e.lookback)) {
			break
		}
		if held, ok := e.held(i); ok && held <= 0 {
			return r, 0
		}
	}
	if !e.last[k].ok {
		return e.last[k], 0
	}
	for i, r := range e.reads {
		if r == e.last[k] {
			held, _ := e.held(i)
			return r, max(held, 0)
		}
	}
	return e.last[k], 0
}

// Goodput returns the goodput in bit/s between the two edge reads, the times it is measured
// between, and the bytes the edge reads are known to have held back beyond the slack (0 when
// both are clean; such bytes bias the goodput by at most held x 8 / (to - from)). Without a
// read at or before from, the window opens at from with nothing read; without a read in (its
// opening, to], the goodput is 0 over [from, to].
func (e *ReadEdges) Goodput() (bps float64, from, to time.Time, held int64) {
	a, ha := e.edge(0, e.from)
	b, hb := e.edge(1, e.to)
	if !a.ok {
		a = readEdge{at: e.from}
	}
	if !b.ok || !b.at.After(a.at) || b.cum == a.cum {
		return 0, e.from, e.to, 0
	}
	return float64(b.cum-a.cum) * 8 / b.at.Sub(a.at).Seconds(), a.at, b.at, int64(math.Ceil(ha + hb))
}

// Binner counts bytes into fixed-width bins of time since an epoch. Add may be called from one
// goroutine per Binner; reading the bins (Rates) must wait until Adds are done.
type Binner struct {
	epoch time.Time
	bin   time.Duration
	bytes []int64
}

// NewBinner returns a Binner with n bins of width bin starting at epoch.
func NewBinner(epoch time.Time, bin time.Duration, n int) *Binner {
	return &Binner{epoch: epoch, bin: bin, bytes: make([]int64, n)}
}

// Add counts n bytes received at time t (bins before the epoch or past the last are clamped to
// the first or last bin).
func (b *Binner) Add(t time.Time, n int) {
	i := int(t.Sub(b.epoch) / b.bin)
	b.bytes[min(max(i, 0), len(b.bytes)-1)] += int64(n)
}

// Bytes returns the byte count of every bin.
func (b *Binner) Bytes() []int64 { return b.bytes }

// Rates converts byte counts per bin of width bin into bit/s.
func Rates(bytes []int64, bin time.Duration) []float64 {
	out := make([]float64, len(bytes))
	for i, n := range bytes {
		out[i] = float64(n) * 8 / bin.Seconds()
	}
	return out
}

// MeanRate is the mean of the bit/s series over w (NaN for an empty window).
func MeanRate(series []float64, w Window) float64 {
	w.From, w.To = max(w.From, 0), min(w.To, len(series))
	if w.Len() == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, v := range series[w.From:w.To] {
		sum += v
	}
	return sum / float64(w.Len())
}

// Converge returns the time in bins from bin start until Jain's index of the flows' trailing
// moving averages over smooth bins (from bin start on) reaches threshold at the end of a bin and
// stays at or above it for the next hold bins; only bins before end (where every flow is active)
// count. The result is at least smooth (the first moving average ends there); ok is false when
// the index never holds.
func Converge(series [][]float64, start, end, smooth, hold int, threshold float64) (bins int, ok bool) {
	if len(series) < 2 || smooth < 1 {
		return 0, false
	}
	run := 0
	for t := start + smooth - 1; t < end; t++ {
		xs := make([]float64, len(series))
		for i, s := range series {
			xs[i] = MeanRate(s, Window{From: t - smooth + 1, To: t + 1})
		}
		if Jain(xs) >= threshold {
			run++
		} else {
			run = 0
		}
		if run > hold {
			return t - hold + 1 - start, true
		}
	}
	return 0, false
}
