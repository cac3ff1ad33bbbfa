package emu

import "math/bits"

// hist is a log-linear histogram of non-negative nanosecond values with 64 sub-buckets per
// power of two (relative error under 1.6%), fixed size, so recording never allocates.
type hist struct {
	counts [64 + 64*maxExp]uint32
	n      uint64
	max    int64
}

const maxExp = 40

func bucketOf(v int64) int {
	if v < 64 {
		return int(max(v, 0))
	}
	e := bits.Len64(uint64(v)) - 7
	if e >= maxExp {
		return len(hist{}.counts) - 1
	}
	return 64 + e*64 + int(v>>e) - 64
}

func valueOf(i int) int64 {
	if i < 64 {
		return int64(i)
	}
	e := (i - 64) / 64
	m := int64((i-64)%64 + 64)
	return m<<e + (int64(1)<<e)/2
}

func (h *hist) record(v int64) {
	v = max(v, 0)
	h.counts[bucketOf(v)]++
	h.n++
	h.max = max(h.max, v)
}

// quantile returns the q-quantile (0 < q <= 1) in ns, never above the exact maximum; 0 if empty.
func (h *hist) quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(q*float64(h.n) + 0.999999)
	rank = min(max(rank, 1), h.n)
	var cum uint64
	for i, c := range h.counts {
		cum += uint64(c)
		if cum >= rank {
			return min(valueOf(i), h.max)
		}
	}
	return h.max
}

func (h *hist) reset() { *h = hist{} }
