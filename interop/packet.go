package interop

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// PacketType names a QUIC packet's type as its header tells it (RFC 9000 section 17).
type PacketType string

// The packet types of QUIC version 1 and the version-independent Version Negotiation packet
// (RFC 9000 sections 17.2.1 to 17.2.5 and 17.3).
const (
	TypeInitial            PacketType = "initial"
	TypeZeroRTT            PacketType = "0rtt"
	TypeHandshake          PacketType = "handshake"
	TypeRetry              PacketType = "retry"
	TypeVersionNegotiation PacketType = "version_negotiation"
	TypeShort              PacketType = "1rtt"
	// TypeOtherVersion is a long header of a version other than 1 and other than 0 (Version
	// Negotiation): its type bits mean nothing to this parser (RFC 8999 section 5.1).
	TypeOtherVersion PacketType = "other_version"
)

// longTypes maps the two type bits of a version 1 long header to the type (RFC 9000
// section 17.2, Table 5).
var longTypes = [4]PacketType{TypeInitial, TypeZeroRTT, TypeHandshake, TypeRetry}

// MaxConnIDLen is the longest connection ID of QUIC version 1, in bytes (RFC 9000
// section 17.2).
const MaxConnIDLen = 20

// RetryTagLen is the length of a Retry packet's integrity tag in bytes (RFC 9000
// section 17.2.5).
const RetryTagLen = 16

// ErrShortPacket is returned for a packet whose header or stated length runs past the
// datagram.
var ErrShortPacket = errors.New("packet truncated")

// Header is a parsed packet header (RFC 9000 section 17). For Initial, 0-RTT and Handshake
// packets PNOffset is where the (protected) packet number starts and Size the packet's whole
// length within its datagram (header, packet number and payload: the Length field covers the
// last two, section 17.2); for Version Negotiation, Retry and short headers Size runs to the
// datagram's end (they cannot be followed by another packet, section 12.2).
type Header struct {
	Type     PacketType
	Version  uint32
	DCID     []byte
	SCID     []byte
	Token    []byte   // Initial: the token; Retry: the Retry token
	Versions []uint32 // Version Negotiation: the Supported Versions
	RetryTag []byte   // Retry: the Retry Integrity Tag
	PNOffset int
	Size     int
}

// ParseHeader parses the first packet of b (RFC 9000 section 17.2 for long headers, 17.3 for
// short ones, whose DCID length is not on the wire: it is taken as 0 here, PNOffset 1, and the
// packet as the rest of the datagram; a caller that knows the connection's IDs moves PNOffset
// past the DCID, as the probe client does for its 1-RTT packets).
func ParseHeader(b []byte) (Header, error) {
	if len(b) < 1 {
		return Header{}, ErrShortPacket
	}
	if b[0]&0x80 == 0 {
		return Header{Type: TypeShort, PNOffset: 1, Size: len(b)}, nil
	}
	if len(b) < 7 {
		return Header{}, fmt.Errorf("%w: long header of %d bytes", ErrShortPacket, len(b))
	}
	h := Header{Version: binary.BigEndian.Uint32(b[1:5])}
	p := 5
	var err error
	if h.DCID, p, err = connID(b, p); err != nil {
		return h, err
	}
	if h.SCID, p, err = connID(b, p); err != nil {
		return h, err
	}
	switch h.Version {
	case 0:
		return parseVN(b, p, h)
	case Version1:
	default:
		h.Type, h.Size = TypeOtherVersion, len(b)
		return h, nil
	}
	h.Type = longTypes[(b[0]>>4)&0x03]
	if h.Type == TypeRetry {
		if len(b)-p < RetryTagLen {
			return h, fmt.Errorf("%w: Retry without its tag", ErrShortPacket)
		}
		h.Token, h.RetryTag, h.Size = b[p:len(b)-RetryTagLen], b[len(b)-RetryTagLen:], len(b)
		return h, nil
	}
	if h.Type == TypeInitial {
		n, l, err := ReadVarint(b[p:])
		if err != nil || uint64(len(b)-p-l) < n {
			return h, fmt.Errorf("%w: Initial token", ErrShortPacket)
		}
		p += l
		h.Token = b[p : p+int(n)]
		p += int(n)
	}
	length, l, err := ReadVarint(b[p:])
	if err != nil {
		return h, fmt.Errorf("%w: Length field", ErrShortPacket)
	}
	p += l
	if uint64(len(b)-p) < length {
		return h, fmt.Errorf("%w: Length %d with %d bytes left", ErrShortPacket, length, len(b)-p)
	}
	h.PNOffset, h.Size = p, p+int(length)
	return h, nil
}

// connID reads a one-byte length and the connection ID after it at b[p:] (RFC 9000
// section 17.2).
func connID(b []byte, p int) ([]byte, int, error) {
	if p >= len(b) {
		return nil, p, fmt.Errorf("%w: connection ID length", ErrShortPacket)
	}
	n := int(b[p])
	if n > MaxConnIDLen || p+1+n > len(b) {
		return nil, p, fmt.Errorf("%w: connection ID of %d bytes", ErrShortPacket, n)
	}
	return b[p+1 : p+1+n], p + 1 + n, nil
}

// parseVN reads the Supported Versions of a Version Negotiation packet (RFC 9000
// section 17.2.1): 32-bit versions to the datagram's end.
func parseVN(b []byte, p int, h Header) (Header, error) {
	h.Type, h.Size = TypeVersionNegotiation, len(b)
	if (len(b)-p)%4 != 0 {
		return h, fmt.Errorf("version negotiation: %d bytes of versions, not a multiple of 4", len(b)-p)
	}
	for ; p < len(b); p += 4 {
		h.Versions = append(h.Versions, binary.BigEndian.Uint32(b[p:]))
	}
	return h, nil
}

// SplitDatagram parses every packet coalesced in one UDP datagram (RFC 9000 section 12.2),
// in order. A packet that does not parse ends the list and is returned as the error, with the
// packets before it.
func SplitDatagram(b []byte) ([]Header, error) {
	var hs []Header
	for len(b) > 0 {
		h, err := ParseHeader(b)
		if err != nil {
			return hs, err
		}
		hs = append(hs, h)
		b = b[h.Size:]
	}
	return hs, nil
}

// LongHeader is what BuildLong writes: a version 1 long header of type Type (Initial, 0-RTT
// or Handshake; RFC 9000 section 17.2), or any version's header with the Initial layout.
type LongHeader struct {
	Type    PacketType
	Version uint32
	DCID    []byte
	SCID    []byte
	Token   []byte // Initial only
	PN      uint64
	PNLen   int // 1..4 bytes (RFC 9000 section 17.1)
}

// typeBits returns the two type bits of t (RFC 9000 section 17.2, Table 5).
func typeBits(t PacketType) (byte, error) {
	for i, lt := range longTypes {
		if lt == t && t != TypeRetry {
			return byte(i), nil
		}
	}
	return 0, fmt.Errorf("no long header with a packet number for type %q", t)
}

// header writes the plaintext header for a payload of n bytes (before the AEAD tag): first
// byte 1|1|type|00|pnlen-1, version, both connection IDs, the token (Initial), the Length
// (packet number + payload + 16-byte tag, as a 2-byte varint so the size is known up front)
// and the packet number truncated to PNLen bytes (RFC 9000 sections 17.1 and 17.2).
func (lh LongHeader) header(n int) ([]byte, error) {
	tb, err := typeBits(lh.Type)
	if err != nil {
		return nil, err
	}
	if lh.PNLen < 1 || lh.PNLen > 4 || len(lh.DCID) > MaxConnIDLen || len(lh.SCID) > MaxConnIDLen {
		return nil, fmt.Errorf("long header: pn length %d, DCID %d bytes, SCID %d bytes", lh.PNLen, len(lh.DCID), len(lh.SCID))
	}
	b := []byte{0xc0 | tb<<4 | byte(lh.PNLen-1)}
	b = binary.BigEndian.AppendUint32(b, lh.Version)
	b = append(b, byte(len(lh.DCID)))
	b = append(b, lh.DCID...)
	b = append(b, byte(len(lh.SCID)))
	b = append(b, lh.SCID...)
	if lh.Type == TypeInitial {
		b = AppendVarint(b, uint64(len(lh.Token)))
		b = append(b, lh.Token...)
	}
	length := lh.PNLen + n + 16
	if length >= 1<<14 {
		return nil, fmt.Errorf("long header: Length %d does not fit 2 bytes", length)
	}
	b = append(b, 0x40|byte(length>>8), byte(length))
	for i := lh.PNLen - 1; i >= 0; i-- {
		b = append(b, byte(lh.PN>>(8*i)))
	}
	return b, nil
}

// overhead is the bytes a packet adds to its payload: header and 16-byte AEAD tag.
func (lh LongHeader) overhead() (int, error) {
	h, err := lh.header(0)
	return len(h) + 16, err
}

// BuildLong writes one protected long-header packet carrying frames, padded with PADDING
// frames (RFC 9000 section 19.1) so that the packet is exactly size bytes (0: no padding
// beyond what header protection's sample needs, RFC 9001 section 5.4.2). A client sends its
// Initial in a datagram of at least 1200 bytes (RFC 9000 section 14.1); callers choose size,
// so that probes can break that rule on purpose.
func BuildLong(k *Keys, lh LongHeader, frames []byte, size int) ([]byte, error) {
	over, err := lh.overhead()
	if err != nil {
		return nil, err
	}
	payload := frames
	if min := 4 - lh.PNLen; len(payload) < min { // sample needs 4 bytes after the pn field start, past the tag's 16
		payload = append(payload, make([]byte, min-len(payload))...)
	}
	if size > 0 {
		if over+len(payload) > size {
			return nil, fmt.Errorf("build %s: %d bytes of frames do not fit a %d-byte packet", lh.Type, len(frames), size)
		}
		payload = append(payload[:len(payload):len(payload)], make([]byte, size-over-len(payload))...)
	}
	hdr, err := lh.header(len(payload))
	if err != nil {
		return nil, err
	}
	return k.Seal(hdr, lh.PNLen, lh.PN, payload)
}

// BuildVersionNegotiation writes a Version Negotiation packet (RFC 9000 section 17.2.1) from
// a server to a client: dcid and scid are the client's SCID and DCID echoed, versions the
// supported ones. The first byte's unused bits are set to 0x40 | 0x80 as servers commonly do.
// It exists for tests of the parser and for probes that play a server.
func BuildVersionNegotiation(dcid, scid []byte, versions []uint32) []byte {
	b := []byte{0xc0}
	b = binary.BigEndian.AppendUint32(b, 0)
	b = append(b, byte(len(dcid)))
	b = append(b, dcid...)
	b = append(b, byte(len(scid)))
	b = append(b, scid...)
	for _, v := range versions {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return b
}

// AppendVarint appends v in QUIC's variable-length integer encoding: the two high bits of the
// first byte give the length, 1, 2, 4 or 8 bytes (RFC 9000 section 16). v must be under 2^62.
func AppendVarint(b []byte, v uint64) []byte {
	switch {
	case v < 1<<6:
		return append(b, byte(v))
	case v < 1<<14:
		return append(b, 0x40|byte(v>>8), byte(v))
	case v < 1<<30:
		return binary.BigEndian.AppendUint32(b, 0x80<<24|uint32(v))
	}
	return binary.BigEndian.AppendUint64(b, 0xc0<<56|v)
}

// ReadVarint reads a variable-length integer from the start of b (RFC 9000 section 16) and
// returns it with the number of bytes it took.
func ReadVarint(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, ErrShortPacket
	}
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0, fmt.Errorf("%w: varint of %d bytes", ErrShortPacket, n)
	}
	v := uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n, nil
}

// BuildShort writes a protected 1-RTT packet (RFC 9000 section 17.3.1): first byte
// 0x40 | (pnLen-1) (spin and key phase bits 0), dcid, the packet number truncated to pnLen
// bytes (1..4) and frames, padded with PADDING to the 4-pnLen bytes the header protection
// sample needs (RFC 9001 section 5.4.2), sealed with k.
func BuildShort(k *Keys, dcid []byte, pn uint64, pnLen int, frames []byte) ([]byte, error) {
	if pnLen < 1 || pnLen > 4 || len(dcid) > MaxConnIDLen {
		return nil, fmt.Errorf("short header: pn length %d, DCID %d bytes", pnLen, len(dcid))
	}
	hdr := append([]byte{0x40 | byte(pnLen-1)}, dcid...)
	for i := pnLen - 1; i >= 0; i-- {
		hdr = append(hdr, byte(pn>>(8*i)))
	}
	payload := frames
	if min := 4 - pnLen; len(payload) < min {
		payload = append(payload[:len(payload):len(payload)], make([]byte, min-len(payload))...)
	}
	return k.Seal(hdr, pnLen, pn, payload)
}
