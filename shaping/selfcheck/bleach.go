package selfcheck

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// bleachCount and bleachGap are the ECN bleaching check's stream: 100 datagrams of 64 bytes,
// one every 5 ms, from the client to an echo on the host.
const (
	bleachCount = 100
	bleachGap   = 5 * time.Millisecond
)

// ecnWay is one direction of the bleaching check's stream: whether the link bleaches it, the
// datagrams sent that way, those received per ECN codepoint (index 0 Not-ECT, 1 ECT(1),
// 2 ECT(0), 3 CE; RFC 3168 section 5), those received without a TOS byte, and the emulator's
// Bleached counter of that direction over the stream.
type ecnWay struct {
	name     string
	bleach   bool
	sent     int
	got      [4]int
	noTOS    int
	bleached int64
}

// received is the number of datagrams received that way.
func (w ecnWay) received() int { return w.got[0] + w.got[1] + w.got[2] + w.got[3] + w.noTOS }

// bleach checks a link's ECN bleaching (bleach=ecn): the client sends bleachCount datagrams
// marked ECT(0) to an echo on the host, which sends each back to its source marked ECT(0); each
// side reads the ECN field every datagram arrived with (IP_RECVTOS), and the emulator's
// Bleached counters are taken around the stream. Judged by bleachLine.
func (c *checker) bleach(ctx context.Context) error {
	if !c.spec.DownImp.BleachECN && !c.spec.UpImp.BleachECN {
		return nil
	}
	ln, err := net.ListenPacket("udp4", c.hostAddr())
	if err != nil {
		return fmt.Errorf("listen udp: %w", err)
	}
	host := ln.(*net.UDPConn)
	defer host.Close()
	if err := markECT(host); err != nil {
		return fmt.Errorf("mark ECT(0) on the host's socket: %w", err)
	}
	var client *net.UDPConn
	if err := c.clientDo(func() (err error) {
		if client, err = net.DialUDP("udp4", nil, host.LocalAddr().(*net.UDPAddr)); err == nil {
			err = markECT(client)
		}
		return err
	}); err != nil {
		return fmt.Errorf("dial udp with ECT(0) in namespace: %w", err)
	}
	defer client.Close()
	up := ecnWay{name: "up", bleach: c.spec.UpImp.BleachECN, sent: bleachCount}
	down := ecnWay{name: "down", bleach: c.spec.DownImp.BleachECN}
	c.take()
	var wg sync.WaitGroup
	wg.Go(func() { down.sent = ecnEcho(host, &up) })
	wg.Go(func() { ecnRead(client, &down) })
	buf := make([]byte, 64)
	for i := 0; i < bleachCount && ctx.Err() == nil; i++ {
		client.Write(buf)
		sleepCtx(ctx, bleachGap)
	}
	sleepCtx(ctx, c.spec.RTT+c.qDelay(true)+c.qDelay(false)+300*time.Millisecond)
	host.SetReadDeadline(time.Now())
	client.SetReadDeadline(time.Now())
	wg.Wait()
	if e := c.take(); e != nil {
		up.bleached, down.bleached = e.Up.Bleached, e.Down.Bleached
	}
	lossy := c.spec.DownImp.Loss > 0 || c.spec.UpImp.Loss > 0 || c.spec.Outage.Off > 0 || c.spec.Rebind.Enabled()
	c.bleachLine(down, up, lossy)
	return nil
}

// ecnEcho reads datagrams on host until its deadline, counting each one's ECN field in w, and
// sends each back to its source; it returns the number sent back.
func ecnEcho(host *net.UDPConn, w *ecnWay) int {
	buf, oob := make([]byte, 256), make([]byte, 64)
	echoed := 0
	for {
		n, oobn, _, from, err := host.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			return echoed
		}
		w.count(ecnOf(oob[:oobn]))
		if _, err := host.WriteToUDPAddrPort(buf[:n], from); err == nil {
			echoed++
		}
	}
}

// ecnRead reads datagrams on conn until its deadline, counting each one's ECN field in w.
func ecnRead(conn *net.UDPConn, w *ecnWay) {
	buf, oob := make([]byte, 256), make([]byte, 64)
	for {
		_, oobn, _, _, err := conn.ReadMsgUDP(buf, oob)
		if err != nil {
			return
		}
		w.count(ecnOf(oob[:oobn]))
	}
}

// count counts one received datagram whose ECN field was ecn (-1: no TOS byte).
func (w *ecnWay) count(ecn int) {
	if ecn < 0 {
		w.noTOS++
		return
	}
	w.got[ecn]++
}

// bleachLine judges the bleaching check's stream each way. A bleaching way passes when every
// datagram it delivered arrived Not-ECT and the emulator counted exactly those as bleached; the
// other way when none arrived Not-ECT (ECT(0), or CE from an AQM) and none was counted. Each
// way must deliver at least one datagram, and, on a link that loses nothing (lossy false), all
// it was sent.
func (c *checker) bleachLine(down, up ecnWay, lossy bool) {
	pass := true
	var conf, measured []string
	for _, w := range []ecnWay{down, up} {
		k := w.received()
		if w.bleach {
			conf = append(conf, w.name+": cleared to Not-ECT")
			pass = pass && w.got[0] == k && w.bleached == int64(k)
		} else {
			conf = append(conf, w.name+": kept")
			pass = pass && w.got[0] == 0 && w.noTOS == 0 && w.bleached == 0
		}
		pass = pass && k > 0 && (lossy || k == w.sent)
		measured = append(measured, fmt.Sprintf("%s %d of %d received: %d Not-ECT, %d ECT(0), %d ECT(1), %d CE, %d unread; %d bleached", w.name, k, w.sent, w.got[0], w.got[2], w.got[1], w.got[3], w.noTOS, w.bleached))
	}
	tol := "a bleaching way: all received Not-ECT and bleached = received; the other: none Not-ECT, 0 bleached; "
	if lossy {
		tol += "at least one received each way (the link loses packets)"
	} else {
		tol += "every datagram received"
	}
	c.add(fmt.Sprintf("ECN bleaching (%d datagrams sent ECT(0), echoed ECT(0))", bleachCount), strings.Join(conf, "; "), strings.Join(measured, "; "), tol, pass)
}
