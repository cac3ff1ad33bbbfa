package shaping

import (
	"context"
	"fmt"
	"net"
	"time"
)

// loss measures the random loss rate of each direction with paced UDP packets and compares it
// with the configured probability (binomial 99% interval). It does nothing when loss is 0.
func (c *checker) loss(ctx context.Context) error {
	if c.spec.Loss == 0 {
		return nil
	}
	n, budget := 1000, 2*time.Second
	if c.quick {
		n, budget = 300, 600*time.Millisecond
	}
	gap := max(2*max(c.spec.Down, c.spec.Up).Transmit(probeIPSize), time.Millisecond)
	if c.spec.Down > 0 && c.spec.Up > 0 {
		gap = max(2*min(c.spec.Down, c.spec.Up).Transmit(probeIPSize), time.Millisecond)
	}
	n = max(min(n, int(budget/gap)), 50)
	hostConn, err := net.ListenPacket("udp4", c.hostAddr())
	if err != nil {
		return fmt.Errorf("listen udp: %w", err)
	}
	defer hostConn.Close()
	var client *net.UDPConn
	if err := c.clientDo(func() (err error) {
		client, err = net.DialUDP("udp4", nil, hostConn.LocalAddr().(*net.UDPAddr))
		return err
	}); err != nil {
		return fmt.Errorf("dial udp in namespace: %w", err)
	}
	defer client.Close()
	wait := c.spec.RTT + c.qDelay(true) + c.qDelay(false) + 300*time.Millisecond
	upGot := countWhile(hostConn, func() { sendPaced(ctx, n, gap, func(b []byte) { client.Write(b) }) }, wait)
	downGot := countWhile(client, func() {
		sendPaced(ctx, n, gap, func(b []byte) { hostConn.WriteTo(b, client.LocalAddr()) })
	}, wait)
	for _, d := range []struct {
		name string
		got  int
	}{{"loss up", upGot}, {"loss down", downGot}} {
		lost := n - d.got
		ok, half := binomialOK(lost, n, c.spec.Loss)
		c.add(fmt.Sprintf("%s (%d packets)", d.name, n), fmt.Sprintf("%.2f%%", c.spec.Loss*100),
			fmt.Sprintf("%.2f%%", 100*float64(lost)/float64(n)), fmt.Sprintf("+-%.2f%% (binomial 99%%)", half*100), ok)
	}
	return nil
}

// sendPaced calls send n times, gap apart.
func sendPaced(ctx context.Context, n int, gap time.Duration, send func([]byte)) {
	buf := make([]byte, probePayload)
	buf[0] = 'L'
	next := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		send(buf)
		next = next.Add(gap)
		time.Sleep(time.Until(next))
	}
}

// countWhile counts the packets conn receives while send runs and for wait afterwards.
func countWhile(conn net.PacketConn, send func(), wait time.Duration) int {
	got := make(chan int, 1)
	conn.SetReadDeadline(time.Time{})
	go func() {
		buf, n := make([]byte, 2048), 0
		for {
			if _, _, err := conn.ReadFrom(buf); err != nil {
				got <- n
				return
			}
			n++
		}
	}()
	send()
	conn.SetReadDeadline(time.Now().Add(wait))
	return <-got
}
