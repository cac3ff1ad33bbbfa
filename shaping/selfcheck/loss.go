package selfcheck

import (
	"context"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// streamPacket is the UDP payload size of a sequenced probe stream (the IP packet is 28 more).
const streamPacket = 64

// arrival is one received packet of a sequenced stream.
type arrival struct {
	seq        int
	sent, recv time.Time
	// corrupted is true when the payload differs from what was sent (decodeStream).
	corrupted bool
}

// stream sends n sequenced UDP packets of size bytes (payload) gap apart through one direction
// and returns what arrived, in arrival order (each arrival carries its send time and its kernel
// receive time, SO_TIMESTAMPNS). Both ends share this machine's clock, so recv - sent is the
// one-way delay. After the last packet it waits for the link's largest one-way
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
	recv := hostConn.(*net.UDPConn)
	send := func(b []byte) { client.Write(b) }
	if down {
		recv = client
		send = func(b []byte) { hostConn.WriteTo(b, client.LocalAddr()) }
	}
	read := stampedReader(recv)
	var got []arrival
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 2048)
		for {
			k, at, err := read(buf)
			if err != nil {
				return
			}
			if seq, sent, bad, ok := decodeStream(buf[:k]); ok {
				got = append(got, arrival{seq: seq, sent: sent, recv: at, corrupted: bad})
			}
		}
	})
	stop := context.AfterFunc(ctx, func() { recv.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, max(size, streamRecords))
	sends := make([]time.Time, 0, n)
	next := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		now := time.Now()
		sends = append(sends, now)
		encodeStream(buf, i, now)
		send(buf)
		// Never catch up after a stall of this goroutine: packets sent back to back would
		// overflow the link's queue (drops of the queue, not of the model under test), so the
		// next packet goes at least one gap after this one.
		next = next.Add(gap)
		if floor := time.Now().Add(gap / 2); next.Before(floor) {
			next = floor
		}
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
	// tail is the run of missing packets at the stream's end (counted in lost and bursts): they
	// may still be in flight when the receiver stops waiting, on a stalled machine.
	tail               int
	reordered          int
	minDelay, maxDelay time.Duration
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
	st.tail = run
	if st.lost == n {
		st.minDelay = 0
	}
	return st
}

// streams measures each direction with a sequenced UDP stream when it has random loss, delay
// variation, reordering or per-packet jitter, and adds the lines for them.
func (c *checker) streams(ctx context.Context) error {
	for _, down := range []bool{false, true} {
		im := c.imp(down)
		if im.Loss == 0 && im.Corrupt == 0 && im.DelayVar == 0 && im.ReorderProb == 0 && !c.jitterReorders() && !c.jitterJudged(down) {
			continue
		}
		n, gap := c.streamShape(down)
		c.take()
		got, _, err := c.stream(ctx, down, n, gap, streamPacket)
		if err != nil {
			return err
		}
		c.streamLate = 0
		if e := c.take(); e != nil {
			d := e.Down
			if !down {
				d = e.Up
			}
			c.streamLate = time.Duration(d.TimingErrMaxMs * float64(time.Millisecond))
		}
		c.streamLines(down, n, gap, got)
	}
	return nil
}

// streamLines adds a direction's stream lines for n packets sent gap apart of which got
// arrived. The loss lines judge every packet. A stall loses no packet but holds those in
// flight through it by its length: the delay-variation, reordering and jitter lines judge the
// link model on the packets outside the check's recorded stalls (arrivalsOutsideStalls; the
// RFC 4737 reordering of that subsequence against its own prediction), and say how many they
// left out.
func (c *checker) streamLines(down bool, n int, gap time.Duration, got []arrival) {
	c.lossLines(down, analyse(n, got))
	c.corruptLine(down, got)
	kept, left := c.arrivalsOutsideStalls(got)
	st, from := analyse(n, kept), len(c.res.Lines)
	c.delayVarLine(down, st, kept)
	c.reorderLine(down, st, gap, kept)
	c.jitterLine(down, gap, kept)
	for i := from; i < len(c.res.Lines); i++ {
		c.res.Lines[i].Measured += leftOutNoteOf(left, len(kept), "packets")
	}
}

// streamShape picks the packet count and spacing of a direction's stream: 1000 packets within
// 2 s (quick: 300 within 0.6 s), spaced at least 1 ms and twice a probe's serialization; with
// loss, enough packets to expect minLossEvents loss events (bursts for the Gilbert model) and
// lossTailMargin more, and with corruption as many corrupted arrivals; for
// delay variation long enough to see minDelayIntervals draws; for reordering at most a quarter
// of the hold apart; never longer than maxStream (quick) or 2 maxStream. A stream the cap cuts
// short of what its lines need makes those lines fail and say so.
func (c *checker) streamShape(down bool) (int, time.Duration) {
	im := c.imp(down)
	n, budget := 1000, 2*time.Second
	if c.quick {
		n, budget = 300, 600*time.Millisecond
	}
	gap := max(2*c.rate(down).Transmit(probeIPSize), time.Millisecond)
	if im.ReorderProb > 0 {
		gap = max(min(gap, cmpOr(im.ReorderDelay, linkspec.DefaultReorderDelay)/4), 100*time.Microsecond)
	}
	for _, ev := range []float64{c.lossEventRate(down), im.Corrupt * (1 - im.Loss)} {
		if ev <= 0 {
			continue
		}
		need := int(math.Ceil(minLossEvents / ev * (1 + lossTailMargin)))
		n = max(n, need)
		budget = max(budget, time.Duration(need)*gap)
	}
	if im.DelayVar > 0 {
		budget = max(budget, minDelayIntervals*cmpOr(im.DelayVarEvery, emu.DefaultDelayVarEvery)+time.Second)
		n = max(n, int(budget/gap))
	}
	limit := maxStream
	if !c.quick {
		limit *= 2
	}
	budget = min(budget, limit)
	return max(min(n, int(budget/gap)), 50), gap
}

// lossTailMargin is the fraction of packets a lossy stream sends beyond the minLossEvents it
// must expect: lossLines judges a stream up to its last received packet, so a stream whose
// last packets were lost is judged on fewer. Without it a 2 % loss link's 1000-packet stream
// failed "sample too small" (19.98 expected, 999 judged) whenever its last packet was lost
// (2 % of checks, seen in the qemu guest); 5 % covers a final loss burst of 50 packets.
const lossTailMargin = 0.05

// maxStream bounds a quick check's stream per direction (a full check's is twice as long).
const maxStream = 10 * time.Second

// lossEventRate is the expected number of independent loss events per packet of a direction:
// its loss rate for random loss; for the Gilbert model the rate of burst starts pi_G p; for a
// general Gilbert-Elliott model the loss rate over the variance factor (1+l)/(1-l) of its chain
// (l = 1 - p - r), the effective number of independent losses. 0 without loss.
func (c *checker) lossEventRate(down bool) float64 {
	im := c.imp(down)
	if im.Loss == 0 {
		return 0
	}
	ge := c.ge(down)
	switch {
	case !ge.Enabled():
		return im.Loss
	case ge.H1 == 1 && ge.K1 == 0:
		return ge.R / (ge.P + ge.R) * ge.P
	}
	l := 1 - ge.P - ge.R
	return im.Loss * (1 - l) / (1 + l)
}

// lossLines compares the measured losses of a direction with its model, at 99 %:
//   - random (Bernoulli) loss: the loss rate, binomial interval;
//   - the Gilbert model (loss=P%,burst=N): the number of bursts (Poisson around n pi_G p), their
//     mean length given their number (B + NegBin(B, 1/N)) and the loss rate (their compound),
//     each exact under the model (burst.go): the bursts, not the packets, are the independent
//     events, which a binomial interval of the packets ignores;
//   - a general Gilbert-Elliott model: the loss rate, binomial widened by the chain's variance
//     factor (1+l)/(1-l), l = 1-p-r.
//
// A stream that expects fewer than minLossEvents events fails its lines: too small a sample
// to tell, so the check asks for a longer one instead of passing.
func (c *checker) lossLines(down bool, st streamStats) {
	im := c.imp(down)
	if im.Loss == 0 {
		return
	}
	if st.tail > 0 && st.tail < st.n {
		// The stream is judged up to its last packet received: the missing ones after it may
		// still have been in flight when the receiver stopped (a stall of the machine), which is
		// not a loss of the model. Stopping at a received packet does not bias the loss rate.
		st.n, st.lost, st.bursts, st.tail = st.n-st.tail, st.lost-st.tail, st.bursts-1, 0
	}
	name := fmt.Sprintf("loss %s (%d packets)", dirName(down), st.n)
	conf := fmt.Sprintf("%.2f%%", im.Loss*100)
	got := fmt.Sprintf("%.2f%% (%d lost in %d bursts)", 100*float64(st.lost)/float64(st.n), st.lost, st.bursts)
	if exp := c.lossEventRate(down) * float64(st.n); exp < minLossEvents {
		c.add(name, conf, got, fmt.Sprintf("sample too small: %.1f loss events expected, need %d: run a longer check", exp, minLossEvents), false)
		return
	}
	ge := c.ge(down)
	switch {
	case !ge.Enabled():
		ok, half := binomialOK(st.lost, st.n, im.Loss)
		c.add(name, conf, got, fmt.Sprintf("+-%.2f%% (binomial 99%%)", half*100), ok)
	case ge.H1 == 1 && ge.K1 == 0:
		lo, hi := gilbertLossInterval(st.n, ge.P, ge.R, 0.99)
		c.add(name, conf, got, fmt.Sprintf("%d..%d lost (%.2f..%.2f%%, Gilbert model, bursts as events, 99%%)", lo, hi,
			100*float64(lo)/float64(st.n), 100*float64(hi)/float64(st.n)), st.lost >= lo && st.lost <= hi)
		mu := float64(st.n) * ge.R / (ge.P + ge.R) * ge.P
		blo, bhi := poissonInterval(mu, 0.99)
		c.add(fmt.Sprintf("loss bursts %s (count)", dirName(down)), fmt.Sprintf("%.1f expected", mu), fmt.Sprint(st.bursts),
			fmt.Sprintf("%d..%d (Poisson 99%%)", blo, bhi), st.bursts >= blo && st.bursts <= bhi)
		bname := fmt.Sprintf("loss bursts %s (mean length)", dirName(down))
		if st.bursts == 0 {
			c.add(bname, fmt.Sprintf("%g packets", 1/ge.R), "no burst", "needs >= 1 burst", false)
			return
		}
		llo, lhi := negBinInterval(st.bursts, ge.R, 0.99)
		mean := float64(st.lost) / float64(st.bursts)
		c.add(bname, fmt.Sprintf("%g packets", 1/ge.R), fmt.Sprintf("%.2f packets (%d bursts)", mean, st.bursts),
			fmt.Sprintf("%.2f..%.2f (negative binomial 99%%)", float64(llo)/float64(st.bursts), float64(lhi)/float64(st.bursts)),
			st.lost >= llo && st.lost <= lhi)
	default:
		l := 1 - ge.P - ge.R
		half := 2.576*math.Sqrt(im.Loss*(1-im.Loss)*(1+l)/(1-l)/float64(st.n)) + 1/float64(st.n)
		c.add(name, conf, got, fmt.Sprintf("+-%.2f%% (99%%, binomial x (1+l)/(1-l))", half*100),
			math.Abs(float64(st.lost)/float64(st.n)-im.Loss) <= half)
	}
}

// minDelayIntervals is the fewest delay-variation draws a stream must see for its delay line
// to be judged: at 40 draws a 99 % Kolmogorov-Smirnov test detects a range wrong by half.
const minDelayIntervals = 40

// ksCritical99 is Stephens' modified 99 % critical value of the one-sample Kolmogorov-Smirnov
// distance for n draws: 1.628 / (sqrt n + 0.12 + 0.11 / sqrt n) (M. A. Stephens, "EDF statistics
// for goodness of fit and some comparisons", JASA 69(347), 1974, Table 1A, case 0).
func ksCritical99(n int) float64 {
	r := math.Sqrt(float64(n))
	return 1.628 / (r + 0.12 + 0.11/r)
}

func absDur(d time.Duration) time.Duration { return max(d, -d) }

// ksUniform is the Kolmogorov-Smirnov distance of the draws from the uniform distribution on
// [lo, hi].
func ksUniform(draws []time.Duration, lo, hi time.Duration) float64 {
	x := slices.Clone(draws)
	slices.Sort(x)
	n := float64(len(x))
	d := 0.0
	for i, v := range x {
		f := math.Min(math.Max(float64(v-lo)/float64(hi-lo), 0), 1)
		d = math.Max(d, math.Max(float64(i+1)/n-f, f-float64(i)/n))
	}
	return d
}

// delayVarLine judges a direction's delay variation by the distribution of its one-way delays:
// one draw per interval of the emulator (fitDelayVar: the median delay of the packets sent in
// each, the boundaries fitted to the stream) must be uniform on [base-D, base+D] (base = RTT/2 plus a
// probe's serialization) by a 99 % Kolmogorov-Smirnov test, its critical distance widened by
// (jitter + 1 ms)/(2D) for the per-packet jitter and the emulator's release lateness, and every
// delay must lie in that range (plus jitter, 1 ms above, 0.2 ms below, a reordering hold, and
// the emulator's own largest release lateness during the stream, which delays a packet by
// that much and is recorded, never assumed).
// Fewer than minDelayIntervals draws fail: the check asks for a longer one.
func (c *checker) delayVarLine(down bool, st streamStats, got []arrival) {
	im := c.imp(down)
	if im.DelayVar == 0 {
		return
	}
	name := "delay variation " + dirName(down) + " (one-way delays)"
	base := c.spec.RTT/2 + c.rate(down).Transmit(probeIPSize)
	conf := quantity.FormatMsUnit(quantity.Ms(base-im.DelayVar), 2) + ".." + quantity.FormatMsUnit(quantity.Ms(base+im.DelayVar), 2) + " uniform"
	every := cmpOr(im.DelayVarEvery, emu.DefaultDelayVarEvery)
	var draws []time.Duration
	if f := c.fitDelayVar(down, got); f != nil {
		draws = f.drawList()
	}
	if len(draws) < minDelayIntervals {
		c.add(name, conf, fmt.Sprintf("%d draws", len(draws)), fmt.Sprintf("sample too small: need %d draws (one per %s): run a longer check", minDelayIntervals, every), false)
		return
	}
	allow := lateAllowance(c.streamLate)
	lo, hi := max(base-im.DelayVar, 0)-c.jitterBelow()-rttSlackBelow, base+im.DelayVar+c.jitterAbove()+rttSlackAbove+allow
	if im.ReorderProb > 0 {
		hi += cmpOr(im.ReorderDelay, linkspec.DefaultReorderDelay)
	}
	d := ksUniform(draws, base-im.DelayVar, base+im.DelayVar)
	crit := ksCritical99(len(draws)) + float64(c.spec.Jitter+time.Millisecond)/float64(2*im.DelayVar)
	c.addAllowed(name, conf, fmt.Sprintf("%s..%s, KS distance %.3f of %d draws", quantity.FormatMsUnit(quantity.Ms(st.minDelay), 2), quantity.FormatMsUnit(quantity.Ms(st.maxDelay), 2), d, len(draws)),
		fmt.Sprintf("KS <= %.3f (99%%, Stephens 1974), all within %s..%s (incl. emulator lateness %s)", crit, quantity.FormatMsUnit(quantity.Ms(lo), 2), quantity.FormatMsUnit(quantity.Ms(hi), 2), quantity.FormatMsUnit(quantity.Ms(allow), 2)),
		d <= crit && st.minDelay >= lo && st.maxDelay <= hi, allow)
}

// reorderLine checks the reordered-packet ratio (RFC 4737 section 4.1). With reorder=P%, a held
// packet is reordered when one of the k = hold/gap packets behind it is not held, so the count
// is binomial with P (1 - P^k) (99 % interval). With delay variation, the count follows from the
// stream's fitted intervals and draws (dvFit.reorder: exact per packet, each threshold
// uncertain by the jitter, the emulator's recorded release lateness during the stream, the
// host's timing and the stream's measured draw noise); with both, the count must lie between the larger
// of the two lower bounds and the sum of the upper ones. Per-packet jitter with reorder=true
// reorders too: a packet overtaken by its successor (probability from the two jitters) bounds
// the count from below, the sum over all successors from above.
func (c *checker) reorderLine(down bool, st streamStats, gap time.Duration, got []arrival) {
	im := c.imp(down)
	if im.ReorderProb == 0 && im.DelayVar == 0 && !c.jitterReorders() {
		return
	}
	recv := max(st.n-st.lost, 1)
	ratio := float64(st.reordered) / float64(recv)
	name := fmt.Sprintf("reordered-packet ratio %s (RFC 4737)", dirName(down))
	lo, hi := 0.0, 0.0
	var allow time.Duration // taken from the emulator's recorded lateness (delay variation only)
	var conf []string
	if im.ReorderProb > 0 {
		k := float64(cmpOr(im.ReorderDelay, linkspec.DefaultReorderDelay) / gap)
		want := im.ReorderProb * (1 - math.Pow(im.ReorderProb, k))
		_, half := binomialOK(st.reordered, recv, want)
		lo, hi = math.Max((want-half)*float64(recv), 0), (want+half)*float64(recv)
		conf = append(conf, fmt.Sprintf("%.2f%% (reorder)", want*100))
	}
	if im.DelayVar > 0 {
		f := c.fitDelayVar(down, got)
		if f == nil || len(f.drawList()) < minDelayIntervals {
			c.add(name, "from the delay draws", fmt.Sprintf("%.2f%%", ratio*100), fmt.Sprintf("sample too small: need %d draws: run a longer check", minDelayIntervals), false)
			return
		}
		allow = lateAllowance(c.streamLate)
		// The threshold of each packet is uncertain by the link's jitter, the emulator's
		// recorded release lateness, 0.5 ms of the host's timing, and the stream's own
		// measured noise on the draws (twice the largest median absolute deviation).
		noise := f.noise()
		u := c.spec.Jitter + allow + dvTiming + noise
		dlo, dhi := f.reorder(u)
		conf = append(conf, fmt.Sprintf("emulator lateness %s", quantity.FormatMsUnit(quantity.Ms(allow), 2)), fmt.Sprintf("draw noise %s", quantity.FormatMsUnit(quantity.Ms(noise), 2)))
		lo, hi = math.Max(lo, float64(dlo)), hi+float64(dhi)
		conf = append(conf, fmt.Sprintf("%d..%d packets (delay falls)", dlo, dhi))
	}
	if c.jitterReorders() {
		// Independent uniform jitters in +-J: packet i is overtaken by packet i+k when
		// J_i - J_{i+k} > k gap, probability (2J - k gap)^2 / (8 J^2) (the difference is
		// triangular on [-2J, 2J]). Overtaken by its successor is a lower bound of being
		// reordered (RFC 4737); the sum over k an upper one.
		j := float64(c.spec.Jitter)
		var p1, sum float64
		for k := 1; float64(k)*float64(gap) < 2*j; k++ {
			pk := math.Pow(2*j-float64(k)*float64(gap), 2) / (8 * j * j)
			if k == 1 {
				p1 = pk
			}
			sum += pk
		}
		_, h1 := binomialOK(st.reordered, recv, p1)
		jlo := math.Max((p1-h1)*float64(recv), 0)
		jhi := float64(recv)
		if sum < 1 {
			_, hs := binomialOK(st.reordered, recv, sum)
			jhi = (sum + hs) * float64(recv)
		}
		lo, hi = math.Max(lo, jlo), math.Min(hi+jhi, float64(recv))
		conf = append(conf, fmt.Sprintf(">= %.2f%% (jitter overtakes)", p1*100))
	}
	c.addAllowed(name, strings.Join(conf, " + "), fmt.Sprintf("%.2f%% (%d of %d)", ratio*100, st.reordered, recv),
		fmt.Sprintf("%.0f..%.0f packets (99%%)", lo, hi), float64(st.reordered) >= math.Floor(lo) && float64(st.reordered) <= math.Ceil(hi), allow)
}

func dirName(down bool) string {
	if down {
		return "down"
	}
	return "up"
}

// jitterReorders reports whether per-packet jitter may reorder packets (reorder=true).
func (c *checker) jitterReorders() bool { return c.spec.Jitter > 0 && c.spec.Reorder }
