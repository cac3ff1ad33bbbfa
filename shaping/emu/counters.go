package emu

import "time"

// Counters are one direction's statistics over one interval (between two Take calls). Every
// packet offered is, at any time, delivered (PacketsOut), dropped for exactly one counted cause
// (DropsLoss, DropsQueue, DropsAQM, DropsOutage, DropsOther) or still inside the pipe (Len).
type Counters struct {
	// PacketsIn and BytesIn count packets offered to the pipe (bytes are whole IP packets).
	PacketsIn, BytesIn int64
	// PacketsOut and BytesOut count packets delivered.
	PacketsOut, BytesOut int64
	// DropsLoss counts packets dropped by random loss (Bernoulli or Gilbert-Elliott).
	DropsLoss int64
	// DropsQueue counts packets dropped because the queue was full (droptail: the arriving
	// packet; drop-head: the oldest; FQ-CoDel: the head of the fattest flow).
	DropsQueue int64
	// DropsAQM counts packets dropped by the active queue management (CoDel, PIE, FQ-CoDel).
	DropsAQM int64
	// DropsOutage counts packets dropped because they arrived during an outage (mode drop).
	DropsOutage int64
	// DropsOther counts packets lost outside the model (device read or write errors).
	DropsOther int64
	// LossBursts counts runs of consecutive random-loss drops (among the packets that reached the
	// loss stage); DropsLoss/LossBursts is the mean burst length in packets.
	LossBursts int64
	// Corrupted counts delivered packets whose transport payload the emulator corrupted (one
	// bit flipped, checksum kept valid; Config.Corrupt). They count in PacketsOut too.
	Corrupted int64
	// Rebinds counts the NAT rebindings made (up direction; see NAT): times the client's
	// bindings moved to fresh ports (and, for RebindAddr, another address).
	Rebinds int64
	// Unbound counts datagrams the link delivered that the NAT then dropped, being addressed to
	// a binding no longer in force (down direction; see NAT.Inbound). They count in PacketsOut too.
	Unbound int64
	// MarksCE counts packets the AQM marked Congestion Experienced instead of dropping (RFC 3168).
	MarksCE int64
	// Bleached counts delivered packets whose ECN field the link cleared from ECT(0), ECT(1) or
	// CE to Not-ECT (Config.BleachECN); packets already Not-ECT are not counted. They count in
	// PacketsOut too.
	Bleached int64
	// HeldOutage counts packets that arrived during an outage in mode hold (delayed, not dropped).
	HeldOutage int64
	// Reordered counts delivered packets that were reordered in the sense of RFC 4737 section 3.3
	// (sequence number, in arrival order at the pipe, below the next expected one).
	Reordered int64
	// ReorderExtentSum and ReorderExtentMax sum and bound the reordering extents of the
	// reordered packets (RFC 4737 section 4.2.1), in packets. Extents beyond 1024 are counted
	// as 1024.
	ReorderExtentSum, ReorderExtentMax int64
	// QueueDelayP50, QueueDelayP99 and QueueDelayMax summarise the time packets waited before
	// serialization (histogram, relative error under 1.6 %).
	QueueDelayP50, QueueDelayP99, QueueDelayMax time.Duration
	// TimingErrP50, TimingErrP99 and TimingErrMax summarise the caller's lateness: actual minus
	// scheduled delivery time.
	TimingErrP50, TimingErrP99, TimingErrMax time.Duration
	// Late lists the releases later than LateRecordThreshold, in release order: the first
	// MaxLateReleases of the interval (LateOverflow is then true and the rest are not listed).
	Late []LateRelease
	// LateOverflow is true when more releases were late than Late lists.
	LateOverflow bool
	// Stalls counts stall events: runs of releases later than StallLateness, a run ending when
	// the next such release is due more than StallLateness after the previous one's release
	// (one stall of the releasing thread makes every packet due during it late, and they leave
	// in one batch when it resumes). StalledReleases counts the releases later than
	// StallLateness. A steady emulator has none; a host that stops the forwarder's thread now
	// and then (a hypervisor freeze, memory reclaim) has a few, each of many releases; an
	// emulator that cannot keep up has a large share of its releases in them.
	Stalls, StalledReleases int64
	// StallSpans lists the stall events, in order: the first MaxStallSpans of the interval
	// (Stalls counts all of them).
	StallSpans []StallSpan
}

// StallSpan is one stall event of the releasing thread, on the caller's clock (Pop's now):
// From is the scheduled time of its first late release, To the release time of its last.
type StallSpan struct {
	From, To time.Duration
	// Late is the largest lateness of its releases.
	Late time.Duration
	// Releases counts its releases later than StallLateness.
	Releases int64
}

// StallLateness is the lateness above which a release belongs to a stall (Counters.Stalls):
// 5 ms, the lateness bound a measurement through the emulator accepts (shaping.LatenessBound;
// a test keeps the two equal).
const StallLateness = 5 * time.Millisecond

// MaxStallSpans is how many stall events one interval lists (Counters.StallSpans).
const MaxStallSpans = 64

// LateRelease is one packet released more than LateRecordThreshold after its scheduled time.
type LateRelease struct {
	// Due is the scheduled delivery time and Late the lateness (actual minus scheduled), on the
	// caller's clock (Pop's now).
	Due, Late time.Duration
	// CPU is the CPU the caller released it on (TagLate), -1 when not told.
	CPU int
	// WaitCPU is the CPU the caller last went to sleep on before that release, where its timer
	// fired (TagLate), -1 when not told: the scheduler may wake it on another CPU when its own
	// was held.
	WaitCPU int
}

// LateRecordThreshold is the lateness above which a release is listed (Counters.Late): the
// releases whose lateness may have to be explained, far above the fast path's batching lag
// (microseconds), so listing them costs nothing on a steady machine.
const LateRecordThreshold = time.Millisecond

// MaxLateReleases is how many late releases one interval lists (Counters.Late).
const MaxLateReleases = 256

// counters accumulate one direction's statistics between two Take calls.
type counters struct {
	Counters
	queueDelay, timingErr hist
	late                  []LateRelease // the interval's late releases (capacity MaxLateReleases, reused)
	untagged              int           // index in late of the first release without a CPU
	// stalls lists the interval's stall events (capacity MaxStallSpans, reused); stallLast is
	// the latest one, stallOpen whether there is one, stallListed whether it is in stalls.
	stalls                 []StallSpan
	stallLast              StallSpan
	stallOpen, stallListed bool
}

// recordLate lists a release late beyond LateRecordThreshold, and counts it in a stall when
// it is later than StallLateness.
func (c *counters) recordLate(due, late time.Duration) {
	if late <= LateRecordThreshold {
		return
	}
	if late > StallLateness {
		c.recordStall(due, late)
	}
	if len(c.late) == MaxLateReleases {
		c.LateOverflow = true
		return
	}
	if c.late == nil {
		c.late = make([]LateRelease, 0, MaxLateReleases)
	}
	c.late = append(c.late, LateRelease{Due: due, Late: late, CPU: -1, WaitCPU: -1})
}

// recordStall counts a release later than StallLateness: in the current stall when it was due
// within StallLateness of that stall's last release, else as a new stall. It allocates only
// when the interval's first stall is listed.
func (c *counters) recordStall(due, late time.Duration) {
	c.StalledReleases++
	at := due + late
	if c.stallOpen && due <= c.stallLast.To+StallLateness {
		c.stallLast.To = max(c.stallLast.To, at)
		c.stallLast.Late = max(c.stallLast.Late, late)
		c.stallLast.Releases++
		if n := len(c.stalls); n > 0 && c.stallListed {
			c.stalls[n-1] = c.stallLast
		}
		return
	}
	c.Stalls++
	c.stallOpen = true
	c.stallLast = StallSpan{From: due, To: at, Late: late, Releases: 1}
	c.stallListed = len(c.stalls) < MaxStallSpans
	if c.stallListed {
		if c.stalls == nil {
			c.stalls = make([]StallSpan, 0, MaxStallSpans)
		}
		c.stalls = append(c.stalls, c.stallLast)
	}
}

func (c *counters) reset() {
	c.Counters = Counters{}
	c.late, c.untagged = c.late[:0], 0
	c.stalls, c.stallOpen, c.stallListed = c.stalls[:0], false, false
	c.queueDelay.reset()
	c.timingErr.reset()
}

// snapshot returns the counters with the histogram summaries filled in.
func (c *counters) snapshot() Counters {
	s := c.Counters
	s.QueueDelayP50 = time.Duration(c.queueDelay.quantile(0.50))
	s.QueueDelayP99 = time.Duration(c.queueDelay.quantile(0.99))
	s.QueueDelayMax = time.Duration(c.queueDelay.max)
	s.TimingErrP50 = time.Duration(c.timingErr.quantile(0.50))
	s.TimingErrP99 = time.Duration(c.timingErr.quantile(0.99))
	s.TimingErrMax = time.Duration(c.timingErr.max)
	if len(c.late) > 0 {
		s.Late = append([]LateRelease(nil), c.late...)
	}
	if len(c.stalls) > 0 {
		s.StallSpans = append([]StallSpan(nil), c.stalls...)
	}
	return s
}
