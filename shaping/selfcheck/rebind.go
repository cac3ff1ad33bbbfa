package selfcheck

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// rebindGap is the pacing of the rebinding check's stream: one 64-byte datagram every 10 ms.
const rebindGap = 10 * time.Millisecond

// rebindSeen is one datagram of the rebinding check's stream as the host got it: its sequence
// number, when it arrived and the source it came from (the NAT's binding).
type rebindSeen struct {
	seq  int
	at   time.Time
	from netip.AddrPort
}

// rebind checks a link's NAT rebinding (rebind=): the client sends a paced UDP stream
// (rebindGap) to an echo on the host for one rebinding interval plus two RTTs and 300 ms, so at
// least one rebinding falls inside it; the host echoes every datagram to the source it came
// from (the NAT's binding), and the NAT must bring the echoes back to the client's own port.
// Judged by rebindLine.
func (c *checker) rebind(ctx context.Context) error {
	r := c.spec.Rebind
	if !r.Enabled() {
		return nil
	}
	span := max(r.Every, r.First) + 2*c.spec.RTT + 300*time.Millisecond
	host, err := net.ListenPacket("udp4", c.hostAddr())
	if err != nil {
		return fmt.Errorf("listen udp: %w", err)
	}
	defer host.Close()
	var client *net.UDPConn
	if err := c.clientDo(func() (err error) {
		client, err = net.DialUDP("udp4", nil, host.LocalAddr().(*net.UDPAddr))
		return err
	}); err != nil {
		return fmt.Errorf("dial udp in namespace: %w", err)
	}
	defer client.Close()
	var seen []rebindSeen
	echoed := map[int]bool{}
	var wg sync.WaitGroup
	hc := host.(*net.UDPConn)
	wg.Go(func() {
		buf := make([]byte, 256)
		for {
			k, from, err := hc.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if k >= 4 {
				seen = append(seen, rebindSeen{seq: int(binary.BigEndian.Uint32(buf)), at: time.Now(), from: from})
				hc.WriteToUDPAddrPort(buf[:k], from)
			}
		}
	})
	wg.Go(func() {
		buf := make([]byte, 256)
		for {
			k, err := client.Read(buf)
			if err != nil {
				return
			}
			if k >= 4 {
				echoed[int(binary.BigEndian.Uint32(buf))] = true
			}
		}
	})
	buf := make([]byte, 64)
	sent := 0
	for end := time.Now().Add(span); time.Now().Before(end) && ctx.Err() == nil; sent++ {
		binary.BigEndian.PutUint32(buf, uint32(sent))
		client.Write(buf)
		sleepCtx(ctx, rebindGap)
	}
	sleepCtx(ctx, c.spec.RTT+c.qDelay(true)+c.qDelay(false)+300*time.Millisecond)
	host.SetReadDeadline(time.Now())
	client.SetReadDeadline(time.Now())
	wg.Wait()
	lossy := c.spec.DownImp.Loss > 0 || c.spec.UpImp.Loss > 0 || c.spec.DownImp.Corrupt > 0 || c.spec.UpImp.Corrupt > 0 || c.spec.Outage.Off > 0
	c.rebindLine(span, sent, seen, echoed, lossy)
	return nil
}

// rebindLine judges the rebinding check's stream: sent datagrams, seen at the host (in arrival
// order, with their sources), echoed back to the client. It passes when the host saw the
// client's source change at least once (the stream spans a rebinding interval; rebind=addr: a
// new IPv4 address too, except for a single rebinding, Every 0, which may have happened before
// the stream began), and, on a link that loses nothing, every datagram that reached the host
// came back through the NAT but those the host echoed to a binding a rebinding then replaced:
// at most the datagrams of one RTT and 50 ms around each change.
func (c *checker) rebindLine(span time.Duration, sent int, seen []rebindSeen, echoed map[int]bool, lossy bool) {
	r := c.spec.Rebind
	var sources []string
	hosts := map[netip.Addr]bool{}
	changes := 0
	for i, s := range seen {
		if i == 0 || s.from != seen[i-1].from {
			sources = append(sources, s.from.String())
			if i > 0 {
				changes++
			}
		}
		hosts[s.from.Addr()] = true
	}
	lost := 0
	for _, s := range seen {
		if !echoed[s.seq] {
			lost++
		}
	}
	allowed := changes * (int((c.spec.RTT+50*time.Millisecond)/rebindGap) + 1)
	name := fmt.Sprintf("NAT rebinding (%s, %d datagrams over %s)", r.Mode, sent, span.Round(time.Millisecond))
	conf := fmt.Sprintf("the client's source moves at %s, then every %s", r.First, r.Every)
	measured := fmt.Sprintf("the host saw %d sources (%s), %d changes; %d of %d echoes came back through the NAT", len(sources), strings.Join(sources, " -> "), changes, len(seen)-lost, len(seen))
	tol := fmt.Sprintf("at least 1 change (rebind=addr: 2 addresses); echoes lost <= %d (one RTT and 50 ms of datagrams per change)", allowed)
	pass := len(seen) > 0
	if r.Every > 0 {
		pass = pass && changes >= 1 && (r.Mode.String() != "addr" || len(hosts) >= 2)
	} else {
		tol = "a single rebinding may fall before the stream: no change asked; " + tol[strings.Index(tol, "echoes"):]
	}
	if lossy {
		tol += " (not asked: the link loses or corrupts packets)"
	} else {
		pass = pass && lost <= allowed
	}
	c.add(name, conf, measured, tol, pass)
}
