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
// measured between: the last read returning at or before each edge (from, to) of the steady
// window. A read's bytes arrived at the transport between the previous read and it, so the
// bytes read after one read up to and including a later one, over the time between the two,
// is the goodput of exactly that time. Counting the reads inside [from, to) over to - from
// instead (the bins' mean) is biased whenever an edge falls in a receive hole: a lost packet
// holds back every byte behind it until its retransmission (head-of-line blocking, about one
// RTT), and the catch-up read just after from carries bytes that arrived before it. On a
// 10 Mbit/s, 36 ms link quic-go's NewReno flow has such a hole near 2 s in most runs, and its
// 2 s window measured 9.838 Mbit/s, over the 9.777 the link carries of QUIC payload
// (TestIntegrationNgtcp2Flows, 2026-12-04). Note is called by the one goroutine reading;
// Goodput after it is done.
type ReadEdges struct {
	from, to time.Time
	last     [2]readEdge
}

// readEdge is the last read at or before an edge: when it returned and the bytes read up to
// and including it.
type readEdge struct {
	at  time.Time
	cum int64
	ok  bool
}

// NewReadEdges returns a ReadEdges for a steady window [from, to].
func NewReadEdges(from, to time.Time) *ReadEdges { return &ReadEdges{from: from, to: to} }

// Note records a read that returned at at, cum bytes having been read up to and including it.
func (e *ReadEdges) Note(at time.Time, cum int64) {
	for i, edge := range [2]time.Time{e.from, e.to} {
		if !at.After(edge) {
			e.last[i] = readEdge{at: at, cum: cum, ok: true}
		}
	}
}

// Goodput returns the goodput in bit/s between the two edge reads, and the times it is
// measured between. Without a read at or before from, the window opens at from with nothing
// read; without a read in (its opening, to], the goodput is 0 over [from, to].
func (e *ReadEdges) Goodput() (bps float64, from, to time.Time) {
	a, b := e.last[0], e.last[1]
	if !a.ok {
		a = readEdge{at: e.from}
	}
	if !b.ok || !b.at.After(a.at) || b.cum == a.cum {
		return 0, e.from, e.to
	}
	return float64(b.cum-a.cum) * 8 / b.at.Sub(a.at).Seconds(), a.at, b.at
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
