package emu

import "time"

// PIEParams are PIE's parameters (RFC 8033 section 4 and 5; zero fields take the defaults).
type PIEParams struct {
	// Target is the reference queue delay QDELAY_REF (default 15 ms, RFC 8033 section 5.1).
	Target time.Duration
	// TUpdate is the interval between drop-probability updates (default 15 ms).
	TUpdate time.Duration
	// Alpha and Beta are the controller's gains in 1/s (defaults 0.125 and 1.25).
	Alpha, Beta float64
	// MaxBurst is the burst allowance after an idle queue (default 150 ms).
	MaxBurst time.Duration
	// MarkECNTh is the drop probability under which ECN-capable packets are marked instead of
	// dropped (default 0.1, RFC 8033 section 5.1).
	MarkECNTh float64
}

// Defaults of PIE, RFC 8033 section 5.1 (and Linux sch_pie, whose packet limit is 1000).
const (
	DefaultPIETarget   = 15 * time.Millisecond
	DefaultPIETUpdate  = 15 * time.Millisecond
	DefaultPIEAlpha    = 0.125
	DefaultPIEBeta     = 1.25
	DefaultPIEMaxBurst = 150 * time.Millisecond
	DefaultPIEMarkECN  = 0.1
)

func (c PIEParams) withDefaults() PIEParams {
	if c.Target <= 0 {
		c.Target = DefaultPIETarget
	}
	if c.TUpdate <= 0 {
		c.TUpdate = DefaultPIETUpdate
	}
	if c.Alpha <= 0 {
		c.Alpha = DefaultPIEAlpha
	}
	if c.Beta <= 0 {
		c.Beta = DefaultPIEBeta
	}
	if c.MaxBurst <= 0 {
		c.MaxBurst = DefaultPIEMaxBurst
	}
	if c.MarkECNTh <= 0 {
		c.MarkECNTh = DefaultPIEMarkECN
	}
	return c
}

// pieQueue is a FIFO with PIE's random early drop at enqueue and a droptail limit. The queue
// delay is measured with timestamps (RFC 8033 section 5.2 allows it instead of the departure
// rate estimate): the sojourn time of the last packet dequeued, 0 when the queue is empty.
type pieQueue struct {
	fifo      fifoQueue
	par       PIEParams
	prob      float64
	qdelay    int64 // sojourn of the last dequeued packet (ns)
	qdelayOld int64
	burst     int64   // burst allowance left (ns)
	nextTick  int64   // next probability update
	accu      float64 // accumulated drop probability since the last early drop (de-randomization)
}

func newPIEQueue(par PIEParams) *pieQueue {
	par = par.withDefaults()
	return &pieQueue{par: par, burst: int64(par.MaxBurst), nextTick: int64(par.TUpdate)}
}

func (q *pieQueue) len() int { return q.fifo.len() }

// tick runs every probability update due at or before now, in order. Long idle periods, once
// the controller has settled at zero, are skipped in one step.
func (q *pieQueue) tick(now int64) {
	step := int64(q.par.TUpdate)
	for q.nextTick <= now {
		if q.fifo.len() == 0 && q.prob == 0 && q.qdelay == 0 && q.qdelayOld == 0 && q.burst == int64(q.par.MaxBurst) {
			q.nextTick += (now - q.nextTick) / step * step
			if q.nextTick <= now {
				q.nextTick += step
			}
			return
		}
		q.update()
		q.nextTick += step
	}
}

// update is RFC 8033's calculate_drop_prob (section 4.2, with the auto-tuning of section 5.1's
// pseudocode, the 2 % cap on steps above 10 %, the extra 2 % above 250 ms of delay, and the
// exponential decay when the queue is idle) and the burst allowance of section 4.4.
func (q *pieQueue) update() {
	cur := q.qdelay
	if q.fifo.len() == 0 {
		cur = 0
	}
	sec := float64(time.Second)
	p := q.par.Alpha*float64(cur-int64(q.par.Target))/sec + q.par.Beta*float64(cur-q.qdelayOld)/sec
	switch {
	case q.prob < 0.000001:
		p /= 2048
	case q.prob < 0.00001:
		p /= 512
	case q.prob < 0.0001:
		p /= 128
	case q.prob < 0.001:
		p /= 32
	case q.prob < 0.01:
		p /= 8
	case q.prob < 0.1:
		p /= 2
	}
	if q.prob >= 0.1 && p > 0.02 {
		p = 0.02
	}
	if cur > int64(250*time.Millisecond) {
		p += 0.02
	}
	q.prob += p
	if cur == 0 && q.qdelayOld == 0 {
		q.prob *= 0.98
	}
	q.prob = min(max(q.prob, 0), 1)
	q.burst = max(q.burst-int64(q.par.TUpdate), 0)
	if q.prob == 0 && cur < int64(q.par.Target)/2 && q.qdelayOld < int64(q.par.Target)/2 {
		q.burst = int64(q.par.MaxBurst)
	}
	q.qdelayOld = cur
}

// De-randomization thresholds of the accumulated drop probability (RFC 8033 section 5.4).
const (
	pieAccuNoDrop   = 0.85 // below: never drop
	pieAccuSureDrop = 8.5  // at or above: always drop
)

// dropEarly is RFC 8033's drop_early (section 4.1 and 5.1) with its de-randomization (section
// 5.4, as Linux's sch_pie does since 5.1): no random drop during the burst allowance, when the
// delay is low and the probability small, or when the queue holds at most two packets' worth
// (here: two maximum-size packets); otherwise the drop probability accumulates from arrival to
// arrival (reset when it is 0) and a packet is never dropped while the sum is below 0.85,
// always at 8.5 or above, and in between with the drop probability; the sum restarts at 0
// after each drop. So drops come at most 8.5/p and, for p <= 0.85, at least 0.85/p arrivals
// apart, instead of the Bernoulli spacing whose short gaps drop bursts of packets.
func (q *pieQueue) dropEarly(s *server) bool {
	if q.burst > 0 {
		return false
	}
	if q.qdelayOld < int64(q.par.Target)/2 && q.prob < 0.2 {
		return false
	}
	if q.fifo.b <= 2*s.maxPacket {
		return false
	}
	if q.prob == 0 {
		q.accu = 0
		return false
	}
	q.accu += q.prob
	switch {
	case q.accu < pieAccuNoDrop:
		return false
	case q.accu >= pieAccuSureDrop-1e-9: // 85 x 0.1 sums to 8.4999... in floating point
	case s.p.aqm.Float64() >= q.prob:
		return false
	}
	q.accu = 0
	return true
}

func (q *pieQueue) enqueue(s *server, now int64, e entry) Verdict {
	q.tick(now)
	if q.dropEarly(s) {
		if !(q.prob <= q.par.MarkECNTh && s.mark(e)) {
			s.dropAQM(e)
			return DroppedAQM
		}
	}
	return q.fifo.enqueue(s, now, e)
}

func (q *pieQueue) dequeue(_ *server, now int64) (entry, bool) {
	q.tick(now)
	e, ok := q.fifo.pop()
	if ok {
		q.qdelay = now - e.enq
		if q.fifo.len() == 0 {
			q.qdelay = 0
		}
	}
	return e, ok
}
