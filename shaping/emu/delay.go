package emu

// delayAt is the one-way delay in force at t (ns): Delay, or with DelayVar the value drawn for
// t's interval: uniform in [Delay-DelayVar, Delay+DelayVar], floored at 0. The draw of interval
// k is a hash of (Seed, k) (SplitMix64, Steele et al., OOPSLA 2014), so it needs no state and
// does not depend on when the pipe is asked.
func (p *Pipe) delayAt(t int64) int64 {
	d := int64(p.cfg.Delay)
	v := int64(p.cfg.DelayVar)
	if v <= 0 {
		return d
	}
	k := uint64(max(t, 0) / int64(p.cfg.DelayVarEvery))
	u := splitmix64(uint64(p.cfg.Seed)*0x9e3779b97f4a7c15 ^ k ^ 0x64656c6179766172)
	return max(d-v+int64(u%uint64(2*v+1)), 0)
}

// splitmix64 is the finaliser of SplitMix64: a bijective 64-bit mix.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// reorderWindow is how many in-order deliveries back the reordering extent is measured.
const reorderWindow = 1024

// reorderTrack counts reordered packets at the pipe's output as RFC 4737 defines them: a packet
// is reordered when its sequence number (its arrival order at the pipe) is below NextExp, the
// highest delivered so far plus one (section 3.3; losses do not count). Its extent is its
// delivery position minus the position of the earliest delivered packet with a higher sequence
// number (section 4.2.1); those earliest packets are the running maxima, kept in a ring.
type reorderTrack struct {
	nextExp    uint64
	pos        int64
	highs      [reorderWindow]struct{ pos, seq int64 }
	head, size int
}

// deliver records the delivery of seq and reports whether it was reordered, and its extent.
func (r *reorderTrack) deliver(seq uint64) (bool, int64) {
	r.pos++
	if seq >= r.nextExp {
		r.nextExp = seq + 1
		i := (r.head + r.size) % reorderWindow
		if r.size == reorderWindow {
			r.head = (r.head + 1) % reorderWindow
		} else {
			r.size++
		}
		r.highs[i].pos, r.highs[i].seq = r.pos, int64(seq)
		return false, 0
	}
	lo, hi := 0, r.size-1 // first running maximum above seq (seqs in the ring increase)
	for lo < hi {
		mid := (lo + hi) / 2
		if r.highs[(r.head+mid)%reorderWindow].seq > int64(seq) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return true, r.pos - r.highs[(r.head+lo)%reorderWindow].pos
}
