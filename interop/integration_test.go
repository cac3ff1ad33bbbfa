package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/matrix"
	"github.com/pltlab/pltlab/server"
)

// startH3 starts the project's server with h3 only on the given stack, on loopback.
func startH3(t *testing.T, stack string) server.Info {
	t.Helper()
	s, err := server.New("", server.WithAddr("127.0.0.1:0"), server.WithProtocols("h3"), server.WithH3Stack(stack, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s.Info()
}

// TestIntegrationProbes runs every probe against the project's h3 server on each stack here
// (quic-go in process; ngtcp2's gtlsserver when installed) and checks each verdict against
// its evidence: the datagrams on the wire, never the outcome alone. Both stacks complete the
// handshake and pass ack-only (no ACK-only answer to ACK-only packets) and flow-control (no
// STREAM data past the 1000-byte limit on the request stream).
func TestIntegrationProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers: skipped with -short")
	}
	for _, stack := range server.H3Stacks {
		t.Run(stack, func(t *testing.T) {
			if stack == server.StackNgtcp2 {
				testenv.Require(t, server.Ngtcp2Binary)
			}
			info := startH3(t, stack)
			target := interop.Target{Addr: info.Addr("h3"), ServerName: info.Host, Window: 3 * time.Second, Path: matrix.FlowPath(stack)}
			t.Logf("server %s", info.QUICStack)
			for _, c := range interop.Cases {
				r := interop.Run(context.Background(), c, target)
				b, _ := json.Marshal(r)
				t.Logf("%s: %s: %s\n%s", c.Name, r.Outcome, r.Reason, b)
				// Both stacks pass the other cases; the amplification limit is a verdict
				// (quic-go overshoots it by design), judged below from the bytes on the wire.
				// Neither stack sends a Stateless Reset here (quic-go: the server package
				// sets no StatelessResetKey, without which quic-go never sends one;
				// gtlsserver 0.12.1 drops short-header packets of unknown connections, of
				// 43 to 1200 bytes alike): unsupported, a pass should one come.
				if c.Name == "stateless-reset" {
					if r.Outcome != interop.Unsupported && r.Outcome != interop.Pass {
						t.Errorf("stateless-reset against %s: %s (%s), want unsupported or pass", stack, r.Outcome, r.Reason)
					}
					continue
				}
				if r.Outcome != interop.Pass && (c.Name != "amplification-limit" || r.Outcome != interop.Fail) {
					t.Errorf("%s against %s: %s (%s)", c.Name, stack, r.Outcome, r.Reason)
				}
				checkEvidence(t, r)
			}
		})
	}
}

// checkEvidence checks that a passing verdict is what its datagrams show.
func checkEvidence(t *testing.T, r interop.Result) {
	t.Helper()
	var sent, recv int
	for _, d := range r.Observed.Datagrams {
		if d.Dir == "sent" {
			sent += d.Size
		} else {
			recv += d.Size
		}
	}
	if sent != r.Observed.BytesSent || recv != r.Observed.BytesReceived {
		t.Errorf("%s: totals %d/%d, datagrams add up to %d/%d", r.Case, r.Observed.BytesSent, r.Observed.BytesReceived, sent, recv)
	}
	if r.Case == "amplification-limit" {
		e := r.Observed
		if over := e.BytesReceived > 3*e.BytesSent; over != (r.Outcome == interop.Fail) {
			t.Errorf("amplification: %s with %d bytes received for %d sent", r.Outcome, e.BytesReceived, e.BytesSent)
		}
		if e.BytesSent != 1200 || !e.ServerHello || e.CipherSuite == "" {
			t.Errorf("sent %d, server hello %t %q", e.BytesSent, e.ServerHello, e.CipherSuite)
		}
		if p := e.Datagrams[1].Packets[0]; p.Type != interop.TypeInitial || p.PN == nil || len(p.Frames) == 0 {
			t.Errorf("first answer not a decrypted Initial: %+v", e.Datagrams[1])
		}
		if p := e.Datagrams[1].Packets[1]; p.Type != interop.TypeHandshake || len(p.Frames) == 0 {
			t.Errorf("second packet of the first answer not a decrypted Handshake packet: %+v", p)
		}
	}
	if r.Outcome != interop.Pass {
		return
	}
	switch r.Case {
	case "version-negotiation":
		if len(r.Observed.VersionsListed) == 0 || !contains(r.Observed.VersionsListed, "0x00000001") {
			t.Errorf("VN lists %v, want version 1 among them", r.Observed.VersionsListed)
		}
	case "ack-only":
		checkACKOnly(t, r.Observed)
	case "flow-control":
		checkFlow(t, r.Observed)
	case "initial-under-1200":
		d := r.Observed.Datagrams
		if d[0].Dir != "sent" || d[0].Size != interop.SmallDatagram || d[1].Dir != "sent" || d[1].Size != interop.MinInitialDatagram || len(d) < 3 {
			t.Errorf("datagrams: want the small Initial, the control, then an answer: %+v", d)
		}
	}
}

// checkACKOnly checks a passing ack-only from its datagrams: a handshake completed, the five
// ACK-only packets sent (1-RTT, one ACK frame each, their packet numbers the ones recorded),
// the PING control acknowledged, and no reply counted.
func checkACKOnly(t *testing.T, e interop.Observation) {
	t.Helper()
	var ackOnly []uint64
	for _, d := range e.Datagrams {
		for _, p := range d.Packets {
			if d.Dir == "sent" && p.Type == interop.TypeShort && p.PN != nil && len(p.Frames) == 1 && strings.HasPrefix(p.Frames[0], "ACK ") && *p.PN >= e.ACKOnlySent[0] {
				ackOnly = append(ackOnly, *p.PN)
			}
		}
	}
	if !e.Connected || fmt.Sprint(ackOnly) != fmt.Sprint(e.ACKOnlySent) || len(ackOnly) != interop.ACKOnlyCount || e.ControlAnswered == nil || !*e.ControlAnswered || len(e.ACKOnlyReplies) != 0 {
		t.Errorf("ack-only evidence: connected %t, ACK-only packets sent %v (recorded %v), control %v, replies %v", e.Connected, ackOnly, e.ACKOnlySent, e.ControlAnswered, e.ACKOnlyReplies)
	}
}

// checkFlow checks a passing flow-control from its datagrams: the highest offset + length of the
// server's STREAM frames on stream 0, read from the frames' descriptions, is the one recorded,
// above 0 and within the 1000-byte limit.
func checkFlow(t *testing.T, e interop.Observation) {
	t.Helper()
	var highest uint64
	for _, d := range e.Datagrams {
		for _, p := range d.Packets {
			for _, f := range p.Frames {
				var off, n uint64
				if d.Dir == "received" && strings.HasPrefix(f, "STREAM id=0 ") {
					fmt.Sscanf(f, "STREAM id=0 off=%d len=%d", &off, &n)
					highest = max(highest, off+n)
				}
			}
		}
	}
	if !e.Connected || e.Flow == nil || highest != e.Flow.StreamHighest || highest == 0 || highest > interop.FlowLimits.StreamDataBidiLocal {
		t.Errorf("flow-control evidence: connected %t, stream 0 up to %d on the wire, recorded %+v", e.Connected, highest, e.Flow)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestIntegrationProbeSilentServer: against a UDP socket that reads and never answers, the
// probes that need an answer report error or fail, never pass.
func TestIntegrationProbeSilentServer(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: skipped with -short")
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	target := interop.Target{Addr: pc.LocalAddr().String(), ServerName: "plt.test", Quiet: 300 * time.Millisecond, Window: 300 * time.Millisecond, Path: "/big"}
	want := map[string]interop.Outcome{"version-negotiation": interop.Fail, "initial-under-1200": interop.Error, "amplification-limit": interop.Error, "stateless-reset": interop.Unsupported,
		"ack-only": interop.Error, "flow-control": interop.Error}
	for _, c := range interop.Cases {
		r := interop.Run(context.Background(), c, target)
		if r.Outcome != want[c.Name] || !strings.Contains(r.Reason, "no answer") && !strings.Contains(r.Reason, "no Stateless Reset") {
			t.Errorf("%s: %s (%s), want %s", c.Name, r.Outcome, r.Reason, want[c.Name])
		}
	}
}
