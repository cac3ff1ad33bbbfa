package interop

import (
	"fmt"
)

// Frame types this package parses (RFC 9000 section 19 and Table 3): every frame of QUIC
// version 1. STREAM frames have the types 0x08 to 0x0f (FrameStream with the OFF 0x04, LEN 0x02
// and FIN 0x01 bits, section 19.8).
const (
	FramePadding            = 0x00
	FramePing               = 0x01
	FrameACK                = 0x02
	FrameACKECN             = 0x03
	FrameResetStream        = 0x04
	FrameStopSending        = 0x05
	FrameCrypto             = 0x06
	FrameNewToken           = 0x07
	FrameStream             = 0x08
	FrameMaxData            = 0x10
	FrameMaxStreamData      = 0x11
	FrameMaxStreamsBidi     = 0x12
	FrameMaxStreamsUni      = 0x13
	FrameDataBlocked        = 0x14
	FrameStreamDataBlocked  = 0x15
	FrameStreamsBlockedBidi = 0x16
	FrameStreamsBlockedUni  = 0x17
	FrameNewConnectionID    = 0x18
	FrameRetireConnectionID = 0x19
	FramePathChallenge      = 0x1a
	FramePathResponse       = 0x1b
	FrameConnClose          = 0x1c
	FrameConnCloseApp       = 0x1d
	FrameHandshakeDone      = 0x1e
)

// IsStream reports whether frame type t is a STREAM frame (0x08 to 0x0f, RFC 9000 section 19.8).
func IsStream(t uint64) bool { return t&^0x07 == FrameStream }

// Frame is one parsed frame (RFC 9000 section 19). A run of PADDING frames is one Frame with
// Length the run's byte count.
type Frame struct {
	Type uint64
	// CRYPTO and STREAM: Offset and Data (Length its bytes); PADDING: Length, the run's bytes.
	Offset uint64
	Length uint64
	Data   []byte
	// ACK: the largest acknowledged packet number, the ACK Delay field and the ranges as
	// [smallest, largest] pairs, newest first (section 19.3.1).
	LargestAcked uint64
	ACKDelay     uint64
	Ranges       [][2]uint64
	// CONNECTION_CLOSE: the error code, the frame type that caused it (0x1c only) and the
	// reason phrase (section 19.19).
	ErrorCode uint64
	FrameType uint64
	Reason    string
	// StreamID is the stream of STREAM, RESET_STREAM, STOP_SENDING, MAX_STREAM_DATA and
	// STREAM_DATA_BLOCKED; Fin is a STREAM frame's FIN bit (section 19.8).
	StreamID uint64
	Fin      bool
	// Value is the one number of MAX_DATA, MAX_STREAM_DATA, MAX_STREAMS, DATA_BLOCKED,
	// STREAM_DATA_BLOCKED, STREAMS_BLOCKED (a limit, in bytes or streams), RESET_STREAM (the
	// final size in bytes), NEW_CONNECTION_ID and RETIRE_CONNECTION_ID (a sequence number)
	// (sections 19.4 and 19.9 to 19.16).
	Value uint64
}

// AckEliciting reports whether a packet carrying frames fs is ack-eliciting: it holds a frame
// other than ACK, PADDING and CONNECTION_CLOSE (RFC 9000 section 1.2 and 13.2).
func AckEliciting(fs []Frame) bool {
	for _, f := range fs {
		switch f.Type {
		case FramePadding, FrameACK, FrameACKECN, FrameConnClose, FrameConnCloseApp:
		default:
			return true
		}
	}
	return false
}

// String returns a short description for evidence, e.g. "CRYPTO off=0 len=90",
// "ACK largest=0 ranges=[[0 0]]", "PADDING x1000".
func (f Frame) String() string {
	switch f.Type {
	case FramePadding:
		return fmt.Sprintf("PADDING x%d", f.Length)
	case FramePing:
		return "PING"
	case FrameACK, FrameACKECN:
		return fmt.Sprintf("ACK largest=%d ranges=%v", f.LargestAcked, f.Ranges)
	case FrameCrypto:
		return fmt.Sprintf("CRYPTO off=%d len=%d", f.Offset, len(f.Data))
	case FrameNewToken:
		return fmt.Sprintf("NEW_TOKEN len=%d", len(f.Data))
	case FrameConnClose, FrameConnCloseApp:
		return fmt.Sprintf("CONNECTION_CLOSE(0x%x) code=0x%x frame=0x%x reason=%q", f.Type, f.ErrorCode, f.FrameType, f.Reason)
	case FrameHandshakeDone:
		return "HANDSHAKE_DONE"
	case FrameNewConnectionID:
		return fmt.Sprintf("NEW_CONNECTION_ID seq=%d cid=%x", f.Value, f.Data)
	case FramePathChallenge, FramePathResponse:
		return fmt.Sprintf("PATH_%s %x", map[uint64]string{FramePathChallenge: "CHALLENGE", FramePathResponse: "RESPONSE"}[f.Type], f.Data)
	}
	if IsStream(f.Type) {
		fin := ""
		if f.Fin {
			fin = " fin"
		}
		return fmt.Sprintf("STREAM id=%d off=%d len=%d%s", f.StreamID, f.Offset, len(f.Data), fin)
	}
	if n, ok := valueFrames[f.Type]; ok {
		if n.stream {
			return fmt.Sprintf("%s id=%d %d", n.name, f.StreamID, f.Value)
		}
		return fmt.Sprintf("%s %d", n.name, f.Value)
	}
	return fmt.Sprintf("frame 0x%x", f.Type)
}

// ParseFrames parses a packet's plaintext payload into frames (RFC 9000 section 19). It stops
// with an error at a frame type it does not know (their lengths are not self-describing), returning the frames before it.
func ParseFrames(p []byte) ([]Frame, error) {
	var fs []Frame
	for len(p) > 0 {
		t, n, err := ReadVarint(p)
		if err != nil {
			return fs, fmt.Errorf("frame type: %w", err)
		}
		f := Frame{Type: t}
		rest := p[n:]
		switch t {
		case FramePadding:
			run := 1
			for run < len(p) && p[run] == 0 {
				run++
			}
			f.Length, rest = uint64(run), p[run:]
		case FramePing, FrameHandshakeDone:
		case FrameACK, FrameACKECN:
			rest, err = parseACK(rest, &f)
		case FrameCrypto:
			rest, err = parseCrypto(rest, &f)
		case FrameNewToken:
			var l uint64
			if l, rest, err = varint(rest); err == nil {
				f.Data, rest, err = take(rest, l)
			}
		case FrameConnClose, FrameConnCloseApp:
			rest, err = parseClose(rest, &f)
		case FramePathChallenge, FramePathResponse:
			f.Data, rest, err = take(rest, 8)
		case FrameNewConnectionID:
			rest, err = parseNewConnID(rest, &f)
		default:
			if IsStream(t) {
				rest, err = parseStream(rest, &f)
				break
			}
			if n, ok := valueFrames[t]; ok {
				rest, err = parseValue(rest, &f, n)
				break
			}
			return fs, fmt.Errorf("frame type 0x%x not parsed here", t)
		}
		if err != nil {
			return fs, fmt.Errorf("frame 0x%x: %w", t, err)
		}
		fs = append(fs, f)
		p = rest
	}
	return fs, nil
}

// valueFrame names a frame made of varints: an optional stream ID, Value, and for RESET_STREAM
// and STOP_SENDING an error code before it.
type valueFrame struct {
	name          string
	stream, ecode bool
}

// valueFrames are the frames of one number (RFC 9000 sections 19.4, 19.5 and 19.9 to 19.16).
var valueFrames = map[uint64]valueFrame{
	FrameResetStream:        {"RESET_STREAM", true, true},
	FrameStopSending:        {"STOP_SENDING", true, true},
	FrameMaxData:            {"MAX_DATA", false, false},
	FrameMaxStreamData:      {"MAX_STREAM_DATA", true, false},
	FrameMaxStreamsBidi:     {"MAX_STREAMS_BIDI", false, false},
	FrameMaxStreamsUni:      {"MAX_STREAMS_UNI", false, false},
	FrameDataBlocked:        {"DATA_BLOCKED", false, false},
	FrameStreamDataBlocked:  {"STREAM_DATA_BLOCKED", true, false},
	FrameStreamsBlockedBidi: {"STREAMS_BLOCKED_BIDI", false, false},
	FrameStreamsBlockedUni:  {"STREAMS_BLOCKED_UNI", false, false},
	FrameRetireConnectionID: {"RETIRE_CONNECTION_ID", false, false},
}

// parseValue reads a valueFrame's fields: [stream ID], [error code], value; STOP_SENDING has
// no value after its error code (section 19.5).
func parseValue(b []byte, f *Frame, n valueFrame) ([]byte, error) {
	var err error
	if n.stream {
		if f.StreamID, b, err = varint(b); err != nil {
			return b, err
		}
	}
	if n.ecode {
		if f.ErrorCode, b, err = varint(b); err != nil || f.Type == FrameStopSending {
			return b, err
		}
	}
	f.Value, b, err = varint(b)
	return b, err
}

// parseStream reads a STREAM frame (RFC 9000 section 19.8): Stream ID, Offset when the OFF bit
// (0x04) is set, Length when the LEN bit (0x02) is set (else the data runs to the packet's
// end), FIN the 0x01 bit.
func parseStream(b []byte, f *Frame) ([]byte, error) {
	var err error
	if f.StreamID, b, err = varint(b); err != nil {
		return b, err
	}
	if f.Type&0x04 != 0 {
		if f.Offset, b, err = varint(b); err != nil {
			return b, err
		}
	}
	f.Length = uint64(len(b))
	if f.Type&0x02 != 0 {
		if f.Length, b, err = varint(b); err != nil {
			return b, err
		}
	}
	f.Fin = f.Type&0x01 != 0
	f.Data, b, err = take(b, f.Length)
	return b, err
}

// parseNewConnID reads NEW_CONNECTION_ID (RFC 9000 section 19.15): Sequence Number (Value),
// Retire Prior To, a one-byte length and the connection ID (Data), and the 16-byte Stateless
// Reset Token.
func parseNewConnID(b []byte, f *Frame) ([]byte, error) {
	var err error
	if f.Value, b, err = varint(b); err != nil {
		return b, err
	}
	if _, b, err = varint(b); err != nil {
		return b, err
	}
	if len(b) < 1 || b[0] < 1 || b[0] > MaxConnIDLen {
		return b, fmt.Errorf("NEW_CONNECTION_ID: connection ID length")
	}
	if f.Data, b, err = take(b[1:], uint64(b[0])); err != nil {
		return b, err
	}
	_, b, err = take(b, 16)
	return b, err
}

// varint reads one variable-length integer and returns the rest.
func varint(b []byte) (uint64, []byte, error) {
	v, n, err := ReadVarint(b)
	if err != nil {
		return 0, b, err
	}
	return v, b[n:], nil
}

// take returns the first n bytes of b and the rest.
func take(b []byte, n uint64) ([]byte, []byte, error) {
	if uint64(len(b)) < n {
		return nil, b, fmt.Errorf("%w: %d bytes wanted, %d left", ErrShortPacket, n, len(b))
	}
	return b[:n], b[n:], nil
}

// parseACK reads an ACK frame's fields after its type (RFC 9000 section 19.3): Largest
// Acknowledged, ACK Delay, ACK Range Count, First ACK Range, then Gap and ACK Range Length
// pairs, and for type 0x03 the three ECN counts.
func parseACK(b []byte, f *Frame) ([]byte, error) {
	var count, first uint64
	var err error
	for _, v := range []*uint64{&f.LargestAcked, &f.ACKDelay, &count, &first} {
		if *v, b, err = varint(b); err != nil {
			return b, err
		}
	}
	if first > f.LargestAcked {
		return b, fmt.Errorf("first ACK range %d beyond largest %d", first, f.LargestAcked)
	}
	hi := f.LargestAcked
	lo := hi - first
	f.Ranges = append(f.Ranges, [2]uint64{lo, hi})
	for i := uint64(0); i < count; i++ {
		var gap, length uint64
		if gap, b, err = varint(b); err != nil {
			return b, err
		}
		if length, b, err = varint(b); err != nil {
			return b, err
		}
		if lo < gap+2+length { // section 19.3.1: largest = previous smallest - gap - 2
			return b, fmt.Errorf("ACK range below zero")
		}
		hi = lo - gap - 2
		lo = hi - length
		f.Ranges = append(f.Ranges, [2]uint64{lo, hi})
	}
	if f.Type == FrameACKECN {
		for range 3 {
			if _, b, err = varint(b); err != nil {
				return b, err
			}
		}
	}
	return b, nil
}

// parseCrypto reads a CRYPTO frame's Offset, Length and data (RFC 9000 section 19.6).
func parseCrypto(b []byte, f *Frame) ([]byte, error) {
	var err error
	if f.Offset, b, err = varint(b); err != nil {
		return b, err
	}
	if f.Length, b, err = varint(b); err != nil {
		return b, err
	}
	f.Data, b, err = take(b, f.Length)
	return b, err
}

// parseClose reads a CONNECTION_CLOSE frame (RFC 9000 section 19.19): the error code, for
// type 0x1c the frame type, and the reason phrase.
func parseClose(b []byte, f *Frame) ([]byte, error) {
	var err error
	if f.ErrorCode, b, err = varint(b); err != nil {
		return b, err
	}
	if f.Type == FrameConnClose {
		if f.FrameType, b, err = varint(b); err != nil {
			return b, err
		}
	}
	var l uint64
	if l, b, err = varint(b); err != nil {
		return b, err
	}
	var r []byte
	r, b, err = take(b, l)
	f.Reason = string(r)
	return b, err
}

// AppendCrypto appends a CRYPTO frame carrying data at offset (RFC 9000 section 19.6).
func AppendCrypto(b []byte, offset uint64, data []byte) []byte {
	b = AppendVarint(b, FrameCrypto)
	b = AppendVarint(b, offset)
	b = AppendVarint(b, uint64(len(data)))
	return append(b, data...)
}

// AppendACK appends an ACK frame acknowledging the one range [smallest, largest] with an
// ACK Delay field of 0 (RFC 9000 section 19.3).
func AppendACK(b []byte, largest, smallest uint64) []byte {
	return AppendACKRanges(b, [][2]uint64{{smallest, largest}})
}

// AppendACKRanges appends an ACK frame acknowledging ranges, [smallest, largest] pairs that do
// not touch, newest (largest) first as ParseFrames returns them, with an ACK Delay of 0: the
// first range and then each as a Gap (the packets skipped, minus 2) and an ACK Range Length
// (RFC 9000 section 19.3.1). It appends nothing for no ranges.
func AppendACKRanges(b []byte, ranges [][2]uint64) []byte {
	if len(ranges) == 0 {
		return b
	}
	b = AppendVarint(b, FrameACK)
	b = AppendVarint(b, ranges[0][1])
	b = AppendVarint(b, 0)
	b = AppendVarint(b, uint64(len(ranges)-1))
	b = AppendVarint(b, ranges[0][1]-ranges[0][0])
	for i := 1; i < len(ranges); i++ {
		b = AppendVarint(b, ranges[i-1][0]-ranges[i][1]-2)
		b = AppendVarint(b, ranges[i][1]-ranges[i][0])
	}
	return b
}

// AppendStream appends a STREAM frame with the OFF and LEN bits set, carrying data at offset of
// stream id, with the FIN bit when fin (RFC 9000 section 19.8).
func AppendStream(b []byte, id, offset uint64, data []byte, fin bool) []byte {
	t := uint64(FrameStream | 0x04 | 0x02)
	if fin {
		t |= 0x01
	}
	b = AppendVarint(b, t)
	b = AppendVarint(b, id)
	b = AppendVarint(b, offset)
	b = AppendVarint(b, uint64(len(data)))
	return append(b, data...)
}
