package interop

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestParseFrames1RTT covers the frames of 1-RTT packets (RFC 9000 section 19), each kind once.
func TestParseFrames1RTT(t *testing.T) {
	cid := []byte{1, 2, 3, 4}
	newCID := append(append([]byte{FrameNewConnectionID, 1, 0, 4}, cid...), make([]byte, 16)...)
	for _, tc := range []struct {
		name    string
		in      []byte
		want    string
		wantErr string
	}{
		{"stream off len fin", AppendStream(nil, 4, 300, []byte("abc"), true), "[STREAM id=4 off=300 len=3 fin]", ""},
		{"stream to the end", []byte{FrameStream, 3, 'x', 'y'}, "[STREAM id=3 off=0 len=2]", ""},
		{"stream length past the end", []byte{FrameStream | 0x02, 0, 5, 'x'}, "[]", "truncated"},
		{"max data", []byte{FrameMaxData, 0x44, 0x00}, "[MAX_DATA 1024]", ""},
		{"max stream data", []byte{FrameMaxStreamData, 0, 0x44, 0x00}, "[MAX_STREAM_DATA id=0 1024]", ""},
		{"blocked", []byte{FrameStreamDataBlocked, 0, 0x43, 0xe8, FrameDataBlocked, 0x4f, 0xa0}, "[STREAM_DATA_BLOCKED id=0 1000 DATA_BLOCKED 4000]", ""},
		{"reset and stop", []byte{FrameResetStream, 0, 7, 9, FrameStopSending, 0, 7}, "[RESET_STREAM id=0 9 STOP_SENDING id=0 0]", ""},
		{"streams", []byte{FrameMaxStreamsBidi, 50, FrameMaxStreamsUni, 3, FrameStreamsBlockedUni, 3, FrameRetireConnectionID, 0}, "[MAX_STREAMS_BIDI 50 MAX_STREAMS_UNI 3 STREAMS_BLOCKED_UNI 3 RETIRE_CONNECTION_ID 0]", ""},
		{"new connection id", newCID, "[NEW_CONNECTION_ID seq=1 cid=01020304]", ""},
		{"new connection id of 0 bytes", []byte{FrameNewConnectionID, 1, 0, 0}, "[]", "connection ID length"},
		{"path challenge", []byte{FramePathChallenge, 1, 2, 3, 4, 5, 6, 7, 8}, "[PATH_CHALLENGE 0102030405060708]", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, err := ParseFrames(tc.in)
			if got := fmt.Sprint(fs); got != tc.want {
				t.Errorf("frames %s, want %s", got, tc.want)
			}
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestAckEliciting: only ACK, PADDING and CONNECTION_CLOSE leave a packet non-ack-eliciting
// (RFC 9000 section 13.2).
func TestAckEliciting(t *testing.T) {
	for _, tc := range []struct {
		fs   []Frame
		want bool
	}{
		{nil, false},
		{[]Frame{{Type: FrameACK}, {Type: FramePadding}}, false},
		{[]Frame{{Type: FrameACKECN}, {Type: FrameConnCloseApp}}, false},
		{[]Frame{{Type: FrameACK}, {Type: FramePing}}, true},
		{[]Frame{{Type: FrameStream | 0x07}}, true},
	} {
		if got := AckEliciting(tc.fs); got != tc.want {
			t.Errorf("AckEliciting(%v) = %t, want %t", tc.fs, got, tc.want)
		}
	}
}

// TestACKRanges: the ranges of received packet numbers encode into an ACK frame that parses back
// to them (RFC 9000 section 19.3.1).
func TestACKRanges(t *testing.T) {
	c := newConnState()
	for _, pn := range []uint64{0, 1, 2, 5, 9, 10, 200} {
		c.observe(TypeShort, pn, nil, 0)
	}
	r := c.ranges(TypeShort)
	if want := "[[200 200] [9 10] [5 5] [0 2]]"; fmt.Sprint(r) != want {
		t.Fatalf("ranges %v, want %s", r, want)
	}
	fs, err := ParseFrames(AppendACKRanges(nil, r))
	if err != nil || len(fs) != 1 || fmt.Sprint(fs[0].Ranges) != fmt.Sprint(r) || fs[0].LargestAcked != 200 {
		t.Errorf("parsed back %v, %v", fs, err)
	}
	if b := AppendACKRanges(nil, nil); b != nil {
		t.Errorf("no ranges: %x", b)
	}
	if !bytes.Equal(AppendACK(nil, 7, 3), AppendACKRanges(nil, [][2]uint64{{3, 7}})) {
		t.Error("AppendACK differs from one range")
	}
}

// TestCryptoStream: CRYPTO data is handed on in order, overlaps trimmed, gaps held back.
func TestCryptoStream(t *testing.T) {
	var c cryptoStream
	c.add(3, []byte("def"))
	if got := c.take(); got != nil {
		t.Fatalf("data past a gap handed on: %q", got)
	}
	c.add(0, []byte("abcd"))
	if got := string(c.take()); got != "abcdef" || c.next != 6 {
		t.Errorf("took %q, next %d", got, c.next)
	}
}

// TestBuildShort: a 1-RTT packet built with the RFC 9001 A.1 client keys opens again with its
// packet number and frames, its first byte 0x40 | pnLen-1 under protection.
func TestBuildShort(t *testing.T) {
	k, _, err := InitialKeys([]byte{0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08})
	if err != nil {
		t.Fatal(err)
	}
	dcid := []byte{9, 9, 9, 9, 9, 9, 9, 9}
	for _, pnLen := range []int{1, 4} {
		b, err := BuildShort(k, dcid, 7, pnLen, []byte{FramePing})
		if err != nil {
			t.Fatal(err)
		}
		hdr, pn, payload, err := k.Open(b, 1+len(dcid), 6)
		if err != nil || pn != 7 || hdr[0] != 0x40|byte(pnLen-1) || !bytes.Equal(hdr[1:9], dcid) {
			t.Fatalf("pn length %d: opened pn %d header %x: %v", pnLen, pn, hdr, err)
		}
		if fs, err := ParseFrames(payload); err != nil || fs[0].Type != FramePing {
			t.Errorf("frames %v, %v", fs, err)
		}
	}
	if _, err := BuildShort(k, dcid, 0, 5, nil); err == nil {
		t.Error("a 5-byte packet number: no error")
	}
}

// TestTransportParameters decodes the parameters written for FlowLimits (RFC 9000 section 18.2).
func TestTransportParameters(t *testing.T) {
	b := TransportParameters([]byte{1, 2}, FlowLimits)
	got := map[uint64]uint64{}
	for len(b) > 0 {
		id, n, _ := ReadVarint(b)
		l, m, _ := ReadVarint(b[n:])
		v := b[n+m : n+m+int(l)]
		b = b[n+m+int(l):]
		if id == tpInitialSCID {
			if !bytes.Equal(v, []byte{1, 2}) {
				t.Errorf("initial_source_connection_id %x", v)
			}
			continue
		}
		got[id], _, _ = ReadVarint(v)
	}
	want := map[uint64]uint64{tpMaxIdleTimeout: 30000, tpInitialMaxData: 4000, tpMaxStreamDataBidiLoc: 1000, tpMaxStreamDataBidiRem: 0, tpMaxStreamDataUni: 1000, tpMaxStreamsBidi: 0, tpMaxStreamsUni: 3}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parameters %v, want %v", got, want)
	}
}

// TestH3Request checks the HEADERS frame byte for byte (RFC 9114 section 7.2.2, RFC 9204
// sections 4.5.2 and 4.5.4), a path of 200 bytes taking a two-byte prefix integer.
func TestH3Request(t *testing.T) {
	want := []byte{0x01, 23, 0, 0, 0xd1, 0xd7, 0x50, 8, 'p', 'l', 't', '.', 't', 'e', 's', 't', 0x51, 7, '/', '1', '0', '0', '0', '0', '0'}
	if got := H3Request("plt.test", "/100000"); !bytes.Equal(got, want) {
		t.Errorf("got  %x\nwant %x", got, want)
	}
	long := "/" + strings.Repeat("a", 199)
	got := H3Request("a", long)
	if i := bytes.Index(got, []byte{0x51, 0x7f, 200 - 127}); i < 0 || !strings.HasSuffix(string(got), long) {
		t.Errorf("a 200-byte path: %x", got)
	}
}

// ackPacket is a server packet of one ACK frame acknowledging [lo, hi].
func ackPacket(pn, lo, hi uint64, more ...Frame) rxPacket {
	return rxPacket{PN: pn, Frames: append([]Frame{{Type: FrameACK, LargestAcked: hi, Ranges: [][2]uint64{{lo, hi}}}}, more...)}
}

// TestJudgeACKOnly judges synthetic server packets against ACK-only packets 3 to 7 (RFC 9000
// section 13.2.1).
func TestJudgeACKOnly(t *testing.T) {
	sent := []uint64{3, 4, 5, 6, 7}
	for _, tc := range []struct {
		name    string
		replies []rxPacket
		control bool
		want    Outcome
		bad     string
		reason  string
	}{
		{"silence", nil, true, Pass, "[]", "ack-eliciting packets meanwhile [], other non-ack-eliciting packets []"},
		{"ack in an ack-eliciting packet", []rxPacket{ackPacket(10, 0, 7, Frame{Type: FramePing})}, true, Pass, "[]", "ack-eliciting packets meanwhile [10]"},
		{"ack of earlier packets only", []rxPacket{ackPacket(10, 0, 2)}, true, Pass, "[]", "other non-ack-eliciting packets [10]"},
		{"ack-only answers", []rxPacket{ackPacket(10, 0, 4), ackPacket(11, 0, 7, Frame{Type: FramePadding, Length: 3})}, true, Fail, "[10 11]", "2 packets of only ACK frames answered the ACK-only packets [3 4 5 6 7]: [pn 10 [ACK largest=4 ranges=[[0 4]]] acknowledges [3 4] pn 11 [ACK largest=7 ranges=[[0 7]] PADDING x3] acknowledges [3 4 5 6 7]]"},
		{"no control", nil, false, Error, "[]", "the silence proves nothing"},
		{"an answer without control", []rxPacket{ackPacket(10, 5, 5)}, false, Fail, "[10]", "acknowledges [5]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, reason, bad := judgeACKOnly(sent, tc.replies, tc.control)
			if out != tc.want || fmt.Sprint(bad) != tc.bad || !strings.Contains(reason, tc.reason) {
				t.Errorf("%s %v: %s; want %s %s: %s", out, bad, reason, tc.want, tc.bad, tc.reason)
			}
		})
	}
}

// stream is a server packet of one STREAM frame of n bytes at off on stream id.
func stream(pn, id, off uint64, n int, fin bool, more ...Frame) rxPacket {
	return rxPacket{PN: pn, Frames: append([]Frame{{Type: FrameStream | 0x06, StreamID: id, Offset: off, Data: make([]byte, n), Fin: fin}}, more...)}
}

// TestJudgeFlow judges synthetic STREAM frames against FlowLimits (RFC 9000 section 4.1).
func TestJudgeFlow(t *testing.T) {
	blocked := Frame{Type: FrameStreamDataBlocked, Value: 1000}
	for _, tc := range []struct {
		name   string
		rx     []rxPacket
		want   Outcome
		reason string
	}{
		{"up to the limit, blocked", []rxPacket{stream(1, 3, 0, 10, false), stream(2, 0, 0, 600, false), stream(3, 0, 600, 400, false, blocked)}, Pass,
			"stream 0 data up to offset 1000 of its 1000-byte limit, 1010 of 4000 bytes on the connection; blocked frames [pn 3 STREAM_DATA_BLOCKED id=0 1000]"},
		{"under the limit, not blocked", []rxPacket{stream(2, 0, 0, 500, false)}, Pass, "no STREAM_DATA_BLOCKED or DATA_BLOCKED (a SHOULD)"},
		{"retransmission counted once", []rxPacket{stream(2, 0, 0, 900, false), stream(5, 0, 0, 900, false)}, Pass, "up to offset 900 of its 1000-byte limit, 900 of 4000"},
		{"past the stream limit", []rxPacket{stream(2, 0, 0, 1000, false), stream(3, 0, 1000, 200, false)}, Fail, "stream 0 data reached offset 1200 past its limit 1000: [pn 3 STREAM id=0 off=1000 len=200]"},
		{"past the connection limit", []rxPacket{stream(2, 0, 0, 1000, false), stream(3, 3, 0, 1000, false), stream(4, 7, 0, 1000, false), stream(5, 11, 0, 1001, false)}, Fail, "4001 bytes of stream data on the connection past its limit 4000"},
		{"no response", []rxPacket{stream(1, 3, 0, 10, false)}, Error, "no STREAM data on the request stream"},
		{"small response", []rxPacket{stream(2, 0, 0, 300, true)}, Error, "the response ended at 300 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, reason, fe := judgeFlow(FlowLimits, tc.rx)
			if out != tc.want || !strings.Contains(reason, tc.reason) {
				t.Errorf("%s: %s; want %s: %s", out, reason, tc.want, tc.reason)
			}
			if fe.StreamLimit != 1000 || fe.ConnLimit != 4000 {
				t.Errorf("limits %+v", fe)
			}
		})
	}
}

// TestFlowControlUnsupported: without a path, or without h3 offered, flow-control cannot run and
// says why, before any socket is opened.
func TestFlowControlUnsupported(t *testing.T) {
	c, _ := lookup("flow-control")
	for _, tc := range []struct {
		t      Target
		reason string
	}{
		{Target{Addr: "127.0.0.1:9"}, "no path of a resource larger than the flow control limit"},
		{Target{Addr: "127.0.0.1:9", Path: "/big", ALPN: []string{"hq-interop"}}, "ALPN [hq-interop] offers no h3"},
	} {
		r := Run(context.Background(), c, tc.t)
		if r.Outcome != Unsupported || !strings.Contains(r.Reason, tc.reason) || len(r.Observed.Datagrams) != 0 {
			t.Errorf("%+v: %s: %s", tc.t, r.Outcome, r.Reason)
		}
	}
}
