package emu

import (
	"math"
	"time"
)

// CoDelParams are CoDel's two parameters (RFC 8289 section 4.2 and 4.3).
type CoDelParams struct {
	// Target is the acceptable standing queue delay (default 5 ms, RFC 8289 section 4.4).
	Target time.Duration
	// Interval is the sliding window within which the queue delay must fall below Target once
	// (default 100 ms, RFC 8289 section 4.5).
	Interval time.Duration
}

// Defaults of CoDel (RFC 8289 sections 4.4 and 4.5) and of its packet limit (Linux sch_codel:
// 1000 packets; sch_fq_codel: 10240 packets, RFC 8290 section 5.2.3 / 4.1).
const (
	DefaultCoDelTarget   = 5 * time.Millisecond
	DefaultCoDelInterval = 100 * time.Millisecond
)

func (c CoDelParams) withDefaults() CoDelParams {
	if c.Target <= 0 {
		c.Target = DefaultCoDelTarget
	}
	if c.Interval <= 0 {
		c.Interval = DefaultCoDelInterval
	}
	return c
}

// codelState is CoDel's per-queue state (RFC 8289 section 5.x pseudocode: first_above_time,
// drop_next, count, lastcount, dropping).
type codelState struct {
	firstAbove, dropNext int64
	count, lastCount     uint32
	dropping             bool
}

// controlLaw is t + interval/sqrt(count) (RFC 8289 section 5.5).
func controlLaw(t int64, interval time.Duration, count uint32) int64 {
	return t + int64(float64(interval)/math.Sqrt(float64(count)))
}

// doDequeue takes the head packet and says whether CoDel may drop it (RFC 8289 dodequeue): the
// sojourn time has stayed at or above target for at least interval, and more than one
// maximum-size packet is queued.
func (st *codelState) doDequeue(src *fifoQueue, par *CoDelParams, maxPacket, now int64) (entry, bool, bool) {
	e, ok := src.pop()
	if !ok {
		st.firstAbove = 0
		return e, false, false
	}
	sojourn := now - e.enq
	if sojourn < int64(par.Target) || src.b <= maxPacket {
		st.firstAbove = 0
		return e, true, false
	}
	if st.firstAbove == 0 {
		st.firstAbove = now + int64(par.Interval)
		return e, true, false
	}
	return e, true, now >= st.firstAbove
}

// dequeue is CoDel's dequeue (RFC 8289 section 5.x pseudocode), marking instead of dropping
// when the server's ECN marking applies (then the marked packet is returned at once, as Linux
// does).
func (st *codelState) dequeue(s *server, src *fifoQueue, par *CoDelParams, now int64) (entry, bool) {
	e, ok, okToDrop := st.doDequeue(src, par, s.maxPacket, now)
	if !ok {
		st.dropping = false
		return e, false
	}
	if st.dropping {
		if !okToDrop {
			st.dropping = false
			return e, true
		}
		for now >= st.dropNext && st.dropping {
			st.count++
			if s.mark(e) {
				st.dropNext = controlLaw(st.dropNext, par.Interval, st.count)
				return e, true
			}
			s.dropAQM(e)
			e, ok, okToDrop = st.doDequeue(src, par, s.maxPacket, now)
			if !ok {
				st.dropping = false
				return e, false
			}
			if !okToDrop {
				st.dropping = false
			} else {
				st.dropNext = controlLaw(st.dropNext, par.Interval, st.count)
			}
		}
		return e, true
	}
	if !okToDrop {
		return e, true
	}
	marked := s.mark(e)
	if !marked {
		s.dropAQM(e)
		e, ok, _ = st.doDequeue(src, par, s.maxPacket, now)
	}
	st.dropping = true
	delta := st.count - st.lastCount
	st.count = 1
	if delta > 1 && now-st.dropNext < 16*int64(par.Interval) {
		st.count = delta
	}
	st.dropNext = controlLaw(now, par.Interval, st.count)
	st.lastCount = st.count
	return e, ok
}

// codelQueue is a FIFO managed by CoDel with a droptail limit.
type codelQueue struct {
	fifo fifoQueue
	st   codelState
	par  CoDelParams
}

func (c *codelQueue) len() int { return c.fifo.len() }

func (c *codelQueue) enqueue(s *server, now int64, e entry) Verdict {
	return c.fifo.enqueue(s, now, e)
}

func (c *codelQueue) dequeue(s *server, now int64) (entry, bool) {
	return c.st.dequeue(s, &c.fifo, &c.par, now)
}

// pop takes the head packet out.
func (f *fifoQueue) pop() (entry, bool) {
	if f.q.len() == 0 {
		return entry{}, false
	}
	e := f.q.pop()
	f.b -= int64(len(e.buf))
	return e, true
}
