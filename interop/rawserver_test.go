package interop

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"strings"
	"testing"
	"time"
)

// rawServer is a QUIC version 1 server of one connection built from this package's own
// primitives (Initial keys, packet protection, frames) and crypto/tls's QUIC server, for the
// tests built to fail of the cases that need a handshake (ack-only, flow-control): it completes
// the handshake (RFC 9001 section 4.1: ServerHello in an Initial, the rest of its flight in a
// Handshake packet, HANDSHAKE_DONE in 1-RTT once the client's Finished came) and then answers
// each of the client's 1-RTT packets with the frames misbehave returns for it (nil: nothing).
// One goroutine (fakeServer's) drives it.
type rawServer struct {
	t         *testing.T
	cert      tls.Certificate
	tls       *tls.QUICConn
	scid      []byte // its own connection ID
	dcid      []byte // the client's
	rx, tx    map[PacketType]*Keys
	pn        map[PacketType]uint64
	out       map[PacketType][]byte // CRYPTO data TLS wrote, not yet sent, per space
	off       map[PacketType]uint64 // CRYPTO bytes sent per space
	done      bool                  // TLS completed: HANDSHAKE_DONE to send
	doneSent  bool
	misbehave func(fs []Frame, pn uint64) []byte
}

// spaces maps TLS's encryption levels to packet number spaces (RFC 9001 section 4).
var spaces = map[tls.QUICEncryptionLevel]PacketType{tls.QUICEncryptionLevelInitial: TypeInitial, tls.QUICEncryptionLevelHandshake: TypeHandshake, tls.QUICEncryptionLevelApplication: TypeShort}

// newRawServer makes a rawServer with a fresh self-signed ECDSA certificate.
func newRawServer(t *testing.T, misbehave func(fs []Frame, pn uint64) []byte) *rawServer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"plt.test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return &rawServer{t: t, cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, misbehave: misbehave,
		rx: map[PacketType]*Keys{}, tx: map[PacketType]*Keys{}, pn: map[PacketType]uint64{}, out: map[PacketType][]byte{}, off: map[PacketType]uint64{}}
}

// reply is fakeServer's answer to datagram d: the packets it opened handled in order, then
// what is to be sent, one packet per datagram.
func (s *rawServer) reply(d []byte) [][]byte {
	hs, _ := SplitDatagram(d)
	var replies [][]byte
	off := 0
	for _, h := range hs {
		pkt := d[off : off+h.Size]
		off += h.Size
		if h.Type == TypeInitial && s.tls == nil {
			if err := s.start(h); err != nil {
				s.t.Log(err)
				return nil
			}
		}
		if h.Type == TypeShort {
			h.PNOffset = 1 + len(s.scid)
		}
		k := s.rx[h.Type]
		if k == nil {
			continue
		}
		_, pn, payload, err := k.Open(pkt, h.PNOffset, -1) // the probe writes 4-byte packet numbers
		if err != nil {
			continue
		}
		fs, _ := ParseFrames(payload)
		for _, f := range fs {
			if f.Type == FrameCrypto {
				s.handle(h.Type, f.Data)
			}
		}
		if h.Type == TypeShort && s.misbehave != nil {
			if frames := s.misbehave(fs, pn); frames != nil {
				replies = append(replies, s.short(frames))
			}
		}
	}
	return append(s.flush(), replies...)
}

// start begins the connection of the client's first Initial h: its Initial keys (RFC 9001
// section 5.2), a connection ID of its own and the TLS server, given transport parameters
// (RFC 9000 section 18.2) with original_destination_connection_id and
// initial_source_connection_id.
func (s *rawServer) start(h Header) error {
	s.dcid = append([]byte(nil), h.SCID...)
	client, server, err := InitialKeys(h.DCID)
	if err != nil {
		return err
	}
	s.rx[TypeInitial], s.tx[TypeInitial] = client, server
	s.scid = make([]byte, 8)
	rand.Read(s.scid)
	tp := TransportParameters(s.scid, DefaultLimits)
	tp = AppendVarint(AppendVarint(tp, 0x00), uint64(len(h.DCID))) // original_destination_connection_id
	tp = append(tp, h.DCID...)
	s.tls = tls.QUICServer(&tls.QUICConfig{TLSConfig: &tls.Config{Certificates: []tls.Certificate{s.cert}, NextProtos: DefaultALPN, MinVersion: tls.VersionTLS13}})
	s.tls.SetTransportParameters(tp)
	s.t.Cleanup(func() { s.tls.Close() })
	if err := s.tls.Start(context.Background()); err != nil {
		return err
	}
	s.events()
	return nil
}

// handle feeds the client's CRYPTO data of space pt to TLS (in order: loopback, and the probe
// sends its flight once).
func (s *rawServer) handle(pt PacketType, data []byte) {
	for level, sp := range spaces {
		if sp == pt {
			if err := s.tls.HandleData(level, data); err != nil {
				s.t.Log(err)
				return
			}
		}
	}
	s.events()
}

// events takes what TLS did: keys per space from its secrets, the handshake data to send,
// whether it completed.
func (s *rawServer) events() {
	for {
		e := s.tls.NextEvent()
		switch e.Kind {
		case tls.QUICNoEvent:
			return
		case tls.QUICSetReadSecret:
			s.rx[spaces[e.Level]], _ = NewKeys(e.Data)
		case tls.QUICSetWriteSecret:
			s.tx[spaces[e.Level]], _ = NewKeys(e.Data)
		case tls.QUICWriteData:
			s.out[spaces[e.Level]] = append(s.out[spaces[e.Level]], e.Data...)
		case tls.QUICHandshakeDone:
			s.done = true
		}
	}
}

// flush writes the pending CRYPTO data in an Initial (padded to 1200 bytes, RFC 9000 section
// 14.1) and a Handshake packet, and HANDSHAKE_DONE in a 1-RTT packet once TLS completed.
func (s *rawServer) flush() [][]byte {
	var out [][]byte
	for _, pt := range []PacketType{TypeInitial, TypeHandshake} {
		data := s.out[pt]
		if len(data) == 0 {
			continue
		}
		size := 0
		if pt == TypeInitial {
			size = 1200
		}
		lh := LongHeader{Type: pt, Version: Version1, DCID: s.dcid, SCID: s.scid, PN: s.pn[pt], PNLen: 4}
		b, err := BuildLong(s.tx[pt], lh, AppendCrypto(nil, s.off[pt], data), size)
		if err != nil {
			s.t.Log(err)
			return nil
		}
		s.pn[pt]++
		s.off[pt] += uint64(len(data))
		s.out[pt] = nil
		out = append(out, b)
	}
	if s.done && !s.doneSent {
		s.doneSent = true
		out = append(out, s.short([]byte{FrameHandshakeDone}))
	}
	return out
}

// short writes frames in the server's next 1-RTT packet.
func (s *rawServer) short(frames []byte) []byte {
	b, err := BuildShort(s.tx[TypeShort], s.dcid, s.pn[TypeShort], 4, frames)
	if err != nil {
		s.t.Log(err)
		return nil
	}
	s.pn[TypeShort]++
	return b
}

// TestProbesBuiltToFailConnected: a server of the package's own making (rawServer) completes a
// handshake with the probe and then breaks the rule of each case that needs one: it
// acknowledges every 1-RTT packet with a packet of one ACK frame, ACK-only ones too (ack-only,
// RFC 9000 section 13.2.1), and answers the request on stream 0 with 1100 bytes at once, past
// the probe's 1000-byte limit, or with 1000 there and 1100 on each of its three
// unidirectional streams, 4300 bytes past the connection's 4000 (flow-control, RFC 9000
// section 4.1). Each case fails with the evidence that shows it; the same server behaving
// passes (the control). About 3 s.
func TestProbesBuiltToFailConnected(t *testing.T) {
	ackAll := func(_ []Frame, pn uint64) []byte { return AppendACK(nil, pn, pn) }
	ackEliciting := func(fs []Frame, pn uint64) []byte {
		if !AckEliciting(fs) {
			return nil
		}
		return AppendACK(nil, pn, pn)
	}
	// overrun answers the request on stream 0 with n bytes on it and uni bytes on each of the
	// server's three unidirectional streams (3, 7, 11).
	overrun := func(n, uni int) func(fs []Frame, pn uint64) []byte {
		return func(fs []Frame, pn uint64) []byte {
			for _, f := range fs {
				if IsStream(f.Type) && f.StreamID == 0 {
					b := AppendStream(AppendACK(nil, pn, pn), 0, 0, make([]byte, n), false)
					for id := uint64(3); uni > 0 && id <= 11; id += 4 {
						b = AppendStream(b, id, 0, make([]byte, uni), false)
					}
					return b
				}
			}
			return nil
		}
	}
	for _, tc := range []struct {
		name, c   string
		misbehave func(fs []Frame, pn uint64) []byte
		want      Outcome
		reason    string
		evidence  func(o Observation) bool
	}{
		{"ACK-only packets acknowledged", "ack-only", ackAll, Fail, "5 packets of only ACK frames answered the ACK-only packets",
			func(o Observation) bool {
				return len(o.ACKOnlyReplies) == ACKOnlyCount && o.ControlAnswered != nil && *o.ControlAnswered
			}},
		{"only ack-eliciting packets acknowledged", "ack-only", ackEliciting, Pass, "",
			func(o Observation) bool {
				return len(o.ACKOnlyReplies) == 0 && o.ControlAnswered != nil && *o.ControlAnswered
			}},
		{"1100 bytes past a 1000-byte stream limit", "flow-control", overrun(1100, 0), Fail, "stream 0 data reached offset 1100 past its limit 1000",
			func(o Observation) bool { return o.Flow != nil && len(o.Flow.Over) > 0 }},
		{"4300 bytes past the connection's 4000", "flow-control", overrun(1000, 1100), Fail, "4300 bytes of stream data on the connection past its limit 4000",
			func(o Observation) bool { return o.Flow != nil && len(o.Flow.Over) == 0 && o.Flow.ConnBytes == 4300 }},
		{"1000 bytes within the limit", "flow-control", overrun(1000, 0), Pass, "stream 0 data up to offset 1000 of its 1000-byte limit",
			func(o Observation) bool { return o.Flow != nil && len(o.Flow.Over) == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRawServer(t, tc.misbehave)
			target := Target{Addr: fakeServer(t, srv.reply), ServerName: "plt.test", Quiet: 300 * time.Millisecond, Window: 2 * time.Second, Path: "/big"}
			c, _ := lookup(tc.c)
			r := Run(context.Background(), c, target)
			t.Logf("%s: %s", r.Outcome, r.Reason)
			if r.Outcome != tc.want || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("%s: %s, want %s: %s", r.Outcome, r.Reason, tc.want, tc.reason)
			}
			if !r.Observed.Connected || !tc.evidence(r.Observed) {
				t.Errorf("evidence: connected %v, %+v", r.Observed.Connected, r.Observed)
			}
		})
	}
}
