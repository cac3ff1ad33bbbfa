package selfcheck

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// timedRTT is one answered RTT probe: when it was sent and its RTT.
type timedRTT struct {
	At  time.Time
	RTT time.Duration
}

// rttsOf is the RTTs of probes, in their order.
func rttsOf(probes []timedRTT) []time.Duration {
	out := make([]time.Duration, len(probes))
	for i, p := range probes {
		out[i] = p.RTT
	}
	return out
}

// probeRTTAt sends UDP echo probes from the link's namespace to host, an address of this
// namespace reachable from it (the link's host end, or a reference pair's): n probes, or
// (n == 0) until stop is closed, gap apart. Lost probes are left out of the result.
func (c *checker) probeRTTAt(ctx context.Context, host netip.Addr, n int, gap time.Duration, stop <-chan struct{}) ([]timedRTT, error) {
	echo, err := startEcho(host)
	if err != nil {
		return nil, err
	}
	defer echo.close()
	var halt atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-stop:
		case <-ctx.Done():
		case <-done:
		}
		halt.Store(true)
	}()
	server := netip.AddrPortFrom(host, uint16(echo.port))
	timeout := 2*c.spec.RTT + c.qDelay(true) + c.qDelay(false) + c.slackOneWay(true) + c.slackOneWay(false) + 500*time.Millisecond
	var rtts []timedRTT
	err = c.clientDo(func() (err error) {
		rtts, err = rtProbe(server, n, gap, timeout, &halt)
		return err
	})
	return rtts, err
}

// probePairs sends a warm-up pair and then n pairs of idle probes, one over the link and one over
// the reference pair in each, back to back and on one CPU (rtProbePair; one echo thread answers
// both, rtEchoPair), and returns the RTTs of
// the pairs both of whose probes were answered and the link's and the reference's unanswered
// probes.
func (c *checker) probePairs(ctx context.Context, n int) (p pairedRTTs, linkLost, refLost int, err error) {
	cpu := probeCPU()
	echo, err := startEchoPair(c.l.HostAddr(), c.ref.HostAddr(), cpu)
	if err != nil {
		return p, 0, 0, err
	}
	defer echo.close()
	var halt atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
		}
		halt.Store(true)
	}()
	timeout := 2*c.spec.RTT + c.qDelay(true) + c.qDelay(false) + c.slackOneWay(true) + c.slackOneWay(false) + 500*time.Millisecond
	linkAP := netip.AddrPortFrom(c.l.HostAddr(), uint16(echo.ports[0]))
	refAP := netip.AddrPortFrom(c.ref.HostAddr(), uint16(echo.ports[1]))
	err = c.clientDo(func() (err error) {
		p, linkLost, refLost, err = rtProbePair(linkAP, refAP, 1, n, cpu, timeout, &halt)
		return err
	})
	if err == nil {
		err = ctx.Err()
	}
	return p, linkLost, refLost, err
}

// qDelay is the longest queueing delay of one direction's droptail queue: limit*8/rate. CAKE's
// limit is its memory limit, at least CAKEMemLimit bytes.
func (c *checker) qDelay(down bool) time.Duration {
	rate, q := c.spec.Down, c.spec.QueueBytes
	if !down {
		rate, q = c.spec.Up, c.spec.UpQueueBytes()
	}
	if c.imp(down).AQM == emu.CAKE {
		return rate.Transmit(CAKEMemLimit)
	}
	if c.spec.QueuePackets > 0 {
		q = linkspec.ByteSize(c.spec.QueuePackets * c.spec.MTU)
	}
	return rate.Transmit(q)
}

// CAKEMemLimit is the least memory limit of sch_cake without "memlimit" in bytes: 4 MiB, or four
// intervals at the rate when that is more (net/sched/sch_cake.c, cake_reconfigure); it counts
// the packets' buffers, so it holds at most this many IP bytes.
const CAKEMemLimit linkspec.ByteSize = 4 << 20

// Bulk transfer bounds: a transfer lasts 25 RTTs (at least 1 s quick, 5 s full, 3 s when the
// BDP exceeds 1 MiB) but never more than maxBulkQuick or maxBulkFull; when that bound leaves
// fewer than minBulkRTTs round trips, TCP cannot reach the rate and the goodput is reported as
// not measurable at this setting.
const (
	maxBulkQuick, maxBulkFull = 10 * time.Second, 30 * time.Second
	minBulkRTTs               = 10
	// minBulkPackets is the fewest MTU-sized packets a bulk transfer must carry to be measured.
	minBulkPackets = 20
	// maxDial bounds the wait for a TCP connection.
	maxDial = 30 * time.Second
)

// bulk returns the step that measures TCP goodput in one direction, and RTT under that load.
func (c *checker) bulk(down bool) func(context.Context) error {
	return func(ctx context.Context) error {
		dur := min(max(5*time.Second, 25*c.spec.RTT), maxBulkFull)
		if c.quick {
			dur = min(max(time.Second, 25*c.spec.RTT), maxBulkQuick)
		}
		if linkspec.BDP(max(c.spec.Down, c.spec.Up), c.spec.RTT) > 1<<20 {
			dur = max(dur, 3*time.Second) // slow start to a multi-megabyte window takes ~1 s
		}
		if r := c.rate(down); r > 0 && int64(r)/8*int64(dur/time.Millisecond)/1000 < minBulkPackets*int64(c.spec.MTU) {
			c.notMeasurable(down, fmt.Sprintf("a transfer bounded at %s carries fewer than %d packets at %s", dur, minBulkPackets, r), true)
			return nil
		}
		if dur < minBulkRTTs*c.spec.RTT {
			c.notMeasurable(down, fmt.Sprintf("a transfer bounded at %s is under %d RTTs (%s): TCP cannot reach the rate", dur, minBulkRTTs, c.spec.RTT), true)
			return nil
		}
		if c.imp(down).ECN {
			c.enableECN() // the client's connections negotiate ECN (RFC 3168), so the AQM can mark
		}
		sender, receiver, err := c.tcpPair(ctx, down)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.notMeasurable(down, err.Error(), c.unmeasurableExpected())
			return nil
		}
		defer sender.Close()
		defer receiver.Close()
		stop := make(chan struct{})
		go func() { // an interrupt ends the transfer at once
			select {
			case <-ctx.Done():
				sender.Close()
				receiver.Close()
			case <-stop:
			}
		}()
		c.take()
		var loaded []timedRTT
		var wg sync.WaitGroup
		wg.Add(3)
		go func() { defer wg.Done(); sendUntilError(sender) }()
		go func() { defer wg.Done(); drain(receiver) }()
		go func() {
			defer wg.Done()
			if sleepCtx(ctx, dur/4) {
				loaded, _ = c.probeRTTAt(ctx, c.l.HostAddr(), 0, 20*time.Millisecond, stop)
			}
		}()
		bps := goodput(ctx, sender, dur, dur/5)
		close(stop)
		sender.Close()
		receiver.Close()
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return err
		}
		c.goodputLine(down, bps)
		e := c.take()
		kept, left := c.outsideStalls(loaded)
		c.loadLine(down, kept, left)
		c.aqmLine(down, rttsOf(loaded), e)
		c.ecnLine(down, e)
		return nil
	}
}

// tcpPair connects a TCP stream from the namespace to the host and returns (sender, receiver)
// for the direction: the host sends when down.
// The dial waits 2 RTT + 3 s plus both directions' queueing delays (a queue left full by the
// previous transfer drains first) and ends with ctx.
func (c *checker) tcpPair(ctx context.Context, down bool) (sender, receiver *net.TCPConn, err error) {
	ln, err := net.Listen("tcp4", c.hostAddr())
	if err != nil {
		return nil, nil, fmt.Errorf("listen tcp: %w", err)
	}
	defer ln.Close()
	var client *net.TCPConn
	timeout := 2*c.spec.RTT + 3*time.Second + c.qDelay(true) + c.qDelay(false)
	if c.spec.Loss > 0 || c.spec.Outage.Off > 0 {
		timeout += 4 * time.Second // a third SYN (sent 3 s after the second, RFC 6298 backoff)
	}
	timeout = min(timeout, maxDial)
	if err := c.clientDo(func() error {
		dctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		var d net.Dialer
		conn, err := d.DialContext(dctx, "tcp4", ln.Addr().String())
		if err == nil {
			client = conn.(*net.TCPConn)
		}
		return err
	}); err != nil {
		return nil, nil, fmt.Errorf("TCP could not connect within %s: %w", timeout.Round(time.Millisecond), err)
	}
	srv, err := ln.Accept()
	if err != nil {
		client.Close()
		return nil, nil, fmt.Errorf("accept tcp: %w", err)
	}
	host := srv.(*net.TCPConn)
	if down {
		sender, receiver = host, client
	} else {
		sender, receiver = client, host
	}
	tuneSender(sender, 2*int(linkspec.BDP(max(c.spec.Down, c.spec.Up), c.spec.RTT)))
	return sender, receiver, nil
}

// sendUntilError writes zeros until the connection fails (the receiver closes it).
func sendUntilError(conn *net.TCPConn) {
	buf := make([]byte, 64<<10)
	for {
		if _, err := conn.Write(buf); err != nil {
			return
		}
	}
}

// drain reads and discards until the connection fails.
func drain(conn *net.TCPConn) {
	buf := make([]byte, 256<<10)
	for {
		if _, err := conn.Read(buf); err != nil {
			return
		}
	}
}

// goodputLine adds the goodput line of one direction.
func (c *checker) goodputLine(down bool, bps float64) {
	name, rate := "TCP goodput down (host to client, cubic)", c.spec.Down
	if down {
		c.res.DownBps = bps
	} else {
		name, rate = "TCP goodput up (client to host, cubic)", c.spec.Up
		c.res.UpBps = bps
	}
	if rate <= 0 {
		c.add(name, "unlimited", fmtRate(bps), "none (rate unlimited)", bps > 0)
		return
	}
	maxGood := float64(rate) * float64(c.spec.MTU-tcpHeaders) / float64(c.spec.MTU)
	frac := goodputFull
	if c.quick {
		frac = goodputQuick
	}
	if why := c.goodputUnjudged(down); why != "" {
		c.add(name, fmtRate(maxGood), fmtRate(bps), "informational ("+why+")", bps > 0)
		return
	}
	if c.aqm(down) != emu.DropTail {
		frac = min(frac, goodputQuick) // an AQM keeps the queue short: TCP may leave gaps
	}
	c.add(name, fmtRate(maxGood), fmtRate(bps),
		fmt.Sprintf("%.0f%%..101%% of rate x (MTU-52)/MTU", frac*100),
		bps >= frac*maxGood && bps <= 1.01*maxGood)
}

// loadLine adds the RTT-under-load line of one direction; left is how many probes were left out
// because their flight overlapped a stall of the emulator (outsideStalls), stated on the line.
func (c *checker) loadLine(down bool, rtts []time.Duration, left int) {
	name := "RTT under load down (max)"
	if !down {
		name = "RTT under load up (max)"
	}
	rate := c.spec.Down
	if !down {
		rate = c.spec.Up
	}
	if rate <= 0 {
		return
	}
	if c.spec.Outage.Off > 0 {
		return // an outage during the transfer holds or drops the probes: nothing to bound
	}
	extra := c.slackOneWay(true) + c.slackOneWay(false)
	bound := c.expectedRTT() + c.qDelay(down) + loadSlack + extra
	if len(rtts) == 0 {
		// Every probe met a full droptail queue (short queues under TCP load): no delay to
		// compare, and the drops are the model's, counted as queue drops.
		c.add(name, "<= "+quantity.FormatMsUnit(quantity.Ms(bound), 2), "n/a: every probe dropped by the full queue", "informational", true)
		return
	}
	worst := rtts[0]
	for _, r := range rtts {
		worst = max(worst, r)
	}
	c.add(name, quantity.FormatMsUnit(quantity.Ms(c.expectedRTT()), 2)+" + queue "+quantity.FormatMsUnit(quantity.Ms(c.qDelay(down)), 2), quantity.FormatMsUnit(quantity.Ms(worst), 2)+leftOutNote(left, len(rtts)),
		"<= RTT + queue/rate + "+quantity.FormatMsUnit(quantity.Ms(loadSlack+extra), 2), worst <= bound)
}

// enableECN sets net.ipv4.tcp_ecn = 1 in the link's client namespace (the namespace pltlab
// created, never the host's), so that the check's TCP connections negotiate ECN whichever side
// opens them: the host answers an ECN request by default (tcp_ecn = 2).
func (c *checker) enableECN() {
	c.clientDo(func() error {
		return os.WriteFile("/proc/sys/net/ipv4/tcp_ecn", []byte("1"), 0o644)
	})
}

// ecnLine judges ecn=true under the saturating TCP flow of a direction: the AQM must mark CE
// (its counter, from the emulator) rather than only drop, since the flow's packets are
// ECN-capable; a count of zero marks fails.
func (c *checker) ecnLine(down bool, e *result.Emulator) {
	if !c.imp(down).ECN || e == nil {
		return
	}
	d := e.Down
	if !down {
		d = e.Up
	}
	c.add(fmt.Sprintf("ECN marks %s (TCP load)", dirName(down)), "CE marks instead of drops",
		fmt.Sprintf("%d CE marks, %d AQM drops", d.MarksCE, d.DropsAQM), ">= 1 CE mark", d.MarksCE > 0)
}
