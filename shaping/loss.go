package shaping

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"sync"
	"time"
)

// streamPacket is the UDP payload size of a sequenced probe stream (the IP packet is 28 more).
const streamPacket = 64

// arrival is one received packet of a sequenced stream.
type arrival struct {
	seq        int
	sent, recv time.Time
}

// stream sends n sequenced UDP packets of size bytes (payload) gap apart through one direction
// and returns what arrived, in arrival order (each arrival carries its send time). Both ends share this machine's clock, so recv -
// sent is the one-way delay. After the last packet it waits for the link's largest one-way
// delay; ctx ends it at once.
func (c *checker) stream(ctx context.Context, down bool, n int, gap time.Duration, size int) ([]arrival, []time.Time, error) {
	hostConn, err := net.ListenPacket("udp4", c.hostAddr())
	if err != nil {
		return nil, nil, fmt.Errorf("listen udp: %w", err)
	}
	defer hostConn.Close()
	var client *net.UDPConn
	if err := c.clientDo(func() (err error) {
		client, err = net.DialUDP("udp4", nil, hostConn.LocalAddr().(*net.UDPAddr))
		return err
	}); err != nil {
		return nil, nil, fmt.Errorf("dial udp in namespace: %w", err)
	}
	defer client.Close()
	hostConn.(*net.UDPConn).SetReadBuffer(4 << 20) // a starved reader must not lose packets
	client.SetReadBuffer(4 << 20)
	var recv net.PacketConn = hostConn
	send := func(b []byte) { client.Write(b) }
	if down {
		recv = client
		send = func(b []byte) { hostConn.WriteTo(b, client.LocalAddr()) }
	}
	var got []arrival
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 2048)
		for {
			k, _, err := recv.ReadFrom(buf)
			if err != nil {
				return
			}
			if k >= 12 {
				got = append(got, arrival{seq: int(binary.BigEndian.Uint32(buf)),
					sent: time.Unix(0, int64(binary.BigEndian.Uint64(buf[4:]))), recv: time.Now()})
			}
		}
	}()
	stop := context.AfterFunc(ctx, func() { recv.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, max(size, 12))
	sends := make([]time.Time, 0, n)
	next := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		now := time.Now()
		sends = append(sends, now)
		binary.BigEndian.PutUint32(buf, uint32(i))
		binary.BigEndian.PutUint64(buf[4:], uint64(now.UnixNano()))
		send(buf)
		next = next.Add(gap)
		time.Sleep(time.Until(next))
	}
	if ctx.Err() == nil {
		recv.SetReadDeadline(time.Now().Add(c.drainWait(down)))
	} else {
		recv.SetReadDeadline(time.Now())
	}
	wg.Wait()
	return got, sends, ctx.Err()
}

// drainWait is how long a stream waits after its last packet: the direction's largest one-way
// delay (base, variation, jitter, reordering hold, queue, an outage held) plus 300 ms.
func (c *checker) drainWait(down bool) time.Duration {
	w := c.spec.RTT/2 + c.slackOneWay(down) + c.qDelay(down) + 300*time.Millisecond
	if c.spec.Outage.Hold {
		w += c.spec.Outage.Off
	}
	return w
}

// streamStats summarises a stream: losses and loss bursts (runs of missing sequence numbers),
// RFC 4737 reordering, one-way delays, and the longest run of missing packets.
type streamStats struct {
	n, lost, bursts, longestRun int
	reordered                   int
	minDelay, maxDelay          time.Duration
}

func analyse(n int, got []arrival) streamStats {
	st := streamStats{n: n, minDelay: time.Duration(math.MaxInt64)}
	seen := make([]bool, n)
	next := 0
	for _, a := range got {
		if a.seq < 0 || a.seq >= n || seen[a.seq] {
			continue
		}
		seen[a.seq] = true
		if a.seq < next {
			st.reordered++
		} else {
			next = a.seq + 1
		}
		d := a.recv.Sub(a.sent)
		st.minDelay, st.maxDelay = min(st.minDelay, d), max(st.maxDelay, d)
	}
	run := 0
	for _, ok := range seen {
		if ok {
			run = 0
			continue
		}
		st.lost++
		if run == 0 {
			st.bursts++
		}
		run++
		st.longestRun = max(st.longestRun, run)
	}
	if st.lost == n {
		st.minDelay = 0
	}
	return st
}

// streams measures each direction with a sequenced UDP stream when it has random loss, delay
// variation or reordering, and adds the lines for them.
func (c *checker) streams(ctx context.Context) error {
	for _, down := range []bool{false, true} {
		im := c.imp(down)
		if im.Loss == 0 && im.DelayVar == 0 && im.ReorderProb == 0 {
			continue
		}
		n, gap := c.streamShape(down)
		got, _, err := c.stream(ctx, down, n, gap, streamPacket)
		if err != nil {
			return err
		}
		st := analyse(n, got)
		c.lossLines(down, st)
		c.delayVarLine(down, st)
		c.reorderLine(down, st, gap)
	}
	return nil
}

// streamShape picks the packet count and spacing of a direction's stream: 1000 packets (3000
// for bursty loss, whose bursts are rarer) within 2 s (quick: 300 / 1000 within 0.6 / 1 s),
// spaced at least 1 ms and twice a probe's serialization; for delay variation long enough to
// see 20 intervals; for reordering at most a quarter of the hold apart.
func (c *checker) streamShape(down bool) (int, time.Duration) {
	im := c.imp(down)
	n, budget := 1000, 2*time.Second
	if c.quick {
		n, budget = 300, 600*time.Millisecond
	}
	if im.Burst > 0 || im.GE.Enabled() {
		n, budget = 3*n, 3*budget/2
	}
	gap := max(2*c.rate(down).Transmit(probeIPSize), time.Millisecond)
	if im.ReorderProb > 0 {
		gap = max(min(gap, cmpOr(im.ReorderDelay, DefaultReorderDelay)/4), 100*time.Microsecond)
	}
	if im.DelayVar > 0 {
		budget = max(budget, 20*cmpOr(im.DelayVarEvery, 100*time.Millisecond))
		budget = min(budget, 10*time.Second)
	}
	return max(min(n, int(budget/gap)), 50), gap
}

// lossLines compares the measured loss rate (and, for loss=P%,burst=N, the mean burst length)
// with the configuration. The loss rate's 99 % interval is the binomial one widened by the
// Markov chain's variance factor (1+l)/(1-l), l = 1-p-r (the lag-1 correlation of the Gilbert
// chain's state); the mean burst length's is N +- 2.576 sqrt((1-r)/r^2 / bursts), bursts being
// geometric with mean 1/r.
func (c *checker) lossLines(down bool, st streamStats) {
	im := c.imp(down)
	if im.Loss == 0 {
		return
	}
	name := "loss " + dirName(down)
	ok, half := binomialOK(st.lost, st.n, im.Loss)
	if ge := c.ge(down); ge.Enabled() {
		l := 1 - ge.P - ge.R
		half = 2.576*math.Sqrt(im.Loss*(1-im.Loss)*(1+l)/(1-l)/float64(st.n)) + 1/float64(st.n)
		ok = math.Abs(float64(st.lost)/float64(st.n)-im.Loss) <= half
	}
	c.add(fmt.Sprintf("%s (%d packets)", name, st.n), fmt.Sprintf("%.2f%%", im.Loss*100),
		fmt.Sprintf("%.2f%%", 100*float64(st.lost)/float64(st.n)), fmt.Sprintf("+-%.2f%% (99%%)", half*100), ok)
	if im.Burst == 0 {
		return
	}
	bname := fmt.Sprintf("loss bursts %s (mean length)", dirName(down))
	if st.bursts < 5 {
		c.add(bname, fmt.Sprintf("%g packets", im.Burst), fmt.Sprintf("%d bursts", st.bursts), "not measurable at this setting (fewer than 5 bursts)", true)
		return
	}
	r := 1 / im.Burst
	mean := float64(st.lost) / float64(st.bursts)
	bh := 2.576 * math.Sqrt((1-r)/(r*r)/float64(st.bursts))
	c.add(bname, fmt.Sprintf("%g packets", im.Burst), fmt.Sprintf("%.2f packets (%d bursts)", mean, st.bursts),
		fmt.Sprintf("+-%.2f (99%%)", bh), math.Abs(mean-im.Burst) <= bh)
}

// delayVarLine checks the one-way delays against [base-D, base+D] (plus the probe's
// serialization, jitter and a 1 ms slack above, 0.2 ms below) and that they spread over at least
// a quarter of that range.
func (c *checker) delayVarLine(down bool, st streamStats) {
	im := c.imp(down)
	if im.DelayVar == 0 || st.lost == st.n {
		return
	}
	base := c.spec.RTT/2 + c.rate(down).Transmit(probeIPSize)
	lo, hi := max(base-im.DelayVar, 0)-c.spec.Jitter-rttSlackBelow, base+im.DelayVar+c.spec.Jitter+rttSlackAbove
	if im.ReorderProb > 0 {
		hi += cmpOr(im.ReorderDelay, DefaultReorderDelay)
	}
	spread := st.maxDelay - st.minDelay
	c.add("delay variation "+dirName(down)+" (one-way min..max)", fmtMs(base-im.DelayVar)+".."+fmtMs(base+im.DelayVar),
		fmtMs(st.minDelay)+".."+fmtMs(st.maxDelay), fmt.Sprintf("within %s..%s, spread >= %s", fmtMs(lo), fmtMs(hi), fmtMs(im.DelayVar/2)),
		st.minDelay >= lo && st.maxDelay <= hi && spread >= im.DelayVar/2)
}

// reorderLine checks the reordered-packet ratio (RFC 4737 section 4.1) of reorder=P%: a held
// packet is reordered when one of the k = hold/gap packets behind it is not held, so the ratio
// is P (1 - P^k) (binomial 99 % interval). With only delay variation the ratio is reported.
func (c *checker) reorderLine(down bool, st streamStats, gap time.Duration) {
	im := c.imp(down)
	got := float64(st.reordered) / float64(max(st.n-st.lost, 1))
	name := fmt.Sprintf("reordered-packet ratio %s (RFC 4737)", dirName(down))
	if im.ReorderProb == 0 {
		if im.DelayVar > 0 {
			c.add(name, "> 0 when the delay falls", fmt.Sprintf("%.2f%%", got*100), "informational", true)
		}
		return
	}
	k := float64(cmpOr(im.ReorderDelay, DefaultReorderDelay) / gap)
	want := im.ReorderProb * (1 - math.Pow(im.ReorderProb, k))
	ok, half := binomialOK(st.reordered, max(st.n-st.lost, 1), want)
	if im.DelayVar > 0 || c.spec.Jitter > 0 && c.spec.Reorder {
		c.add(name, fmt.Sprintf("%.2f%%", want*100), fmt.Sprintf("%.2f%%", got*100), "informational (delay variation also reorders)", true)
		return
	}
	c.add(name, fmt.Sprintf("%.2f%%", want*100), fmt.Sprintf("%.2f%%", got*100), fmt.Sprintf("+-%.2f%% (binomial 99%%)", half*100), ok)
}

func dirName(down bool) string {
	if down {
		return "down"
	}
	return "up"
}
