// Package emu is the pure, clock-injected core of the userspace link emulator: one Pipe per direction.
//
// A packet offered to a Pipe goes through, in order: an outage gate (periodic or random on/off;
// drop or hold), random loss (Bernoulli or Gilbert-Elliott), a queue (droptail, drop-head,
// CoDel, PIE or FQ-CoDel; limit in bytes or packets), a server at the bottleneck rate or at the
// delivery opportunities of a trace, a delay line (propagation delay, optionally varied
// every interval, per-packet jitter, and reordering by holding packets back), and, as it is
// delivered, random corruption of its transport payload and ECN bleaching (its IP header's ECN
// field cleared).
//
// The serializer keeps an absolute timeline: a packet starts when the previous one has finished
// (or at its arrival when the link was idle), so a late wake-up of the caller never costs link
// time. With a droptail queue at a constant rate and no outage in mode hold (the default
// link), the queue is virtual: each packet's departure is computed when it arrives, exactly as
// before the other disciplines existed. Otherwise packets wait in a real queue and are taken
// out when the server is free, which the pipe does lazily whenever it is called (Offer, Next,
// Pop), in time order. The Pipe does no I/O and reads no clock: every call takes the current
// time, and times must not go backwards, so tests drive it with a fake clock. A Pipe is not
// safe for concurrent use.
package emu

import (
	"math/rand/v2"
	"time"
)

// Config configures one direction of a link. The zero value is an unlimited, undelayed link.
type Config struct {
	// Rate is the bottleneck rate in bit/s; 0 means unlimited (no serialization) unless Trace is set.
	Rate int64
	// Trace replaces Rate by a schedule of delivery opportunities (Mahimahi's link model).
	Trace *Trace
	// Delay is the one-way propagation delay.
	Delay time.Duration
	// DelayVar varies the delay over time: every DelayVarEvery the delay is redrawn uniformly
	// from [Delay-DelayVar, Delay+DelayVar] (never below 0). A packet keeps the delay in force
	// when it enters the delay line (when its serialization ends), so after a fall in delay later
	// packets overtake earlier ones (Kakhki et al., IMC 2017; Muthuraj 2024).
	DelayVar time.Duration
	// DelayVarEvery is the interval between two draws of DelayVar (default DefaultDelayVarEvery).
	DelayVarEvery time.Duration
	// Jitter adds to each packet its own random delay (the total never below 0): per-packet
	// jitter, uniform in [-Jitter, +Jitter] or drawn from JitterDist.
	Jitter time.Duration
	// JitterDist is the jitter's distribution (default JitterUniform; see JitterDist).
	JitterDist JitterDist
	// Reorder lets per-packet jitter reorder packets; otherwise a packet is never delivered
	// before an earlier one (its delivery waits for its predecessor).
	Reorder bool
	// ReorderProb holds each packet back by an extra ReorderDelay with this probability in
	// [0, 1], so that packets behind it overtake it (netem's "reorder" in spirit: tc-netem(8)).
	ReorderProb float64
	// ReorderDelay is the extra delay of a held-back packet.
	ReorderDelay time.Duration
	// Loss is the Bernoulli drop probability in [0, 1], drawn before the queue.
	Loss float64
	// GE, when enabled, replaces Loss by the Gilbert-Elliott model.
	GE GilbertElliott
	// Corrupt is the probability in [0, 1] that a delivered packet carrying a UDP or TCP
	// payload has one bit of that payload flipped, its transport checksum kept valid (see
	// corruptPayload); drawn at delivery, so every corrupted packet reaches the receiver.
	Corrupt float64
	// BleachECN clears the ECN field (RFC 3168 section 5) of every delivered IPv4 or IPv6 packet
	// to Not-ECT, as middleboxes that rewrite the old TOS byte do (the reason for ECN
	// validation, RFC 9000 section 13.4.2); IPv4's header checksum is updated (see bleachECN).
	// Applied at delivery, after the AQM, so CE marks are cleared too.
	BleachECN bool
	// QueueBytes is the queue limit in bytes of packets not yet fully serialized (the packet
	// being serialized counts, so a droptail queue's delay is at most QueueBytes*8/Rate). 0 = see
	// QueuePackets; both 0 = unlimited.
	QueueBytes int64
	// QueuePackets is the queue limit in packets (used when QueueBytes is 0).
	QueuePackets int
	// AQM is the queue discipline (default DropTail).
	AQM AQM
	// CoDel holds the parameters of CoDel and FQ-CoDel (zero fields take RFC 8289's defaults).
	CoDel CoDelParams
	// PIE holds the parameters of PIE (zero fields take RFC 8033's defaults).
	PIE PIEParams
	// FQ holds the flow parameters of FQ-CoDel (zero fields take RFC 8290's defaults).
	FQ FQParams
	// ECN makes CoDel, PIE and FQ-CoDel mark ECN-capable packets Congestion Experienced instead
	// of dropping them (RFC 3168 section 5; PIE only below its marking threshold).
	ECN bool
	// Outage switches the link off from time to time.
	Outage Outage
	// Seed seeds the loss, corruption, jitter, reordering and AQM generators.
	Seed int64
	// BufSize is the size of buffers handed out by Buffer (default 65536).
	BufSize int
}

// DefaultDelayVarEvery is the default interval between two draws of the delay variation: 100 ms.
const DefaultDelayVarEvery = 100 * time.Millisecond

// Verdict is what Offer did with a packet.
type Verdict int

// Verdicts.
const (
	Queued        Verdict = iota // accepted, will be delivered (or dropped later by the AQM)
	DroppedLoss                  // dropped by random loss
	DroppedFull                  // dropped because the queue was full
	DroppedAQM                   // dropped on arrival by the AQM (PIE)
	DroppedOutage                // dropped because the link was in an outage (mode drop)
)

// queued is a packet not yet fully serialized in the virtual queue: it occupies it until finish.
type queued struct {
	finish int64
	size   int64
}

// Pipe is one direction of an emulated link. The zero value is not usable: use NewPipe.
type Pipe struct {
	cfg       Config
	loss, jit *rand.Rand
	ro, aqm   *rand.Rand
	cor       *rand.Rand
	ge        geState
	lastLost  bool
	busyUntil int64 // ns: when the serializer finishes its last packet
	rem       int64 // remainder of bits*1e9 / rate, carried to keep the timeline exact
	queue     ring[queued]
	qBytes    int64
	fifo      ring[pending]
	heap      delayHeap
	heapMode  bool // the delay line is a heap (per-packet jitter may reorder)
	laneMode  bool // the delay line is lanes (delay variation, reordering holds)
	lanes     lanes
	last      int64 // latest delivery time handed out (order keeping)
	seq       uint64
	free      [][]byte
	c         counters
	rt        reorderTrack
	out       outageState
	srv       *server // the real queue and its server; nil for the virtual droptail queue
}

// NewPipe returns a Pipe for cfg.
func NewPipe(cfg Config) *Pipe {
	if cfg.BufSize <= 0 {
		cfg.BufSize = 65536
	}
	if cfg.DelayVarEvery <= 0 {
		cfg.DelayVarEvery = DefaultDelayVarEvery
	}
	seed := uint64(cfg.Seed)
	p := &Pipe{
		cfg:  cfg,
		loss: rand.New(rand.NewPCG(seed, 0x6c6f7373)),
		jit:  rand.New(rand.NewPCG(seed, 0x6a697474)),
		ro:   rand.New(rand.NewPCG(seed, 0x72656f72)),
		aqm:  rand.New(rand.NewPCG(seed, 0x61716d00)),
		cor:  rand.New(rand.NewPCG(seed, 0x636f7272)),
	}
	switch {
	case cfg.Reorder && cfg.Jitter > 0:
		p.heapMode = true
	case cfg.DelayVar > 0 && (int64(cfg.Delay+cfg.DelayVar+cfg.ReorderDelay)/int64(cfg.DelayVarEvery)+2)*2 > maxLanes:
		p.heapMode = true
	case cfg.DelayVar > 0 || cfg.ReorderProb > 0:
		p.laneMode = true
	}
	p.out = newOutageState(cfg.Outage)
	if cfg.Trace != nil || cfg.AQM != DropTail || cfg.Outage.Hold && cfg.Outage.enabled() {
		p.srv = newServer(p)
	}
	return p
}

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
	p.seq++
	if p.srv != nil && p.srv.pending && p.srv.srvNext < t {
		p.srv.advance(t, false)
	}
	if p.cfg.Outage.enabled() && p.out.down(t) {
		if !p.cfg.Outage.Hold {
			p.c.DropsOutage++
			p.Recycle(pkt)
			return DroppedOutage
		}
		p.c.HeldOutage++
	}
	if p.lose() {
		p.c.DropsLoss++
		if !p.lastLost {
			p.c.LossBursts++
		}
		p.lastLost = true
		p.Recycle(pkt)
		return DroppedLoss
	}
	p.lastLost = false
	if p.srv != nil {
		v := p.srv.enqueue(t, entry{buf: pkt, enq: t, seq: p.seq})
		if p.srv.pending && p.srv.srvNext <= t {
			p.srv.advance(t, true)
		}
		return v
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
	p.schedule(pkt, p.seq, finish)
	return Queued
}

// lose draws the random loss of one packet: Gilbert-Elliott when configured, else Bernoulli.
func (p *Pipe) lose() bool {
	if p.cfg.GE.Enabled() {
		return p.ge.lose(&p.cfg.GE, p.loss)
	}
	return p.cfg.Loss > 0 && p.loss.Float64() < p.cfg.Loss
}

// corrupt draws, for a packet with a transport payload, whether it is corrupted, and corrupts
// it if so; it reports whether it did.
func (p *Pipe) corrupt(pkt []byte) bool {
	if _, payload, end, _, ok := transport(pkt); !ok || payload == end || p.cor.Float64() >= p.cfg.Corrupt {
		return false
	}
	return corruptPayload(pkt, p.cor)
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

// schedule puts pkt, whose serialization ended at finish, on the delay line: the delay in force
// at finish, plus jitter, plus the reordering hold.
func (p *Pipe) schedule(pkt []byte, seq uint64, finish int64) {
	deliver := finish + p.delayAt(finish)
	if j := int64(p.cfg.Jitter); j > 0 {
		deliver = max(deliver+p.jitterDraw(j), finish)
	}
	held := p.cfg.ReorderProb > 0 && p.ro.Float64() < p.cfg.ReorderProb
	if held {
		deliver += int64(p.cfg.ReorderDelay)
	}
	if p.laneMode {
		var k int64
		if p.cfg.DelayVar > 0 {
			k = max(finish, 0) / int64(p.cfg.DelayVarEvery)
		}
		p.lanes.push(k, held, pending{buf: pkt, deliver: deliver, seq: seq})
		return
	}
	if p.heapMode {
		p.heap.push(pending{buf: pkt, deliver: deliver, seq: seq})
		return
	}
	deliver = max(deliver, p.last)
	p.last = deliver
	p.fifo.push(pending{buf: pkt, deliver: deliver, seq: seq})
}

// nextDelivery is the delivery time of the earliest packet on the delay line.
func (p *Pipe) nextDelivery() (int64, bool) {
	if p.laneMode {
		i := p.lanes.head()
		if i < 0 {
			return 0, false
		}
		return p.lanes.active[i].q.front().deliver, true
	}
	if p.heapMode {
		if len(p.heap) == 0 {
			return 0, false
		}
		return p.heap[0].deliver, true
	}
	if p.fifo.len() == 0 {
		return 0, false
	}
	return p.fifo.front().deliver, true
}

// Next returns the time of the pipe's next event: the earliest delivery, or (with a real
// queue) the next time the server takes a packet out of the queue, after which Next must be
// asked again. ok is false when the pipe holds no packet.
func (p *Pipe) Next() (due time.Duration, ok bool) {
	d, ok := p.nextDelivery()
	if p.srv != nil {
		if s, sok := p.srv.next(); sok && (!ok || s < d) {
			d, ok = s, true
		}
	}
	return time.Duration(d), ok
}

// Pop returns the next packet due at or before now, or ok=false. The caller writes it and then
// passes it to Recycle. now - scheduled delivery is recorded as the emulator's timing error.
func (p *Pipe) Pop(now time.Duration) (pkt []byte, ok bool) {
	if p.srv != nil && p.srv.pending && p.srv.srvNext <= int64(now) {
		p.srv.advance(int64(now), true)
	}
	due, ok := p.nextDelivery()
	if !ok || due > int64(now) {
		return nil, false
	}
	var pd pending
	switch {
	case p.laneMode:
		pd = p.lanes.pop(p.lanes.head())
	case p.heapMode:
		pd = p.heap.pop()
	default:
		pd = p.fifo.pop()
	}
	if p.cfg.Corrupt > 0 && p.corrupt(pd.buf) {
		p.c.Corrupted++
	}
	if p.cfg.BleachECN && bleachECN(pd.buf) {
		p.c.Bleached++
	}
	p.c.PacketsOut++
	p.c.BytesOut += int64(len(pd.buf))
	p.c.timingErr.record(int64(now) - pd.deliver)
	p.c.recordLate(time.Duration(pd.deliver), now-time.Duration(pd.deliver))
	if re, ext := p.rt.deliver(pd.seq); re {
		p.c.Reordered++
		p.c.ReorderExtentSum += ext
		p.c.ReorderExtentMax = max(p.c.ReorderExtentMax, ext)
	}
	return pd.buf, true
}

// UntaggedLate reports whether a release later than LateRecordThreshold has no CPU yet (TagLate).
func (p *Pipe) UntaggedLate() bool { return p.c.untagged < len(p.c.late) }

// TagLate records cpu and waitCPU as the CPUs of every late release not tagged yet: the caller,
// after a round of Pop calls, names the CPU it released them on and the one it slept on before
// (so their lateness can be set against what happened to those CPUs).
func (p *Pipe) TagLate(cpu, waitCPU int) {
	for i := p.c.untagged; i < len(p.c.late); i++ {
		p.c.late[i].CPU, p.c.late[i].WaitCPU = cpu, waitCPU
	}
	p.c.untagged = len(p.c.late)
}

// Len is the number of packets in the pipe (queued or on the delay line).
func (p *Pipe) Len() int {
	n := p.fifo.len() + len(p.heap) + p.lanes.len()
	if p.srv != nil {
		n += p.srv.q.len()
	}
	return n
}

// DropOther counts a packet lost outside the model (a device read or write error).
func (p *Pipe) DropOther() { p.c.DropsOther++ }

// CountRebind counts one NAT rebinding (Counters.Rebinds; the caller runs the NAT).
func (p *Pipe) CountRebind() { p.c.Rebinds++ }

// CountUnbound counts one delivered datagram the NAT dropped (Counters.Unbound).
func (p *Pipe) CountUnbound() { p.c.Unbound++ }

// Take returns the counters since the previous Take and resets them.
func (p *Pipe) Take() Counters {
	d := p.c.snapshot()
	p.c.reset()
	return d
}
