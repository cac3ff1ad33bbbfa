package interop

import (
	"fmt"
)

// Frame types this package parses (RFC 9000 section 19 and Table 3): every frame that may
// appear in Initial and Handshake packets (section 12.4: PADDING, PING, ACK, CRYPTO,
// CONNECTION_CLOSE of type 0x1c) and a few of 1-RTT.
const (
	FramePadding       = 0x00
	FramePing          = 0x01
	FrameACK           = 0x02
	FrameACKECN        = 0x03
	FrameCrypto        = 0x06
	FrameNewToken      = 0x07
	FrameConnClose     = 0x1c
	FrameConnCloseApp  = 0x1d
	FrameHandshakeDone = 0x1e
)

// Frame is one parsed frame (RFC 9000 section 19). A run of PADDING frames is one Frame with
// Length the run's byte count.
type Frame struct {
	Type uint64
	// CRYPTO: Offset and Data; PADDING: Length, the run's bytes.
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
		default:
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
	b = AppendVarint(b, FrameACK)
	b = AppendVarint(b, largest)
	b = AppendVarint(b, 0)
	b = AppendVarint(b, 0)
	return AppendVarint(b, largest-smallest)
}
