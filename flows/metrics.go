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
