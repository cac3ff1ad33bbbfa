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

// TransportParameters encodes the client's transport parameters as the
// quic_transport_parameters extension carries them: a sequence of (ID, length, value)
// with varint IDs and lengths (RFC 9000 section 18). It sends
// initial_source_connection_id = scid (required of every endpoint, section 7.3), a 30 s
// max_idle_timeout and modest flow control limits (1 MB per connection, 256 KB per stream,
// 100 streams of each kind).
func TransportParameters(scid []byte) []byte {
	var b []byte
	add := func(id uint64, v []byte) {
		b = AppendVarint(b, id)
		b = AppendVarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	num := func(id, v uint64) { add(id, AppendVarint(nil, v)) }
	num(tpMaxIdleTimeout, 30000)
	num(tpInitialMaxData, 1<<20)
	num(tpMaxStreamDataBidiLoc, 256<<10)
	num(tpMaxStreamDataBidiRem, 256<<10)
	num(tpMaxStreamDataUni, 256<<10)
	num(tpMaxStreamsBidi, 100)
	num(tpMaxStreamsUni, 100)
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
// transport parameters of scid, and returns its ClientHello. Only X25519 is offered (so the
// ClientHello fits one Initial packet; a hybrid post-quantum key share would need two) and the
// certificate is not verified: the probes test the transport and never carry application data.
func NewHandshake(ctx context.Context, serverName string, alpn []string, scid []byte) (*Handshake, error) {
	cfg := &tls.Config{
		ServerName:         serverName,
		NextProtos:         alpn,
		MinVersion:         tls.VersionTLS13,
		CurvePreferences:   []tls.CurveID{tls.X25519},
		InsecureSkipVerify: true, // see the doc comment: no data is ever exchanged
	}
	c := tls.QUICClient(&tls.QUICConfig{TLSConfig: cfg})
	c.SetTransportParameters(TransportParameters(scid))
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

// ServerHello feeds the server's Initial CRYPTO data (in order) to TLS and returns the
// server's Handshake traffic secret and the cipher suite once TLS has accepted a ServerHello
// for this ClientHello and installed the Handshake read keys (RFC 9001 section 4.1.3); nil
// before that.
func (h *Handshake) ServerHello(data []byte) (secret []byte, suite uint16, err error) {
	if err := h.conn.HandleData(tls.QUICEncryptionLevelInitial, data); err != nil {
		return nil, 0, fmt.Errorf("tls: server Initial data: %w", err)
	}
	for {
		e := h.conn.NextEvent()
		switch e.Kind {
		case tls.QUICNoEvent:
			return secret, suite, nil
		case tls.QUICSetReadSecret:
			if e.Level == tls.QUICEncryptionLevelHandshake {
				secret, suite = append([]byte(nil), e.Data...), e.Suite
			}
		}
	}
}

// Close ends the TLS side.
func (h *Handshake) Close() error { return h.conn.Close() }
