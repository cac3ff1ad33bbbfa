package interop

import (
	"context"
	"crypto/tls"
	"fmt"
)

// Transport parameter IDs the probe client sends (RFC 9000 section 18.2).
const (
	tpMaxIdleTimeout       = 0x01
	tpInitialMaxData       = 0x04
	tpMaxStreamDataBidiLoc = 0x05
	tpMaxStreamDataBidiRem = 0x06
	tpMaxStreamDataUni     = 0x07
	tpMaxStreamsBidi       = 0x08
	tpMaxStreamsUni        = 0x09
	tpInitialSCID          = 0x0f
)

// Limits are the flow control limits a probe client advertises in its transport parameters
// (RFC 9000 section 18.2): bytes per connection (initial_max_data) and per stream
// (initial_max_stream_data_bidi_local for the streams it opens, _bidi_remote for the server's,
// _uni for the server's unidirectional ones), and how many streams of each kind the server may
// open (initial_max_streams_bidi and _uni).
type Limits struct {
	MaxData, StreamDataBidiLocal, StreamDataBidiRemote, StreamDataUni uint64
	StreamsBidi, StreamsUni                                           uint64
}

// DefaultLimits are modest limits: 1 MB per connection, 256 KB per stream, 100 streams of each
// kind.
var DefaultLimits = Limits{MaxData: 1 << 20, StreamDataBidiLocal: 256 << 10, StreamDataBidiRemote: 256 << 10, StreamDataUni: 256 << 10, StreamsBidi: 100, StreamsUni: 100}

// TransportParameters encodes the client's transport parameters as the
// quic_transport_parameters extension carries them: a sequence of (ID, length, value)
// with varint IDs and lengths (RFC 9000 section 18). It sends
// initial_source_connection_id = scid (required of every endpoint, section 7.3), a 30 s
// max_idle_timeout and the flow control limits l.
func TransportParameters(scid []byte, l Limits) []byte {
	var b []byte
	add := func(id uint64, v []byte) {
		b = AppendVarint(b, id)
		b = AppendVarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	num := func(id, v uint64) { add(id, AppendVarint(nil, v)) }
	num(tpMaxIdleTimeout, 30000)
	num(tpInitialMaxData, l.MaxData)
	num(tpMaxStreamDataBidiLoc, l.StreamDataBidiLocal)
	num(tpMaxStreamDataBidiRem, l.StreamDataBidiRemote)
	num(tpMaxStreamDataUni, l.StreamDataUni)
	num(tpMaxStreamsBidi, l.StreamsBidi)
	num(tpMaxStreamsUni, l.StreamsUni)
	add(tpInitialSCID, scid)
	return b
}

// Handshake is the TLS side of a probe connection: crypto/tls's QUIC API (tls.QUICClient,
// RFC 9001 section 4) writes the ClientHello; the probe carries it in CRYPTO frames itself.
type Handshake struct {
	conn *tls.QUICConn
	// ClientHello is the Initial-level handshake data tls wrote: the ClientHello message.
	ClientHello []byte
}

// NewHandshake starts a TLS 1.3 client handshake for serverName with ALPN alpn and the
// transport parameters of scid and limits l, and returns its ClientHello. Only X25519 is offered (so the
// ClientHello fits one Initial packet; a hybrid post-quantum key share would need two) and the
// certificate is not verified: the probes test the transport and never carry application data.
func NewHandshake(ctx context.Context, serverName string, alpn []string, scid []byte, l Limits) (*Handshake, error) {
	cfg := &tls.Config{
		ServerName:         serverName,
		NextProtos:         alpn,
		MinVersion:         tls.VersionTLS13,
		CurvePreferences:   []tls.CurveID{tls.X25519},
		InsecureSkipVerify: true, // see the doc comment: no data is ever exchanged
	}
	c := tls.QUICClient(&tls.QUICConfig{TLSConfig: cfg})
	c.SetTransportParameters(TransportParameters(scid, l))
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("tls quic client start: %w", err)
	}
	h := &Handshake{conn: c}
	for {
		e := c.NextEvent()
		if e.Kind == tls.QUICNoEvent {
			break
		}
		if e.Kind == tls.QUICWriteData && e.Level == tls.QUICEncryptionLevelInitial {
			h.ClientHello = append(h.ClientHello, e.Data...)
		}
	}
	if len(h.ClientHello) == 0 {
		c.Close()
		return nil, fmt.Errorf("tls quic client wrote no ClientHello")
	}
	return h, nil
}

// TLSEvents are what TLS did with the handshake data fed to it (RFC 9001 section 4.1.3): the
// secrets it installed per encryption level for reading (the server's) and writing (the
// client's), the cipher suite they are for, the handshake bytes it wrote per level (the
// client's Finished at the Handshake level), and whether the handshake completed.
type TLSEvents struct {
	Read, Write map[tls.QUICEncryptionLevel][]byte
	Suite       uint16
	Data        map[tls.QUICEncryptionLevel][]byte
	Done        bool
}

// Handle feeds the server's CRYPTO data of one encryption level (in order, RFC 9000 section
// 19.6) to TLS and returns what TLS did with it.
func (h *Handshake) Handle(level tls.QUICEncryptionLevel, data []byte) (TLSEvents, error) {
	ev := TLSEvents{Read: map[tls.QUICEncryptionLevel][]byte{}, Write: map[tls.QUICEncryptionLevel][]byte{}, Data: map[tls.QUICEncryptionLevel][]byte{}}
	if err := h.conn.HandleData(level, data); err != nil {
		return ev, fmt.Errorf("tls: server %v data: %w", level, err)
	}
	for {
		e := h.conn.NextEvent()
		switch e.Kind {
		case tls.QUICNoEvent:
			return ev, nil
		case tls.QUICSetReadSecret:
			ev.Read[e.Level], ev.Suite = append([]byte(nil), e.Data...), e.Suite
		case tls.QUICSetWriteSecret:
			ev.Write[e.Level], ev.Suite = append([]byte(nil), e.Data...), e.Suite
		case tls.QUICWriteData:
			ev.Data[e.Level] = append(ev.Data[e.Level], e.Data...)
		case tls.QUICHandshakeDone:
			ev.Done = true
		}
	}
}

// Close ends the TLS side.
func (h *Handshake) Close() error { return h.conn.Close() }
