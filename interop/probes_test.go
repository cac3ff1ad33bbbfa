package interop

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// fakeServer answers every datagram it receives with reply(datagram) (nil: nothing), on a
// loopback UDP socket, until the test ends.
func fakeServer(t *testing.T, reply func([]byte) [][]byte) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			for _, d := range reply(buf[:n]) {
				pc.WriteTo(d, addr)
			}
		}
	}()
	return pc.LocalAddr().String()
}

// TestProbesBuiltToFail: a server built to break each rule fails each case, with the evidence
// that shows it: it answers any datagram, small or not, with four 1200-byte datagrams of
// junk (more than 3x what it received, and no Version Negotiation for an unknown version); a
// second one answers version negotiation listing the version offered and without echoing the
// connection IDs.
func TestProbesBuiltToFail(t *testing.T) {
	junk := func([]byte) [][]byte {
		d := make([]byte, 1200)
		d[0] = 0x40 // a short header: no key opens it
		return [][]byte{d, d, d, d}
	}
	target := Target{Addr: fakeServer(t, junk), ServerName: "plt.test", Quiet: 300 * time.Millisecond, Window: 300 * time.Millisecond}
	for _, tc := range []struct {
		c      string
		reason string
	}{
		{"version-negotiation", "is not a Version Negotiation packet"},
		{"initial-under-1200", "answered an Initial in a 1000-byte datagram with 4 datagrams (4800 bytes)"},
		{"stateless-reset", "Stateless Reset of 1200 bytes for a 100-byte packet: not smaller than its trigger"},
		{"amplification-limit", "sent 4800 bytes in 4 datagrams to an unvalidated address that sent 1200 (4.00x > 3x, 1200 bytes over); the last datagram left with the limit already reached"},
	} {
		t.Run(tc.c, func(t *testing.T) {
			c, _ := lookup(tc.c)
			r := Run(context.Background(), c, target)
			if r.Outcome != Fail || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("%s: %s, want fail: %s", r.Outcome, r.Reason, tc.reason)
			}
			if r.Observed.BytesReceived < 1200 || r.Observed.Datagrams[len(r.Observed.Datagrams)-1].Packets[0].Type != TypeShort {
				t.Errorf("evidence: %+v", r.Observed)
			}
		})
	}
	badVN := func(d []byte) [][]byte {
		h, err := ParseHeader(d)
		if err != nil {
			return nil
		}
		return [][]byte{BuildVersionNegotiation(h.DCID, h.SCID, []uint32{Version1, h.Version})}
	}
	c, _ := lookup("version-negotiation")
	r := Run(context.Background(), c, Target{Addr: fakeServer(t, badVN), ServerName: "plt.test", Quiet: 300 * time.Millisecond})
	if r.Outcome != Fail || !strings.Contains(r.Reason, "does not echo the connection IDs") || len(r.Observed.VersionsListed) != 2 {
		t.Errorf("VN without echo: %s: %s %v", r.Outcome, r.Reason, r.Observed.VersionsListed)
	}
	echoes := func(d []byte) [][]byte {
		h, err := ParseHeader(d)
		if err != nil {
			return nil
		}
		return [][]byte{BuildVersionNegotiation(h.SCID, h.DCID, []uint32{Version1, h.Version})}
	}
	r = Run(context.Background(), c, Target{Addr: fakeServer(t, echoes), ServerName: "plt.test", Quiet: 300 * time.Millisecond})
	if r.Outcome != Fail || r.Reason != "Version Negotiation lists the version offered" {
		t.Errorf("VN listing the offered version: %s: %s", r.Outcome, r.Reason)
	}
	reset := func(d []byte) [][]byte {
		if d[0]&0x80 != 0 {
			return nil
		}
		return [][]byte{append([]byte{0x5a}, make([]byte, len(d)-2)...)}
	}
	c, _ = lookup("stateless-reset")
	r = Run(context.Background(), c, Target{Addr: fakeServer(t, reset), ServerName: "plt.test", Quiet: 300 * time.Millisecond})
	if r.Outcome != Pass || r.Observed.ResetToken != strings.Repeat("00", 16) || r.Observed.BytesReceived != ResetTrigger-1 {
		t.Errorf("a well-formed reset: %s: %s %+v", r.Outcome, r.Reason, r.Observed)
	}
}
