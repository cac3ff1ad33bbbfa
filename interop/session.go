package interop

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// session is one probe's socket and what it saw: a connected UDP socket of its own (a fresh
// port, so no case sees another's late packets), the connection IDs it chose, the Initial keys
// they give, and every datagram either way as evidence.
type session struct {
	conn  *net.UDPConn
	start time.Time
	ev    *Observation

	limits       Limits // the flow control limits its ClientHello advertises
	dcid, scid   []byte
	serverCID    []byte // the server's SCID: the DCID of the probe's later packets (RFC 9000 section 7.2)
	ckeys, skeys *Keys
	tls          *Handshake
	hsKeys       *Keys // server Handshake keys, once TLS gave them (AES-128-GCM only)
	hsWrite      *Keys // the probe's Handshake keys
	appRead      *Keys // the server's and the probe's 1-RTT keys
	appWrite     *Keys
	largest      map[PacketType]int64
	crypto       map[PacketType]*cryptoStream // the server's CRYPTO data per space, not yet fed to TLS
	conn1        connState
	lastRaw      []byte // the last datagram received
}

// newSession opens a UDP socket connected to t.Addr with fresh 8-byte connection IDs
// (RFC 9000 section 7.2: a client's first DCID is at least 8 random bytes).
func newSession(t Target, ev *Observation) (*session, error) {
	raddr, err := net.ResolveUDPAddr("udp", t.Addr)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", t.Addr, err)
	}
	conn, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		return nil, fmt.Errorf("dial udp %s: %w", t.Addr, err)
	}
	s := &session{conn: conn, start: time.Now(), ev: ev, limits: DefaultLimits}
	if err := s.newIDs(); err != nil {
		conn.Close()
		return nil, err
	}
	return s, nil
}

// newIDs picks new connection IDs and derives their Initial keys (RFC 9001 section 5.2), as
// for a new connection attempt on the same socket.
func (s *session) newIDs() error {
	s.dcid, s.scid = make([]byte, 8), make([]byte, 8)
	rand.Read(s.dcid)
	rand.Read(s.scid)
	var err error
	s.ckeys, s.skeys, err = InitialKeys(s.dcid)
	s.largest = map[PacketType]int64{}
	s.crypto = map[PacketType]*cryptoStream{TypeInitial: {}, TypeHandshake: {}}
	s.serverCID, s.hsKeys, s.hsWrite, s.appRead, s.appWrite = nil, nil, nil, nil, nil
	s.conn1 = newConnState()
	return err
}

func (s *session) close() {
	if s.tls != nil {
		s.tls.Close()
	}
	s.conn.Close()
}

// initial builds a client Initial of version v carrying a fresh ClientHello in one CRYPTO
// frame, padded so the datagram is size bytes.
func (s *session) initial(ctx context.Context, t Target, v uint32, size int) ([]byte, error) {
	if s.tls != nil {
		s.tls.Close()
	}
	h, err := NewHandshake(ctx, t.ServerName, t.ALPN, s.scid, s.limits)
	if err != nil {
		return nil, err
	}
	s.tls = h
	lh := LongHeader{Type: TypeInitial, Version: v, DCID: s.dcid, SCID: s.scid, PNLen: 4}
	return BuildLong(s.ckeys, lh, AppendCrypto(nil, 0, h.ClientHello), size)
}

// send writes one datagram and records it.
func (s *session) send(b []byte) error {
	d := Datagram{Dir: "sent", AtMS: s.ms(), Size: len(b), Packets: s.describe(b, s.ckeys, false)}
	s.ev.Datagrams = append(s.ev.Datagrams, d)
	s.ev.BytesSent += len(b)
	if _, err := s.conn.Write(b); err != nil {
		return fmt.Errorf("send %d bytes: %w", len(b), err)
	}
	return nil
}

func (s *session) ms() float64 { return float64(time.Since(s.start).Microseconds()) / 1000 }

// receive records every datagram that arrives until quiet passes with none or until the
// deadline, whichever is first (quiet 0: only the deadline). until, when not nil, stops it early
// after a datagram it returns true for. It returns the datagrams received.
func (s *session) receive(ctx context.Context, quiet time.Duration, deadline time.Time, until func(Datagram) bool) ([]Datagram, error) {
	var got []Datagram
	buf := make([]byte, 65536)
	for ctx.Err() == nil {
		dl := deadline
		if quiet > 0 && time.Now().Add(quiet).Before(dl) {
			dl = time.Now().Add(quiet)
		}
		if err := s.conn.SetReadDeadline(dl); err != nil {
			return got, err
		}
		n, err := s.conn.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return got, nil
		}
		if err != nil {
			return got, fmt.Errorf("receive: %w", err)
		}
		b := append([]byte(nil), buf[:n]...)
		s.lastRaw = b
		d := Datagram{Dir: "received", AtMS: s.ms(), Size: n, Packets: s.describe(b, s.skeys, true)}
		s.ev.Datagrams = append(s.ev.Datagrams, d)
		s.ev.BytesReceived += n
		got = append(got, d)
		if until != nil && until(d) {
			return got, nil
		}
	}
	return got, ctx.Err()
}

// describe parses the packets of one datagram for the evidence; with fromServer it decrypts
// the server's Initial packets (RFC 9001 section 5.2) and, once TLS has accepted the
// ServerHello they carry and given AES-128-GCM Handshake and 1-RTT keys, its Handshake and 1-RTT
// packets; the probe's own with its keys of each space. A short header's packet number starts
// after the DCID, the probe's SCID in the server's packets and the server's in the probe's.
func (s *session) describe(b []byte, k *Keys, fromServer bool) []PacketInfo {
	hs, err := SplitDatagram(b)
	var out []PacketInfo
	off := 0
	for _, h := range hs {
		pkt := b[off : off+h.Size]
		off += h.Size
		pi := PacketInfo{Type: h.Type, Size: h.Size, Version: fmt.Sprintf("0x%08x", h.Version)}
		for _, v := range h.Versions {
			pi.Versions = append(pi.Versions, fmt.Sprintf("0x%08x", v))
		}
		switch {
		case h.Type == TypeInitial && h.Version == Version1:
			s.open(&pi, k, pkt, h, fromServer)
		case h.Type == TypeHandshake && fromServer && s.hsKeys != nil:
			s.open(&pi, s.hsKeys, pkt, h, true)
		case h.Type == TypeHandshake && !fromServer && s.hsWrite != nil:
			s.open(&pi, s.hsWrite, pkt, h, false)
		case h.Type == TypeShort && fromServer && s.appRead != nil:
			h.PNOffset = 1 + len(s.scid)
			s.open(&pi, s.appRead, pkt, h, true)
		case h.Type == TypeShort && !fromServer && s.appWrite != nil:
			h.PNOffset = 1 + len(s.serverCID)
			s.open(&pi, s.appWrite, pkt, h, false)
		case h.Type == TypeHandshake:
			pi.Note = "not decrypted: no Handshake keys"
		}
		out = append(out, pi)
	}
	if err != nil {
		out = append(out, PacketInfo{Type: "unparsed", Size: len(b) - off, Note: err.Error()})
	}
	return out
}

// open decrypts one packet into pi. For the server's packets (fromServer) it keeps the largest
// packet number per space, from which the next are recovered (RFC 9000 Appendix A.3), the
// server's connection ID, what is to be acknowledged (observe), and feeds the CRYPTO data of its
// Initial and Handshake packets to TLS (feedTLS); the probe's own packets are decoded as the
// first of their space (the probe writes 4-byte packet numbers).
func (s *session) open(pi *PacketInfo, k *Keys, pkt []byte, h Header, fromServer bool) {
	largest, ok := s.largest[h.Type]
	if !ok || !fromServer {
		largest = -1
	}
	_, pn, payload, err := k.Open(pkt, h.PNOffset, largest)
	if err != nil {
		pi.Note = err.Error()
		return
	}
	if fromServer && int64(pn) > largest {
		s.largest[h.Type] = int64(pn)
	}
	pi.PN = &pn
	fs, err := ParseFrames(payload)
	for _, f := range fs {
		pi.Frames = append(pi.Frames, f.String())
	}
	if err != nil {
		pi.Note = err.Error()
	}
	if !fromServer {
		return
	}
	if s.serverCID == nil && h.Type != TypeShort {
		s.serverCID = append([]byte(nil), h.SCID...)
	}
	s.conn1.observe(h.Type, pn, fs, len(s.ev.Datagrams))
	if cs := s.crypto[h.Type]; cs != nil {
		for _, f := range fs {
			if f.Type == FrameCrypto {
				cs.add(f.Offset, f.Data)
			}
		}
		s.feedTLS(h.Type)
	}
}

// levels maps the spaces with CRYPTO data to TLS's encryption levels (RFC 9001 section 4).
var levels = map[PacketType]tls.QUICEncryptionLevel{TypeInitial: tls.QUICEncryptionLevelInitial, TypeHandshake: tls.QUICEncryptionLevelHandshake}

// feedTLS gives TLS the server's CRYPTO data of space pt that is now contiguous (RFC 9000
// section 19.6: CRYPTO data is an ordered byte stream) and installs what TLS gives back
// (install).
func (s *session) feedTLS(pt PacketType) {
	data := s.crypto[pt].take()
	if s.tls == nil || len(data) == 0 {
		return
	}
	e, err := s.tls.Handle(levels[pt], data)
	if err != nil {
		s.ev.TLSError = err.Error()
		return
	}
	s.install(e)
}

// install records the ServerHello's suite and, for TLS_AES_128_GCM_SHA256 (the only AEAD the
// probe implements), derives the packet keys of each secret TLS installed (RFC 9001 section
// 5.1); it keeps the client's handshake data to send and whether the handshake completed.
func (s *session) install(e TLSEvents) {
	if e.Read[tls.QUICEncryptionLevelHandshake] != nil {
		s.ev.ServerHello = true
		s.ev.CipherSuite = tls.CipherSuiteName(e.Suite)
	}
	if e.Suite != 0 && e.Suite != tls.TLS_AES_128_GCM_SHA256 {
		return
	}
	set := func(k **Keys, secret []byte) {
		if secret != nil {
			*k, _ = NewKeys(secret)
		}
	}
	set(&s.hsKeys, e.Read[tls.QUICEncryptionLevelHandshake])
	set(&s.hsWrite, e.Write[tls.QUICEncryptionLevelHandshake])
	set(&s.appRead, e.Read[tls.QUICEncryptionLevelApplication])
	set(&s.appWrite, e.Write[tls.QUICEncryptionLevelApplication])
	s.conn1.finished = append(s.conn1.finished, e.Data[tls.QUICEncryptionLevelHandshake]...)
	s.conn1.tlsDone = s.conn1.tlsDone || e.Done
}
