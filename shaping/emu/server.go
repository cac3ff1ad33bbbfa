package emu

import "time"

// AQM is a queue discipline.
type AQM int

// Queue disciplines.
const (
	// DropTail drops the arriving packet when the queue is full.
	DropTail AQM = iota
	// DropHead drops the oldest queued packets until the arriving one fits.
	DropHead
	// CoDel is Controlled Delay (RFC 8289) on a FIFO, with a droptail limit.
	CoDel
	// PIE is Proportional Integral controller Enhanced (RFC 8033) on a FIFO, with a droptail limit.
	PIE
	// FQCoDel is FlowQueue-CoDel (RFC 8290): flows by 5-tuple, deficit round robin, CoDel per flow.
	FQCoDel
	// CAKE names Linux's sch_cake (Høiland-Jørgensen, Täht and Morton, IEEE LANMAN 2018) for the
	// tc backend. The Pipe has no CAKE (COBALT and set-associative flow queueing are not
	// implemented here): LINK specs refuse it with the emulator, and a Pipe given it queues
	// as DropTail.
	CAKE
)

// String gives the name used in LINK specs: droptail, drophead, codel, pie, fq_codel or cake.
func (a AQM) String() string {
	switch a {
	case DropHead:
		return "drophead"
	case CoDel:
		return "codel"
	case PIE:
		return "pie"
	case FQCoDel:
		return "fq_codel"
	case CAKE:
		return "cake"
	}
	return "droptail"
}

// entry is a packet in a real queue.
type entry struct {
	buf []byte
	enq int64 // ns: arrival time
	seq uint64
}

// qdisc is a real queue's discipline. enqueue and dequeue may drop (and mark) packets through
// the server, which counts them.
type qdisc interface {
	enqueue(s *server, now int64, e entry) Verdict
	dequeue(s *server, now int64) (entry, bool)
	len() int
}

// server takes packets out of a real queue when the link is free: at the end of the previous
// packet's serialization at a constant rate, or at a trace's delivery opportunities.
type server struct {
	p         *Pipe
	q         qdisc
	busy      int64 // bytes of the packet in service until busyUntil (count against byte limits)
	srvNext   int64 // when the next packet can be taken out (valid when the queue is not empty)
	pending   bool  // srvNext is valid
	k         int64 // trace: index of the current delivery opportunity
	budget    int   // trace: bytes left in opportunity k
	maxPacket int64 // largest packet seen (CoDel's "maxpacket", RFC 8289 section 4.2)
	hold      bool  // outages in mode hold stop the server
	// out answers the server's (future) questions about outages: a copy of the pipe's state
	// with the same seed, so the arrivals' questions (in time order) stay in time order too.
	out outageState
}

func newServer(p *Pipe) *server {
	s := &server{p: p, budget: OpportunityBytes, hold: p.cfg.Outage.Hold && p.cfg.Outage.enabled(),
		out: newOutageState(p.cfg.Outage)}
	switch p.cfg.AQM {
	case CoDel:
		s.q = &codelQueue{par: p.cfg.CoDel.withDefaults()}
	case PIE:
		s.q = newPIEQueue(p.cfg.PIE)
	case FQCoDel:
		s.q = newFQCoDel(p.cfg.FQ, p.cfg.CoDel.withDefaults(), uint64(p.cfg.Seed))
	default:
		s.q = &fifoQueue{head: p.cfg.AQM == DropHead}
	}
	return s
}

// inService is the bytes of the packet still being serialized at t.
func (s *server) inService(t int64) int64 {
	if s.p.busyUntil > t {
		return s.busy
	}
	return 0
}

// full reports whether adding size bytes to a queue holding n packets and b bytes at t would
// exceed the limit (the packet in service counts, as in the virtual droptail queue).
func (s *server) full(t int64, n int, b, size int64) bool {
	cfg := &s.p.cfg
	inSvc := s.inService(t)
	switch {
	case cfg.QueueBytes > 0:
		return b+inSvc+size > cfg.QueueBytes
	case cfg.QueuePackets > 0:
		if inSvc > 0 {
			n++
		}
		return n+1 > cfg.QueuePackets
	}
	return false
}

// enqueue puts e in the queue at t (the queue may refuse it).
func (s *server) enqueue(t int64, e entry) Verdict {
	s.maxPacket = max(s.maxPacket, int64(len(e.buf)))
	wasEmpty := s.q.len() == 0
	v := s.q.enqueue(s, t, e)
	if v != Queued {
		return v
	}
	if wasEmpty && !s.pending {
		s.srvNext, s.pending = s.firstService(t), true
	}
	return Queued
}

// firstService is when a packet arriving at t in an empty queue starts service.
func (s *server) firstService(t int64) int64 {
	p := s.p
	start := max(t, p.busyUntil)
	if p.cfg.Trace != nil {
		if p.cfg.Trace.at(s.k) < t || s.budget == 0 {
			s.k, s.budget = p.cfg.Trace.first(t, s.k), OpportunityBytes
		}
		start = p.cfg.Trace.at(s.k)
	}
	return s.upAt(start)
}

// upAt moves a service time out of an outage (mode hold).
func (s *server) upAt(t int64) int64 {
	if !s.hold {
		return t
	}
	return s.upAtSlow(t)
}

func (s *server) upAtSlow(t int64) int64 {
	p := s.p
	for {
		u := s.out.upAt(t)
		if p.cfg.Trace == nil || u == t {
			return u
		}
		s.k, s.budget = p.cfg.Trace.first(u, s.k), OpportunityBytes
		t = p.cfg.Trace.at(s.k)
		if !s.out.down(t) {
			return t
		}
	}
}

// next is the next service time, if a packet waits.
func (s *server) next() (int64, bool) { return s.srvNext, s.pending && s.q.len() > 0 }

// advance serves every packet whose service starts before t (at t too when inclusive).
func (s *server) advance(t int64, inclusive bool) {
	for s.pending && (s.srvNext < t || inclusive && s.srvNext == t) {
		if s.q.len() == 0 {
			s.pending = false
			return
		}
		now := s.srvNext
		e, ok := s.q.dequeue(s, now)
		if !ok {
			s.pending = false
			return
		}
		s.transmit(now, e)
		nxt := s.afterService()
		if s.q.len() == 0 {
			s.pending = false
			return
		}
		s.srvNext = s.upAt(nxt)
	}
}

// transmit serializes e from now and schedules it on the delay line.
func (s *server) transmit(now int64, e entry) {
	p := s.p
	size := int64(len(e.buf))
	p.c.queueDelay.record(now - e.enq)
	finish := now
	switch {
	case p.cfg.Trace != nil:
		finish = s.traceSend(size)
	case p.cfg.Rate > 0:
		if now > p.busyUntil { // idle: the timeline restarts
			p.rem = 0
		}
		bits := size*8*int64(time.Second) + p.rem
		finish = now + bits/p.cfg.Rate
		p.rem = bits % p.cfg.Rate
	}
	p.busyUntil, s.busy = finish, size
	p.schedule(e.buf, e.seq, finish)
}

// traceSend spends size bytes of delivery opportunities from (k, budget) and returns the time
// of the opportunity that carries the packet's last byte (Mahimahi's byte accounting).
func (s *server) traceSend(size int64) int64 {
	tr := s.p.cfg.Trace
	if size <= int64(s.budget) {
		s.budget -= int(size)
		return tr.at(s.k)
	}
	rest := size - int64(s.budget)
	m := (rest + OpportunityBytes - 1) / OpportunityBytes
	s.k += m
	s.budget = int(m*OpportunityBytes - rest)
	return tr.at(s.k)
}

// afterService is when the server can take the next packet out.
func (s *server) afterService() int64 {
	p := s.p
	if p.cfg.Trace == nil {
		return p.busyUntil
	}
	if s.budget == 0 {
		s.k++
		s.budget = OpportunityBytes
	}
	return p.cfg.Trace.at(s.k)
}

// dropQueue counts and recycles a packet dropped because the queue was full.
func (s *server) dropQueue(e entry) {
	s.p.c.DropsQueue++
	s.p.Recycle(e.buf)
}

// dropAQM counts and recycles a packet dropped by the AQM.
func (s *server) dropAQM(e entry) {
	s.p.c.DropsAQM++
	s.p.Recycle(e.buf)
}

// mark sets CE on e when ECN is on and e is ECN-capable, and counts it; false means drop instead.
func (s *server) mark(e entry) bool {
	if !s.p.cfg.ECN || !markCE(e.buf) {
		return false
	}
	s.p.c.MarksCE++
	return true
}

// fifoQueue is a FIFO with a droptail or drop-head limit.
type fifoQueue struct {
	q    ring[entry]
	b    int64
	head bool // drop-head instead of droptail
}

func (f *fifoQueue) len() int { return f.q.len() }

func (f *fifoQueue) enqueue(s *server, now int64, e entry) Verdict {
	size := int64(len(e.buf))
	for f.head && f.q.len() > 0 && s.full(now, f.q.len(), f.b, size) {
		old := f.q.pop()
		f.b -= int64(len(old.buf))
		s.dropQueue(old)
	}
	if s.full(now, f.q.len(), f.b, size) {
		s.dropQueue(e)
		return DroppedFull
	}
	f.q.push(e)
	f.b += size
	return Queued
}

func (f *fifoQueue) dequeue(_ *server, _ int64) (entry, bool) { return f.pop() }
