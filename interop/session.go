package interop

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"time"
)

// session is one probe's socket and what it saw: a connected UDP socket of its own (a fresh
// port, so no case sees another's late packets), the connection IDs it chose, the Initial keys
// they give, and every datagram either way as evidence.
type session struct {
	conn  *net.UDPConn
	start time.Time
	ev    *Observation

	dcid, scid   []byte
	ckeys, skeys *Keys
	tls          *Handshake
	hsKeys       *Keys // server Handshake keys, once TLS gave them (AES-128-GCM only)
	largest      map[PacketType]int64
	crypto       map[uint64][]byte // server Initial CRYPTO data by offset, not yet fed to TLS
	lastRaw      []byte            // the last datagram received
	cryptoNext   uint64            // the next in-order offset TLS expects
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
	s := &session{conn: conn, start: time.Now(), ev: ev, largest: map[PacketType]int64{}, crypto: map[uint64][]byte{}}
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
	s.crypto, s.cryptoNext, s.hsKeys = map[uint64][]byte{}, 0, nil
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
	h, err := NewHandshake(ctx, t.ServerName, t.ALPN, s.scid)
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
// ServerHello they carry and given AES-128-GCM Handshake keys, its Handshake packets.
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
// packet number per space, from which the next are recovered (RFC 9000 Appendix A.3), and
// feeds the CRYPTO data of its Initial packets to TLS (feedTLS); the probe's own packets are
// decoded as the first of their space.
func (s *session) open(pi *PacketInfo, k *Keys, pkt []byte, h Header, fromServer bool) {
	largest, ok := s.largest[h.Type]
	if !ok || !fromServer {
		largest = -1
	}
	feed := fromServer && h.Type == TypeInitial
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
		if feed && f.Type == FrameCrypto {
			s.crypto[f.Offset] = f.Data
		}
	}
	if err != nil {
		pi.Note = err.Error()
	}
	if feed {
		s.feedTLS(pi)
	}
}

// feedTLS gives TLS the server's Initial CRYPTO data that is now contiguous from offset 0
// (RFC 9000 section 19.6: CRYPTO data is an ordered byte stream) and, when TLS installs
// Handshake keys for TLS_AES_128_GCM_SHA256, derives the packet keys (RFC 9001 section 5.1).
func (s *session) feedTLS(pi *PacketInfo) {
	if s.tls == nil {
		return
	}
	offs := make([]uint64, 0, len(s.crypto))
	for o := range s.crypto {
		offs = append(offs, o)
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	var data []byte
	for _, o := range offs {
		d := s.crypto[o]
		if o > s.cryptoNext {
			break
		}
		delete(s.crypto, o)
		if end := o + uint64(len(d)); end > s.cryptoNext {
			data = append(data, d[s.cryptoNext-o:]...)
			s.cryptoNext = end
		}
	}
	if len(data) == 0 {
		return
	}
	secret, suite, err := s.tls.ServerHello(data)
	switch {
	case err != nil:
		s.ev.TLSError = err.Error()
	case secret != nil:
		s.ev.ServerHello = true
		s.ev.CipherSuite = tls.CipherSuiteName(suite)
		if suite == tls.TLS_AES_128_GCM_SHA256 {
			s.hsKeys, _ = NewKeys(secret)
		}
	}
}
