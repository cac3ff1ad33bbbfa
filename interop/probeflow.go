package interop

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// FlowRule is flow-control's rule (RFC 9000 section 4.1).
const FlowRule = "RFC 9000 sections 4.1 and 19.8: a sender MUST NOT send data beyond the limits its peer advertised: on the request stream no STREAM data past initial_max_stream_data_bidi_local (1000 bytes here) and on the connection no more than initial_max_data (4000) in all, while the client sends no MAX_STREAM_DATA or MAX_DATA; a blocked sender SHOULD send STREAM_DATA_BLOCKED or DATA_BLOCKED (noted, not judged) (the probe requests a larger resource over HTTP/3)"

// FlowLimits are flow-control's transport parameters: 1000 bytes on the probe's request stream,
// 4000 on the connection, and 3 unidirectional streams of 1000 bytes each for the server's
// HTTP/3 control and QPACK streams (RFC 9114 section 6.2); the server may open no
// bidirectional stream.
var FlowLimits = Limits{MaxData: 4000, StreamDataBidiLocal: 1000, StreamDataUni: 1000, StreamsUni: 3}

// FlowFileBytes is the size of the resource flow-control asks for (Target.Path), in bytes: far
// more than FlowLimits allow.
const FlowFileBytes = 100000

// FlowObservation is flow-control's account of the server's STREAM frames (RFC 9000 sections 4.1
// and 19.8), sizes in bytes.
type FlowObservation struct {
	// StreamLimit and ConnLimit are the limits the probe advertised (FlowLimits).
	StreamLimit uint64 `json:"stream_limit"`
	ConnLimit   uint64 `json:"conn_limit"`
	// StreamHighest is the highest offset + length of the STREAM frames on the request stream
	// (stream 0), and StreamFin whether one carried FIN.
	StreamHighest uint64 `json:"stream_highest"`
	StreamFin     bool   `json:"stream_fin,omitempty"`
	// ConnBytes is the sum over the server's streams of each one's highest offset + length:
	// the data that counts towards initial_max_data (section 4.1).
	ConnBytes uint64 `json:"conn_bytes"`
	// Over lists the STREAM frames past a limit ("pn 7 STREAM id=0 off=900 len=300").
	Over []string `json:"over,omitempty"`
	// Blocked lists the STREAM_DATA_BLOCKED and DATA_BLOCKED frames the server sent.
	Blocked []string `json:"blocked,omitempty"`
}

// probeFlowControl connects with FlowLimits (connect), opens the HTTP/3 control stream (stream
// 2, SETTINGS without settings, RFC 9114 section 6.2.1) and sends a GET of t.Path on stream 0
// (H3Request), acknowledges what the server sends without ever raising a limit until it is
// quiet for t.Quiet (within t.Window), and judges its STREAM frames (judgeFlow).
func probeFlowControl(ctx context.Context, t Target, ev *Observation) (Outcome, string, error) {
	if t.Path == "" {
		return Unsupported, "no path of a resource larger than the flow control limit is known for this server (Target.Path)", nil
	}
	if !slices.Contains(t.ALPN, "h3") {
		return Unsupported, fmt.Sprintf("the probe requests over HTTP/3; ALPN %v offers no h3", t.ALPN), nil
	}
	s, err := newSession(t, ev)
	if err != nil {
		return Error, "", err
	}
	defer s.close()
	s.limits = FlowLimits
	if out, reason, err := s.connect(ctx, t); out != "" || err != nil {
		return out, reason, err
	}
	frames := AppendACKRanges(nil, s.conn1.ranges(TypeShort))
	frames = AppendStream(frames, 2, 0, []byte{0x00, 0x04, 0x00}, false)
	frames = AppendStream(frames, 0, 0, H3Request(t.ServerName, t.Path), true)
	if _, err := s.send1RTT(frames); err != nil {
		return Error, "", err
	}
	if _, err := s.settle(ctx, t.Quiet, time.Now().Add(t.Window)); err != nil {
		return Error, "", err
	}
	out, reason, fe := judgeFlow(FlowLimits, s.conn1.rx)
	ev.Flow = &fe
	return out, reason, nil
}

// judgeFlow judges the server's 1-RTT packets against the limits l the probe advertised (RFC
// 9000 section 4.1): fail when the STREAM data on the request stream (0) reaches past
// l.StreamDataBidiLocal or the connection's past l.MaxData, with the frames past it; error when
// no data came on stream 0 or the response ended (FIN) within the limit, so that no limit was
// tested; pass otherwise, noting any STREAM_DATA_BLOCKED or DATA_BLOCKED.
func judgeFlow(l Limits, rx []rxPacket) (Outcome, string, FlowObservation) {
	fe := FlowObservation{StreamLimit: l.StreamDataBidiLocal, ConnLimit: l.MaxData}
	highest := map[uint64]uint64{}
	for _, p := range rx {
		for _, f := range p.Frames {
			switch {
			case f.Type == FrameStreamDataBlocked || f.Type == FrameDataBlocked:
				fe.Blocked = append(fe.Blocked, fmt.Sprintf("pn %d %s", p.PN, f))
				continue
			case !IsStream(f.Type):
				continue
			}
			end := f.Offset + uint64(len(f.Data))
			highest[f.StreamID] = max(highest[f.StreamID], end)
			if f.StreamID == 0 && end > l.StreamDataBidiLocal {
				fe.Over = append(fe.Over, fmt.Sprintf("pn %d %s", p.PN, f))
			}
			fe.StreamFin = fe.StreamFin || f.StreamID == 0 && f.Fin
		}
	}
	for _, h := range highest {
		fe.ConnBytes += h
	}
	fe.StreamHighest = highest[0]
	blocked := "no STREAM_DATA_BLOCKED or DATA_BLOCKED (a SHOULD)"
	if len(fe.Blocked) > 0 {
		blocked = fmt.Sprintf("blocked frames %v", fe.Blocked)
	}
	switch {
	case fe.StreamHighest > l.StreamDataBidiLocal:
		return Fail, fmt.Sprintf("stream 0 data reached offset %d past its limit %d: %v", fe.StreamHighest, l.StreamDataBidiLocal, fe.Over), fe
	case fe.ConnBytes > l.MaxData:
		return Fail, fmt.Sprintf("%d bytes of stream data on the connection past its limit %d (per stream %v)", fe.ConnBytes, l.MaxData, highest), fe
	case fe.StreamHighest == 0:
		return Error, "no STREAM data on the request stream: the limit was not tested", fe
	case fe.StreamFin:
		return Error, fmt.Sprintf("the response ended at %d bytes, within the %d-byte limit: the limit was not tested", fe.StreamHighest, l.StreamDataBidiLocal), fe
	}
	return Pass, fmt.Sprintf("stream 0 data up to offset %d of its %d-byte limit, %d of %d bytes on the connection; %s", fe.StreamHighest, l.StreamDataBidiLocal, fe.ConnBytes, l.MaxData, blocked), fe
}

// H3Request encodes an HTTP/3 GET of path at authority (https) as a HEADERS frame (RFC 9114
// sections 4.3.1 and 7.2.2) whose field section uses QPACK's static table and literals only
// (RFC 9204 section 4.5): a prefix of Required Insert Count 0 and Base 0, :method GET and
// :scheme https as indexed static entries 17 and 23, :authority and :path as literals with the
// static names 0 and 1, without Huffman coding.
func H3Request(authority, path string) []byte {
	fs := []byte{0x00, 0x00, 0xc0 | 17, 0xc0 | 23}
	fs = appendLiteral(fs, 0, authority)
	fs = appendLiteral(fs, 1, path)
	b := AppendVarint(nil, 0x01)
	b = AppendVarint(b, uint64(len(fs)))
	return append(b, fs...)
}

// appendLiteral appends a literal field line with a static name reference (RFC 9204 section
// 4.5.4: 01NT and a 4-bit prefix index, N 0, T 1) and its value, a string literal without
// Huffman coding (a 7-bit prefix length, section 4.1.2).
func appendLiteral(b []byte, index uint64, value string) []byte {
	b = appendPrefixInt(b, 0x50, 4, index)
	b = appendPrefixInt(b, 0x00, 7, uint64(len(value)))
	return append(b, value...)
}

// appendPrefixInt appends v as an integer of an n-bit prefix after the flag bits of first
// (RFC 7541 section 5.1, as RFC 9204 section 4.1.1 uses it).
func appendPrefixInt(b []byte, first byte, n uint, v uint64) []byte {
	max := uint64(1)<<n - 1
	if v < max {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(max))
	for v -= max; v >= 128; v >>= 7 {
		b = append(b, byte(v&0x7f)|0x80)
	}
	return append(b, byte(v))
}
