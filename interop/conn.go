package interop

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"time"
)

// cryptoStream reassembles one space's CRYPTO data, an ordered byte stream (RFC 9000 section
// 19.6): parts by offset, and next, the first offset not yet handed on.
type cryptoStream struct {
	parts map[uint64][]byte
	next  uint64
}

// add keeps data received at offset off.
func (c *cryptoStream) add(off uint64, data []byte) {
	if c.parts == nil {
		c.parts = map[uint64][]byte{}
	}
	c.parts[off] = data
}

// take returns the bytes now contiguous from next (nil when none) and moves next past them.
func (c *cryptoStream) take() []byte {
	offs := make([]uint64, 0, len(c.parts))
	for o := range c.parts {
		offs = append(offs, o)
	}
	slices.Sort(offs)
	var data []byte
	for _, o := range offs {
		d := c.parts[o]
		if o > c.next {
			break
		}
		delete(c.parts, o)
		if end := o + uint64(len(d)); end > c.next {
			data = append(data, d[c.next-o:]...)
			c.next = end
		}
	}
	return data
}

// rxPacket is one decrypted 1-RTT packet of the server: its packet number, its frames and the
// index of its datagram in Observation.Datagrams.
type rxPacket struct {
	PN       uint64
	Frames   []Frame
	Datagram int
}

// connState is what the probe client keeps of a connection past the Initial packets: the
// packet numbers received per space (to acknowledge), whether an ack-eliciting one is not yet
// acknowledged, its own next packet number per space, the client's handshake data TLS wrote
// and not yet sent (its Finished), whether TLS completed the handshake, whether the server's
// HANDSHAKE_DONE came (RFC 9001 section 4.1.2), and the server's 1-RTT packets in order.
type connState struct {
	recv          map[PacketType]map[uint64]bool
	unacked       map[PacketType]bool
	nextPN        map[PacketType]uint64
	finished      []byte
	tlsDone       bool
	handshakeDone bool
	rx            []rxPacket
}

func newConnState() connState {
	return connState{recv: map[PacketType]map[uint64]bool{}, unacked: map[PacketType]bool{}, nextPN: map[PacketType]uint64{}}
}

// observe records a server packet of space pt with packet number pn and frames fs, received in
// datagram d.
func (c *connState) observe(pt PacketType, pn uint64, fs []Frame, d int) {
	if c.recv[pt] == nil {
		c.recv[pt] = map[uint64]bool{}
	}
	c.recv[pt][pn] = true
	if AckEliciting(fs) {
		c.unacked[pt] = true
	}
	if pt != TypeShort {
		return
	}
	c.rx = append(c.rx, rxPacket{PN: pn, Frames: fs, Datagram: d})
	for _, f := range fs {
		if f.Type == FrameHandshakeDone {
			c.handshakeDone = true
		}
	}
}

// ranges returns the packet numbers received in space pt as ACK ranges, [smallest, largest]
// pairs, newest first (RFC 9000 section 19.3.1).
func (c *connState) ranges(pt PacketType) [][2]uint64 {
	pns := make([]uint64, 0, len(c.recv[pt]))
	for pn := range c.recv[pt] {
		pns = append(pns, pn)
	}
	slices.Sort(pns)
	var r [][2]uint64
	for i := len(pns) - 1; i >= 0; i-- {
		if n := len(r); n > 0 && r[n-1][0] == pns[i]+1 {
			r[n-1][0] = pns[i]
			continue
		}
		r = append(r, [2]uint64{pns[i], pns[i]})
	}
	return r
}

// ProbePNLen is the length of the probe client's packet numbers, in bytes (RFC 9000 section
// 17.1): 4, so that they decode without knowing the space's history.
const ProbePNLen = 4

// sendHandshake sends one Handshake packet carrying frames (RFC 9000 section 17.2.4).
func (s *session) sendHandshake(frames []byte) error {
	pn := s.conn1.nextPN[TypeHandshake]
	s.conn1.nextPN[TypeHandshake]++
	lh := LongHeader{Type: TypeHandshake, Version: Version1, DCID: s.serverCID, SCID: s.scid, PN: pn, PNLen: ProbePNLen}
	b, err := BuildLong(s.hsWrite, lh, frames, 0)
	if err != nil {
		return err
	}
	return s.send(b)
}

// send1RTT sends one 1-RTT packet carrying frames and returns its packet number.
func (s *session) send1RTT(frames []byte) (uint64, error) {
	pn := s.conn1.nextPN[TypeShort]
	s.conn1.nextPN[TypeShort]++
	b, err := BuildShort(s.appWrite, s.serverCID, pn, ProbePNLen, frames)
	if err != nil {
		return pn, err
	}
	return pn, s.send(b)
}

// ackAll acknowledges, in one ACK-only packet per space, the Handshake and 1-RTT spaces where
// an ack-eliciting packet is not yet acknowledged (RFC 9000 section 13.2.1: they MUST be).
func (s *session) ackAll() error {
	if s.conn1.unacked[TypeHandshake] && s.hsWrite != nil {
		s.conn1.unacked[TypeHandshake] = false
		if err := s.sendHandshake(AppendACKRanges(nil, s.conn1.ranges(TypeHandshake))); err != nil {
			return err
		}
	}
	if s.conn1.unacked[TypeShort] && s.appWrite != nil {
		s.conn1.unacked[TypeShort] = false
		_, err := s.send1RTT(AppendACKRanges(nil, s.conn1.ranges(TypeShort)))
		return err
	}
	return nil
}

// settle receives until quiet passes with no datagram (true) or until deadline (false),
// acknowledging each datagram's ack-eliciting packets at once (ackAll).
func (s *session) settle(ctx context.Context, quiet time.Duration, deadline time.Time) (bool, error) {
	pending := func(Datagram) bool { return s.conn1.unacked[TypeHandshake] || s.conn1.unacked[TypeShort] }
	for {
		got, err := s.receive(ctx, quiet, deadline, pending)
		if err != nil {
			return false, err
		}
		if err := s.ackAll(); err != nil {
			return false, err
		}
		if len(got) == 0 {
			return time.Now().Before(deadline), nil
		}
	}
}

// connect completes a handshake (RFC 9001 section 4.1): one 1200-byte Initial with a
// ClientHello, the server's Initial and Handshake CRYPTO data fed to TLS until it writes the
// client's Finished, sent in a Handshake packet with an ACK of the server's, then every
// ack-eliciting packet acknowledged until the server has sent HANDSHAKE_DONE and gone quiet for
// t.Quiet, within t.Window. It returns "" when connected, else the outcome (unsupported for a
// suite the probe does not implement, error otherwise) and why.
func (s *session) connect(ctx context.Context, t Target) (Outcome, string, error) {
	pkt, err := s.initial(ctx, t, Version1, MinInitialDatagram)
	if err != nil {
		return Error, "", err
	}
	if err := s.send(pkt); err != nil {
		return Error, "", err
	}
	deadline := time.Now().Add(t.Window)
	finished := func(Datagram) bool { return s.conn1.finished != nil || s.ev.TLSError != "" }
	if _, err := s.receive(ctx, 0, deadline, finished); err != nil {
		return Error, "", err
	}
	switch {
	case s.ev.TLSError != "":
		return Error, "handshake failed: " + s.ev.TLSError, nil
	case s.ev.BytesReceived == 0:
		return Error, fmt.Sprintf("no answer within %v to a valid Initial: no connection to probe", t.Window), nil
	case !s.ev.ServerHello:
		return Error, fmt.Sprintf("no ServerHello within %v: no connection to probe", t.Window), nil
	case s.ev.CipherSuite != tls.CipherSuiteName(tls.TLS_AES_128_GCM_SHA256):
		return Unsupported, fmt.Sprintf("the server chose %s; the probe client implements TLS_AES_128_GCM_SHA256 only", s.ev.CipherSuite), nil
	case s.conn1.finished == nil || s.appWrite == nil:
		return Error, fmt.Sprintf("no server Finished within %v", t.Window), nil
	}
	frames := AppendACKRanges(nil, s.conn1.ranges(TypeHandshake))
	frames = AppendCrypto(frames, 0, s.conn1.finished)
	s.conn1.finished, s.conn1.unacked[TypeHandshake] = nil, false
	if err := s.sendHandshake(frames); err != nil {
		return Error, "", err
	}
	quiet, err := s.settle(ctx, t.Quiet, deadline)
	if err != nil {
		return Error, "", err
	}
	s.ev.Connected = s.conn1.tlsDone && s.conn1.handshakeDone
	switch {
	case !s.conn1.handshakeDone:
		return Error, fmt.Sprintf("no HANDSHAKE_DONE within %v of the client's Finished (RFC 9001 section 4.1.2)", t.Window), nil
	case !quiet:
		return Error, fmt.Sprintf("the connection was never quiet for %v within %v", t.Quiet, t.Window), nil
	}
	return "", "", nil
}
