package shaping

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// probeRTT sends UDP echo probes from the namespace to the host: n probes, or (n == 0) until
// stop is closed, gap apart. Lost probes are left out of the result.
func (c *checker) probeRTT(ctx context.Context, n int, gap time.Duration, stop <-chan struct{}) ([]time.Duration, error) {
	echo, err := startEcho(c.l.HostAddr())
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
	server := netip.AddrPortFrom(c.l.HostAddr(), uint16(echo.port))
	timeout := 2*c.spec.RTT + c.qDelay(true) + c.qDelay(false) + 500*time.Millisecond
	var rtts []time.Duration
	err = c.clientDo(func() (err error) {
		rtts, err = rtProbe(server, n, gap, timeout, &halt)
		return err
	})
	return rtts, err
}

// qDelay is the longest queueing delay of one direction's droptail queue: limit*8/rate.
func (c *checker) qDelay(down bool) time.Duration {
	rate, q := c.spec.Down, c.spec.QueueBytes
	if !down {
		rate, q = c.spec.Up, c.spec.UpQueueBytes()
	}
	if c.spec.QueuePackets > 0 {
		q = ByteSize(c.spec.QueuePackets * c.spec.MTU)
	}
	return rate.Transmit(q)
}

// bulk returns the step that measures TCP goodput in one direction, and RTT under that load.
func (c *checker) bulk(down bool) func(context.Context) error {
	return func(ctx context.Context) error {
		dur := max(5*time.Second, 25*c.spec.RTT)
		if c.quick {
			dur = max(time.Second, 25*c.spec.RTT)
		}
		if BDP(max(c.spec.Down, c.spec.Up), c.spec.RTT) > 1<<20 {
			dur = max(dur, 3*time.Second) // slow start to a multi-megabyte window takes ~1 s
		}
		sender, receiver, err := c.tcpPair(down)
		if err != nil {
			return err
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
		var loaded []time.Duration
		var wg sync.WaitGroup
		wg.Add(3)
		go func() { defer wg.Done(); sendUntilError(sender) }()
		go func() { defer wg.Done(); drain(receiver) }()
		go func() {
			defer wg.Done()
			time.Sleep(dur / 4)
			loaded, _ = c.probeRTT(ctx, 0, 20*time.Millisecond, stop)
		}()
		bps := goodput(sender, dur, dur/5)
		close(stop)
		sender.Close()
		receiver.Close()
		wg.Wait()
		c.goodputLine(down, bps)
		c.loadLine(down, loaded)
		return nil
	}
}

// tcpPair connects a TCP stream from the namespace to the host and returns (sender, receiver)
// for the direction: the host sends when down.
func (c *checker) tcpPair(down bool) (sender, receiver *net.TCPConn, err error) {
	ln, err := net.Listen("tcp4", c.hostAddr())
	if err != nil {
		return nil, nil, fmt.Errorf("listen tcp: %w", err)
	}
	defer ln.Close()
	var client *net.TCPConn
	if err := c.clientDo(func() error {
		conn, err := net.DialTimeout("tcp4", ln.Addr().String(), 2*c.spec.RTT+3*time.Second)
		if err == nil {
			client = conn.(*net.TCPConn)
		}
		return err
	}); err != nil {
		return nil, nil, fmt.Errorf("dial tcp in namespace: %w", err)
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
	tuneSender(sender, 2*int(BDP(max(c.spec.Down, c.spec.Up), c.spec.RTT)))
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
	if c.spec.Loss > 0 || c.spec.Jitter > 0 {
		c.add(name, fmtRate(maxGood), fmtRate(bps), "informational (loss or jitter configured)", bps > 0)
		return
	}
	c.add(name, fmtRate(maxGood), fmtRate(bps),
		fmt.Sprintf("%.0f%%..101%% of rate x (MTU-52)/MTU", frac*100),
		bps >= frac*maxGood && bps <= 1.01*maxGood)
}

// loadLine adds the RTT-under-load line of one direction.
func (c *checker) loadLine(down bool, rtts []time.Duration) {
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
	bound := c.expectedRTT() + c.qDelay(down) + loadSlack + 2*c.spec.Jitter
	if len(rtts) == 0 {
		// Every probe met a full droptail queue (short queues under TCP load): no delay to
		// compare, and the drops are the model's, counted as queue drops.
		c.add(name, "<= "+fmtMs(bound), "n/a: every probe dropped by the full queue", "informational", true)
		return
	}
	worst := rtts[0]
	for _, r := range rtts {
		worst = max(worst, r)
	}
	c.add(name, fmtMs(c.expectedRTT())+" + queue "+fmtMs(c.qDelay(down)), fmtMs(worst),
		"<= RTT + queue/rate + "+fmtMs(loadSlack+2*c.spec.Jitter), worst <= bound)
}
