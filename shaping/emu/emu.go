// Package emu is the pure, clock-injected core of the userspace link emulator: one Pipe per direction.
//
// A packet offered to a Pipe goes through, in order: random loss (seeded Bernoulli), a droptail
// queue (limit in bytes or packets), a serializer at the bottleneck rate, a propagation delay and
// optional jitter. The serializer keeps an absolute timeline: a packet starts when the previous
// one has finished (or at its arrival when the link was idle), so a late wake-up of the caller
// never costs link time. The Pipe does no I/O and reads no clock: every call takes the current
// time, so tests drive it with a fake clock. A Pipe is not safe for concurrent use.
package emu

import (
	"math/rand/v2"
	"time"
)

// Config configures one direction of a link.
type Config struct {
	// Rate is the bottleneck rate in bit/s; 0 means unlimited (no serialization, no queue).
	Rate int64
	// Delay is the one-way propagation delay.
	Delay time.Duration
	// Jitter adds a uniform random delay in [-Jitter, +Jitter] (the total never below 0).
	Jitter time.Duration
	// Reorder lets jitter reorder packets; otherwise a packet is never delivered before an
	// earlier one (its delivery waits for its predecessor).
	Reorder bool
	// Loss is the Bernoulli drop probability in [0, 1], drawn before the queue.
	Loss float64
	// QueueBytes is the droptail limit in bytes of packets not yet fully serialized (the packet
	// being serialized counts, so the queueing delay is at most QueueBytes*8/Rate). 0 = see
	// QueuePackets; both 0 = unlimited.
	QueueBytes int64
	// QueuePackets is the droptail limit in packets (used when QueueBytes is 0).
	QueuePackets int
	// Seed seeds the loss and jitter generators.
	Seed int64
	// BufSize is the size of buffers handed out by Buffer (default 65536).
	BufSize int
}

// Verdict is what Offer did with a packet.
type Verdict int

// Verdicts.
const (
	Queued      Verdict = iota // accepted, will be delivered
	DroppedLoss                // dropped by random loss
	DroppedFull                // dropped because the droptail queue was full
)

// queued is a packet not yet fully serialized: it occupies the droptail queue until finish.
type queued struct {
	finish int64
	size   int64
}

// Pipe is one direction of an emulated link. The zero value is not usable: use NewPipe.
type Pipe struct {
	cfg       Config
	loss, jit *rand.Rand
	busyUntil int64 // ns: when the serializer finishes its last packet
	rem       int64 // remainder of bits*1e9 / rate, carried to keep the timeline exact
	queue     ring[queued]
	qBytes    int64
	fifo      ring[pending]
	heap      delayHeap
	last      int64 // latest delivery time handed out (order keeping)
	seq       uint64
	free      [][]byte
	c         counters
}

// NewPipe returns a Pipe for cfg.
func NewPipe(cfg Config) *Pipe {
	if cfg.BufSize <= 0 {
		cfg.BufSize = 65536
	}
	return &Pipe{
		cfg:  cfg,
		loss: rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6c6f7373)),
		jit:  rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6a697474)),
	}
}

// Config returns the pipe's configuration.
func (p *Pipe) Config() Config { return p.cfg }

// Buffer returns a buffer of BufSize bytes for the next packet, reusing recycled ones.
func (p *Pipe) Buffer() []byte {
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		return b
	}
	return make([]byte, p.cfg.BufSize)
}

// Recycle returns a buffer obtained from Buffer or Pop for reuse.
func (p *Pipe) Recycle(b []byte) { p.free = append(p.free, b[:cap(b)]) }

// Offer hands pkt (from Buffer) to the pipe at time now. The pipe owns pkt afterwards: a dropped
// packet's buffer is recycled at once, a queued one comes back from Pop.
func (p *Pipe) Offer(now time.Duration, pkt []byte) Verdict {
	t, size := int64(now), int64(len(pkt))
	p.c.PacketsIn++
	p.c.BytesIn += size
	if p.cfg.Loss > 0 && p.loss.Float64() < p.cfg.Loss {
		p.c.DropsLoss++
		p.Recycle(pkt)
		return DroppedLoss
	}
	finish := t
	if p.cfg.Rate > 0 {
		p.drain(t)
		if p.full(size) {
			p.c.DropsQueue++
			p.Recycle(pkt)
			return DroppedFull
		}
		finish = p.serialize(t, size)
	}
	p.schedule(pkt, finish+int64(p.cfg.Delay))
	return Queued
}

// drain forgets the packets whose serialization has finished by t.
func (p *Pipe) drain(t int64) {
	for p.queue.len() > 0 && p.queue.front().finish <= t {
		p.qBytes -= p.queue.pop().size
	}
}

// full reports whether a packet of size bytes would overflow the droptail queue.
func (p *Pipe) full(size int64) bool {
	switch {
	case p.cfg.QueueBytes > 0:
		return p.qBytes+size > p.cfg.QueueBytes
	case p.cfg.QueuePackets > 0:
		return p.queue.len()+1 > p.cfg.QueuePackets
	}
	return false
}

// serialize puts a packet of size bytes arriving at t on the serializer's absolute timeline and
// returns when its last bit leaves.
func (p *Pipe) serialize(t, size int64) int64 {
	start := p.busyUntil
	if start <= t { // idle: the timeline restarts at the arrival
		start, p.rem = t, 0
	}
	bits := size*8*int64(time.Second) + p.rem
	finish := start + bits/p.cfg.Rate
	p.rem = bits % p.cfg.Rate
	p.busyUntil = finish
	p.queue.push(queued{finish: finish, size: size})
	p.qBytes += size
	p.c.queueDelay.record(start - t)
	return finish
}

// schedule puts pkt on the delay line for delivery at deliver (plus jitter).
func (p *Pipe) schedule(pkt []byte, deliver int64) {
	if j := int64(p.cfg.Jitter); j > 0 {
		deliver = max(deliver+p.jit.Int64N(2*j+1)-j, deliver-int64(p.cfg.Delay))
	}
	p.seq++
	if p.cfg.Reorder {
		p.heap.push(pending{buf: pkt, deliver: deliver, seq: p.seq})
		return
	}
	deliver = max(deliver, p.last)
	p.last = deliver
	p.fifo.push(pending{buf: pkt, deliver: deliver, seq: p.seq})
}

// Next returns the delivery time of the earliest packet on the delay line; ok is false when the
// pipe holds no packet.
func (p *Pipe) Next() (due time.Duration, ok bool) {
	if p.cfg.Reorder {
		if len(p.heap) == 0 {
			return 0, false
		}
		return time.Duration(p.heap[0].deliver), true
	}
	if p.fifo.len() == 0 {
		return 0, false
	}
	return time.Duration(p.fifo.front().deliver), true
}

// Pop returns the next packet due at or before now, or ok=false. The caller writes it and then
// passes it to Recycle. now - scheduled delivery is recorded as the emulator's timing error.
func (p *Pipe) Pop(now time.Duration) (pkt []byte, ok bool) {
	due, ok := p.Next()
	if !ok || due > now {
		return nil, false
	}
	var pd pending
	if p.cfg.Reorder {
		pd = p.heap.pop()
	} else {
		pd = p.fifo.pop()
	}
	p.c.PacketsOut++
	p.c.BytesOut += int64(len(pd.buf))
	p.c.timingErr.record(int64(now) - pd.deliver)
	return pd.buf, true
}

// Len is the number of packets in the pipe (queued or on the delay line).
func (p *Pipe) Len() int { return p.fifo.len() + len(p.heap) }

// DropOther counts a packet lost outside the model (a device read or write error).
func (p *Pipe) DropOther() { p.c.DropsOther++ }

// Take returns the counters since the previous Take and resets them.
func (p *Pipe) Take() Counters {
	d := p.c.snapshot()
	p.c.reset()
	return d
}
