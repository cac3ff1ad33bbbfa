package interop

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestVarint checks RFC 9000 Appendix A.1's examples and round trips at each length's edges.
func TestVarint(t *testing.T) {
	for _, tc := range []struct {
		hex  string
		want uint64
	}{
		{"c2197c5eff14e88c", 151288809941952652},
		{"9d7f3e7d", 494878333},
		{"7bbd", 15293},
		{"25", 37},
		{"4025", 37}, // the two-byte encoding of 37 decodes too
	} {
		t.Run(tc.hex, func(t *testing.T) {
			v, n, err := ReadVarint(unhex(t, tc.hex))
			if err != nil || v != tc.want || n != len(tc.hex)/2 {
				t.Errorf("got %d (%d bytes), %v", v, n, err)
			}
		})
	}
	for _, v := range []uint64{0, 63, 64, 16383, 16384, 1<<30 - 1, 1 << 30, 1<<62 - 1} {
		b := AppendVarint(nil, v)
		got, n, err := ReadVarint(b)
		if err != nil || got != v || n != len(b) {
			t.Errorf("%d: encoded %x, read %d (%d bytes), %v", v, b, got, n, err)
		}
	}
	if _, _, err := ReadVarint([]byte{0x80, 1}); !errors.Is(err, ErrShortPacket) {
		t.Errorf("truncated varint: %v", err)
	}
}

// TestRetryRFC9001A4 parses RFC 9001 Appendix A.4's Retry packet.
func TestRetryRFC9001A4(t *testing.T) {
	b := unhex(t, "ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba")
	h, err := ParseHeader(b)
	if err != nil || h.Type != TypeRetry || string(h.Token) != "token" || len(h.RetryTag) != RetryTagLen || h.Size != len(b) {
		t.Errorf("retry: %+v, %v", h, err)
	}
}

// TestVersionNegotiationRoundTrip builds Version Negotiation packets and parses them back.
func TestVersionNegotiationRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name       string
		dcid, scid []byte
		versions   []uint32
	}{
		{"one version", []byte{1, 2, 3, 4, 5, 6, 7, 8}, []byte{9, 9}, []uint32{Version1}},
		{"grease and v2", nil, bytes.Repeat([]byte{7}, MaxConnIDLen), []uint32{0xfaea4afa, Version1, 0x6b3343cf}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := BuildVersionNegotiation(tc.dcid, tc.scid, tc.versions)
			hs, err := SplitDatagram(b)
			if err != nil || len(hs) != 1 {
				t.Fatalf("%v, %v", hs, err)
			}
			h := hs[0]
			if h.Type != TypeVersionNegotiation || !bytes.Equal(h.DCID, tc.dcid) || !bytes.Equal(h.SCID, tc.scid) || fmt.Sprint(h.Versions) != fmt.Sprint(tc.versions) {
				t.Errorf("parsed %+v", h)
			}
		})
	}
	if _, err := ParseHeader(append(BuildVersionNegotiation(nil, nil, []uint32{1}), 0)); err == nil {
		t.Error("versions not a multiple of 4 bytes: no error")
	}
}

// TestCoalescedRoundTrip builds an Initial and a Handshake packet, coalesces them in one
// datagram (RFC 9000 section 12.2) and splits, opens and parses them again.
func TestCoalescedRoundTrip(t *testing.T) {
	dcid := unhex(t, rfcDCID)
	c, _, err := InitialKeys(dcid)
	if err != nil {
		t.Fatal(err)
	}
	in := AppendACK(AppendCrypto(nil, 0, []byte("hello")), 7, 3)
	p1, err := BuildLong(c, LongHeader{Type: TypeInitial, Version: Version1, DCID: dcid, SCID: []byte{1}, Token: []byte("tok"), PN: 300, PNLen: 2}, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := BuildLong(c, LongHeader{Type: TypeHandshake, Version: Version1, DCID: dcid, PN: 1, PNLen: 1}, []byte{FramePing}, 200)
	if err != nil {
		t.Fatal(err)
	}
	if len(p2) != 200 {
		t.Errorf("handshake packet %d bytes, want 200", len(p2))
	}
	dg := append(append([]byte(nil), p1...), p2...)
	hs, err := SplitDatagram(dg)
	if err != nil || len(hs) != 2 || hs[0].Type != TypeInitial || hs[1].Type != TypeHandshake || hs[0].Size != len(p1) || string(hs[0].Token) != "tok" {
		t.Fatalf("split: %+v, %v", hs, err)
	}
	_, pn, payload, err := c.Open(dg[:hs[0].Size], hs[0].PNOffset, 299)
	if err != nil || pn != 300 {
		t.Fatalf("open initial: pn %d, %v", pn, err)
	}
	fs, err := ParseFrames(payload)
	if err != nil || len(fs) != 2 || string(fs[0].Data) != "hello" || fs[1].String() != "ACK largest=7 ranges=[[3 7]]" {
		t.Errorf("frames %v, %v", fs, err)
	}
	_, _, payload, err = c.Open(dg[hs[0].Size:], hs[1].PNOffset, -1)
	if err != nil {
		t.Fatal(err)
	}
	if fs, err := ParseFrames(payload); err != nil || len(fs) != 2 || fs[0].Type != FramePing || fs[1].Type != FramePadding {
		t.Errorf("handshake frames %v, %v", fs, err)
	}
	if _, err := BuildLong(c, LongHeader{Type: TypeRetry, Version: Version1, PNLen: 1}, nil, 0); err == nil {
		t.Error("a Retry built with a packet number: no error")
	}
	if _, err := BuildLong(c, LongHeader{Type: TypeInitial, Version: Version1, PNLen: 1}, make([]byte, 1200), 1200); err == nil {
		t.Error("frames larger than the packet: no error")
	}
}

// TestParseFrames covers every frame kind parsed, and the errors.
func TestParseFrames(t *testing.T) {
	closeFrame := AppendVarint(AppendVarint(AppendVarint(AppendVarint([]byte{FrameConnClose}, 0x0a), 0x06), 3), 0)[:4]
	closeFrame = append(closeFrame, "bad"...)
	for _, tc := range []struct {
		name    string
		in      []byte
		want    string
		wantErr string
	}{
		{"padding run", make([]byte, 5), "[PADDING x5]", ""},
		{"ack with gap", []byte{FrameACK, 10, 0, 1, 2, 1, 3}, "[ACK largest=10 ranges=[[8 10] [2 5]]]", ""},
		{"ack ecn", []byte{FrameACKECN, 1, 0, 0, 0, 1, 2, 3}, "[ACK largest=1 ranges=[[1 1]]]", ""},
		{"close", closeFrame, `[CONNECTION_CLOSE(0x1c) code=0xa frame=0x6 reason="bad"]`, ""},
		{"ping handshake_done", []byte{FramePing, FrameHandshakeDone}, "[PING HANDSHAKE_DONE]", ""},
		{"new token", []byte{FrameNewToken, 2, 'a', 'b'}, "[NEW_TOKEN len=2]", ""},
		{"unknown type", []byte{FramePing, 0x21}, "[PING]", "not parsed"},
		{"crypto truncated", []byte{FrameCrypto, 0, 10, 1}, "[]", "truncated"},
		{"ack range below zero", []byte{FrameACK, 1, 0, 0, 2}, "[]", "beyond largest"},
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

// TestParseCases checks the case list grammar.
func TestParseCases(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int
		wantErr string
	}{
		{"", len(Cases), ""},
		{"all", len(Cases), ""},
		{"amplification-limit, version-negotiation", 2, ""},
		{"handshake", 0, "unknown case \"handshake\"; accepted: all, version-negotiation"},
		{"version-negotiation,version-negotiation", 0, "given twice"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			cs, err := ParseCases(tc.in)
			if len(cs) != tc.want || (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("%d cases, %v", len(cs), err)
			}
		})
	}
}

// FuzzSplitDatagram: no input makes the parsers panic, and every parsed packet lies within
// the datagram.
func FuzzSplitDatagram(f *testing.F) {
	f.Add(unhex(f, rfcServerPacket))
	f.Add(unhex(f, "ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba"))
	f.Add(BuildVersionNegotiation([]byte{1}, []byte{2}, []uint32{1}))
	f.Add(AppendStream(AppendACKRanges(nil, [][2]uint64{{9, 10}, {0, 2}}), 0, 5, []byte("x"), true))
	f.Add([]byte{FrameNewConnectionID, 1, 0, 2, 7, 7, 15: 0, FrameStreamDataBlocked, 0, 1, FrameResetStream, 0, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		hs, _ := SplitDatagram(b)
		total := 0
		for _, h := range hs {
			if h.Size <= 0 || h.PNOffset > h.Size {
				t.Fatalf("header %+v", h)
			}
			total += h.Size
		}
		if total > len(b) {
			t.Fatalf("packets of %d bytes in a %d-byte datagram", total, len(b))
		}
		ParseFrames(b)
	})
}

// TestRecordTable: a record carries its case's rule and both versions, and the table names
// every outcome and version.
func TestRecordTable(t *testing.T) {
	c := Cases[2]
	r := Result{Case: c.Name, Outcome: Fail, Reason: "3879 bytes", Observed: Observation{BytesSent: 1200, BytesReceived: 3879}}
	rec := NewRecord(r, c, ProbeClient, ProbeVersion("dev"), "quic-go", "quic-go v0.65.0", "127.0.0.1:1", "loopback")
	if rec.V != 1 || rec.Kind != RecordKind || rec.Rule != c.Rule || rec.Versions["server"] != "quic-go v0.65.0" || !strings.HasPrefix(rec.Versions["client"], "pltlab-probe dev (crypto/tls of go") {
		t.Errorf("record %+v", rec)
	}
	var b strings.Builder
	if err := WriteTable(&b, []Record{rec}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"amplification-limit", "FAIL", "3879", "quic-go: quic-go v0.65.0", "pltlab-probe: pltlab-probe dev"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestParseHeaderErrors: truncated or malformed headers are errors, never panics or packets
// running past the datagram.
func TestParseHeaderErrors(t *testing.T) {
	initial := unhex(t, rfcServerPacket)
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "packet truncated"},
		{"long header of 6 bytes", []byte{0xc0, 0, 0, 0, 1, 0}, "long header of 6 bytes"},
		{"connection ID over 20 bytes", append([]byte{0xc0, 0, 0, 0, 1, 21}, make([]byte, 30)...), "connection ID of 21 bytes"},
		{"Length past the datagram", initial[:len(initial)-1], "Length 117 with 116 bytes left"},
		{"Initial token past the datagram", []byte{0xc0, 0, 0, 0, 1, 0, 0, 0x05, 1}, "Initial token"},
		{"Retry without its tag", []byte{0xf0, 0, 0, 0, 1, 0, 0, 1, 2}, "Retry without its tag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseHeader(tc.in)
			if err == nil || !errors.Is(err, ErrShortPacket) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrShortPacket with %q", err, tc.want)
			}
		})
	}
	other, err := ParseHeader(append([]byte{0xc0, 0xff, 0, 0, 0x1d, 0, 0}, 1, 2, 3))
	if err != nil || other.Type != TypeOtherVersion || other.Version != 0xff00001d || other.Size != 10 {
		t.Errorf("draft-29 long header: %+v, %v", other, err)
	}
}
