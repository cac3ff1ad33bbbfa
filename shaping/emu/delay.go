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

// maxLanes bounds the lanes of a lane delay line; a configuration that could need more (a
// delay variation interval much shorter than the delay) uses the heap.
const maxLanes = 16

// lane is a FIFO part of the delay line: packets that entered it in one delay-variation
// interval with the same reordering hold get non-decreasing delivery times.
type lane struct {
	k    int64 // delay-variation interval
	held bool  // held back by reordering
	last int64 // latest delivery time handed out in the lane (order keeping)
	q    ring[pending]
}

// lanes is a delay line made of a few FIFO lanes, merged at the output by delivery time then
// arrival: it orders delay variation and reordering holds exactly like a heap at the cost of a
// scan over the (few) active lanes.
type lanes struct {
	active []*lane
	free   []*lane
}

// push adds pd to the lane (k, held), creating it from the free list if needed. Per-packet
// jitter keeps order within the lane.
func (l *lanes) push(k int64, held bool, pd pending) {
	var ln *lane
	for i := len(l.active) - 1; i >= 0; i-- {
		if a := l.active[i]; a.k == k && a.held == held {
			ln = a
			break
		}
	}
	if ln == nil {
		if n := len(l.free); n > 0 {
			ln = l.free[n-1]
			l.free = l.free[:n-1]
		} else {
			ln = &lane{}
		}
		ln.k, ln.held, ln.last = k, held, 0
		l.active = append(l.active, ln)
	}
	pd.deliver = max(pd.deliver, ln.last)
	ln.last = pd.deliver
	ln.q.push(pd)
}

// head is the index of the lane whose front is delivered first, or -1.
func (l *lanes) head() int {
	best := -1
	for i, ln := range l.active {
		if ln.q.len() == 0 {
			continue
		}
		f := ln.q.front()
		if best < 0 {
			best = i
			continue
		}
		b := l.active[best].q.front()
		if f.deliver < b.deliver || f.deliver == b.deliver && f.seq < b.seq {
			best = i
		}
	}
	return best
}

// pop removes the front of lane i; an emptied lane goes back to the free list.
func (l *lanes) pop(i int) pending {
	ln := l.active[i]
	pd := ln.q.pop()
	if ln.q.len() == 0 {
		copy(l.active[i:], l.active[i+1:])
		l.active[len(l.active)-1] = nil
		l.active = l.active[:len(l.active)-1]
		l.free = append(l.free, ln)
	}
	return pd
}

func (l *lanes) len() int {
	n := 0
	for _, ln := range l.active {
		n += ln.q.len()
	}
	return n
}
