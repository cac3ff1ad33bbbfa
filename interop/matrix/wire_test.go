package matrix

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// line joins tshark's fields (wireFields' order) as one line of its output, the time, ECN and
// cipher suite fields empty (stamped sets them).
func line(iface, forms, t1, t2, versions, scid, dcid, kp, frames, token, retry, streams, hs, ext, alpn, undecrypted string) string {
	return strings.Join([]string{iface, forms, t1, t2, versions, scid, dcid, kp, frames, token, retry, streams, hs, ext, alpn, undecrypted, "", "", "", "", "", "", "", "", "", "", ""}, "\t")
}

// stamped sets a line's capture time (seconds), IP ECN field, cipher suites and CRYPTO offsets.
func stamped(l, t, ecn, suites, offsets string) string {
	f := strings.Split(l, "\t")
	f[16], f[17], f[18], f[19] = t, ecn, suites, offsets
	return strings.Join(f, "\t")
}

// timedCapture is one connection whose client sent its ClientHello twice offering ChaCha20
// alone (tshark dissects the second only as a CRYPTO frame at offset 0), the client's Handshake
// CRYPTO at offset 0 too, marked ECN both ways with ACK_ECN frames both ways, through a 2 s outage in which the
// link dropped a datagram each way.
var timedCapture = strings.Join([]string{
	stamped(line("1", "1", "0", "", "0x00000001", "aa11", "dd01", "", "6,0", "", "", "", "1", "", "", ""), "0.000", "0", "0x1303", "0"),
	stamped(line("1", "1", "0", "", "0x00000001", "aa11", "dd01", "", "6,0", "", "", "", "", "", "", ""), "0.400", "0", "", "0"),
	stamped(line("0", "1,1", "0,2", "", "0x00000001,0x00000001", "bb33,bb33", "aa11,aa11", "", "2,6,6", "", "", "", "2,8,11,15,20", "43,51,16,57", "h3", ""), "0.450", "0", "4867", "0,0"),
	stamped(line("1", "1,0", "2,", "", "0x00000001", "aa11,", "bb33,bb33", "0", "6,3,8", "", "", "0", "20", "", "", ""), "0.500", "2", "", "0"),
	stamped(line("0", "0", "", "", "", "", "aa11", "0", "30,3,8", "", "", "0", "", "", "", ""), "0.520", "2", "", ""),
	stamped(line("3", "", "", "", "", "", "", "", "", "", "", "", "", "", "", ""), "1.000", "", "", ""),
	stamped(line("2", "", "", "", "", "", "", "", "", "", "", "", "", "", "", ""), "1.500", "", "", ""),
	stamped(line("0", "0", "", "", "", "", "aa11", "0", "8", "", "", "0", "", "", "", ""), "2.600", "2", "", ""),
	stamped(line("1", "0", "", "", "", "", "bb33", "0", "3", "", "", "", "", "", "", ""), "2.620", "1", "", ""),
}, "\n") + "\n"

// TestDecodeTimed reads the facts of the cases longrtt, chacha20, blackhole and ecn: the
// ClientHellos and the cipher suites offered and chosen, the ECN codepoints and ACK_ECN frames
// each way, and the longest time without a delivered datagram, with the drops within it.
func TestDecodeTimed(t *testing.T) {
	w, err := DecodeFields(strings.NewReader(timedCapture), false)
	if err != nil {
		t.Fatal(err)
	}
	if w.Connections != 1 || w.Handshakes != 1 || w.ClientHellos != 2 || w.Packets["up initial"] != 2 {
		t.Errorf("%d connections, %d handshakes, %d ClientHellos, %d client Initials; want 1, 1, 2, 2", w.Connections, w.Handshakes, w.ClientHellos, w.Packets["up initial"])
	}
	if !slices.Equal(w.OfferedSuites, []string{"0x1303"}) || !slices.Equal(w.ChosenSuites, []string{"0x1303"}) {
		t.Errorf("suites offered %v, chosen %v; want [0x1303] each", w.OfferedSuites, w.ChosenSuites)
	}
	wantECN := map[string]int{"up not-ect": 2, "up ect0": 1, "up ect1": 1, "down not-ect": 1, "down ect0": 2}
	if !maps.Equal(w.ECN, wantECN) || !maps.Equal(w.ACKECN, map[string]int{"up": 2, "down": 1}) {
		t.Errorf("ECN %v, ACK_ECN %v; want %v and up 2, down 1", w.ECN, w.ACKECN, wantECN)
	}
	if g := w.Gap; g == nil || *g != (interop.Gap{StartMS: 520, LengthMS: 2080, Dropped: 2, AfterUp: 1, AfterDown: 1}) {
		t.Errorf("gap %+v, want 2080 ms from 520 ms, 2 dropped, 1 up and 1 down after", g)
	}
	if w, _ := DecodeFields(strings.NewReader(retryCapture), false); w.Gap != nil {
		t.Errorf("a capture without times has gap %+v", w.Gap)
	}
}

// retryCapture is a capture's decoded lines of one connection with a Retry, a dropped
// datagram, a key update by the client followed by the server, and three files: what tshark
// prints for the link's four interfaces (0 down, 1 up, 2 down-dropped, 3 up-dropped).
var retryCapture = strings.Join([]string{
	line("1", "1", "0", "", "0x00000001", "aa11", "dd01", "", "6,0", "", "", "", "1", "0,10,16,43,51,57,41,42", "h3", ""),
	line("0", "1", "3", "", "0x00000001", "bb22", "aa11", "", "", "", "cafe", "", "", "", "", ""),
	line("1", "1", "0", "", "0x00000001", "aa11", "bb22", "", "6,0", "cafe", "", "", "1", "0,10,16,43,51,57", "h3", ""),
	line("3", "", "", "", "", "", "", "", "", "", "", "", "", "", "", ""),
	line("0", "1,1", "0,2", "", "0x00000001,0x00000001", "bb33,bb33", "aa11,aa11", "", "2,6,6", "", "", "", "2,8,11,15,20", "43,51,16,57", "h3", ""),
	line("1", "0", "", "", "", "", "bb33", "0", "8,8,8", "", "", "0,4,8,2", "", "", "", ""),
	line("0", "0", "", "", "", "", "aa11", "0", "30,2,8,8,8,8", "", "", "0,4,8,3", "4", "42", "", ""),
	line("1", "0", "", "", "", "", "bb33", "1", "2", "", "", "", "", "", "", ""),
	line("0", "0", "", "", "", "", "aa11", "1", "8", "", "", "0", "", "", "", "1"),
}, "\n") + "\n"

// zeroLengthCapture is a client with zero-length connection IDs (quic-go before v0.35): a
// Retry, its Initials then sent to the server's chosen ID, and a second connection that resumes
// with 0-RTT accepted.
var zeroLengthCapture = strings.Join([]string{
	line("1", "1", "0", "", "0x00000001", "", "dd01", "", "6,0", "", "", "", "1", "", "h3", ""),
	line("0", "1", "3", "", "0x00000001", "bb22", "", "", "", "", "cafe", "", "", "", "", ""),
	line("1", "1", "0", "", "0x00000001", "", "bb22", "", "6,0", "cafe", "", "", "1", "", "h3", ""),
	line("0", "1,1", "0,2", "", "0x00000001,0x00000001", "bb33,bb33", ",", "", "2,6,6", "", "", "", "2,8,11,15,20", "43,51,16,57", "h3", ""),
	line("0", "0", "", "", "", "", "", "0", "30", "", "", "", "", "", "", ""),
	line("1", "1,1", "0,2", "", "0x00000001,0x00000001", ",", "bb33,bb33", "", "2,6", "", "", "", "20", "", "", ""),
	line("1", "1,1", "0,1", "", "0x00000001,0x00000001", ",", "dd02,dd02", "", "6,0,8", "", "", "0", "1", "41,42", "h3", ""),
	line("0", "1,1", "0,2", "", "0x00000001,0x00000001", "bb44,bb44", ",", "", "2,6,6", "", "", "", "2,8,20", "43,51,41,16,57,42", "h3", ""),
}, "\n") + "\n"

// corruptedCapture is one connection through a corrupting link: the client's second Initial
// arrived with a bit of its source connection ID flipped (aa11 -> aa91; the dissector could not
// decrypt it), then the client's and the server's 1-RTT packets.
var corruptedCapture = strings.Join([]string{
	line("1", "1", "0", "", "0x00000001", "aa11", "dd01", "", "6,0", "", "", "", "1", "", "", ""),
	line("0", "1,1", "0,2", "", "0x00000001,0x00000001", "bb33,bb33", "aa11,aa11", "", "2,6,6", "", "", "", "2,8,11,15,20", "43,51,16,57", "h3", ""),
	line("1", "1,1", "0,2", "", "0x00000001,0x00000001", "aa91,aa11", "bb33,bb33", "", "", "", "", "", "", "", "", "1"),
	line("1", "1,1", "0,2", "", "0x00000001,0x00000001", "aa11,aa11", "bb33,bb33", "", "2,6", "", "", "", "20", "", "", ""),
	line("1", "0", "", "", "", "", "bb33", "0", "8", "", "", "0", "", "", "", ""),
	line("0", "0", "", "", "", "", "aa11", "0", "30,8", "", "", "0", "", "", "", ""),
}, "\n") + "\n"

// TestDecodeCorrupted: through a corrupting link, a client datagram the dissector could not
// decrypt opens no connection (one connection, its handshake completed); without the flag the
// flipped source connection ID counts as a second connection that takes the first's 1-RTT
// packets.
func TestDecodeCorrupted(t *testing.T) {
	for _, tc := range []struct {
		corrupted         bool
		conns, handshakes int
	}{{true, 1, 1}, {false, 2, 1}} {
		w, err := DecodeFields(strings.NewReader(corruptedCapture), tc.corrupted)
		if err != nil {
			t.Fatal(err)
		}
		if w.Connections != tc.conns || w.Handshakes != tc.handshakes || w.Undecrypted != 1 {
			t.Errorf("corrupted %v: %d connections, %d handshakes, %d undecrypted; want %d, %d, 1", tc.corrupted, w.Connections, w.Handshakes, w.Undecrypted, tc.conns, tc.handshakes)
		}
	}
}

// TestDecodeFields reads each fact of a capture's lines: datagrams per interface, packets per
// type, connections, the Retry token and its echo, key phase flips, streams, TLS.
func TestDecodeFields(t *testing.T) {
	w, err := DecodeFields(strings.NewReader(retryCapture), false)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if !equalAny(got, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("datagrams up", w.Datagrams["up"], 4)
	check("datagrams down", w.Datagrams["down"], 4)
	check("up-dropped", w.Datagrams["up-dropped"], 1)
	check("down retry", w.Packets["down retry"], 1)
	check("up initial", w.Packets["up initial"], 2)
	check("down handshake", w.Packets["down handshake"], 1)
	check("down 1rtt", w.Packets["down 1rtt"], 2)
	check("connections", w.Connections, 1)
	check("retry token", w.RetryToken, "cafe")
	check("token echoed", w.TokenEchoed, true)
	check("handshake done", w.HandshakeDone, 1)
	check("handshakes completed", w.Handshakes, 1)
	check("flips up", w.KeyPhaseFlips["up"], 1)
	check("flips down", w.KeyPhaseFlips["down"], 1)
	check("first flip", w.KeyUpdateFirst, "up")
	check("down bidi", w.Streams["down bidi"], 3)
	check("up uni", w.Streams["up uni"], 1)
	check("down uni", w.Streams["down uni"], 1)
	check("alpn", w.ALPN, "h3")
	check("undecrypted", w.Undecrypted, 1)
	if !slices.Equal(w.Resumed, []bool{false}) || !slices.Equal(w.EarlyData, []bool{false}) {
		t.Errorf("resumed %v, early data %v: want [false] each (a Certificate; the early_data of a NewSessionTicket is not acceptance)", w.Resumed, w.EarlyData)
	}
	if !slices.Equal(w.Versions, []string{wireV1}) {
		t.Errorf("versions %v", w.Versions)
	}
	z, err := DecodeFields(strings.NewReader(zeroLengthCapture), false)
	if err != nil {
		t.Fatal(err)
	}
	if z.Connections != 2 || !z.TokenEchoed || !slices.Equal(z.Resumed, []bool{false, true}) || !slices.Equal(z.EarlyData, []bool{false, true}) || z.Packets["up 0rtt"] != 1 {
		t.Errorf("zero-length IDs: %d connections (want 2: the Retry keeps the first), echoed %v, resumed %v, early data %v, %d 0-RTT packets",
			z.Connections, z.TokenEchoed, z.Resumed, z.EarlyData, z.Packets["up 0rtt"])
	}
	for _, bad := range []string{"1\t1\n", line("7", "", "", "", "", "", "", "", "", "", "", "", "", "", "", "")} {
		if _, err := DecodeFields(strings.NewReader(bad), false); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func equalAny(a, b any) bool { return a == b }

// TestJudges: each judge passes on the evidence it asks for and fails, naming what is
// missing, without it.
func TestJudges(t *testing.T) {
	whole := []interop.FileCheck{{Name: "1.bin", Bytes: 10, Got: 10, Match: true}}
	short := []interop.FileCheck{{Name: "1.bin", Bytes: 10, Got: -1}}
	ok := func() *interop.Wire {
		return &interop.Wire{Datagrams: map[string]int{"down": 5}, Packets: map[string]int{}, Versions: []string{wireV1}, Connections: 1, Handshakes: 1, HandshakeDone: 1,
			KeyPhaseFlips: map[string]int{}, Streams: map[string]int{"down bidi": 1}}
	}
	for _, tt := range []struct {
		name  string
		edit  func(w *interop.Wire)
		files []interop.FileCheck
		want  interop.Outcome
		why   string
	}{
		{"handshake", func(w *interop.Wire) {}, whole, interop.Pass, "one connection"},
		{"handshake", func(w *interop.Wire) { w.HandshakeDone = 0 }, whole, interop.Fail, "no HANDSHAKE_DONE frame from the server among 5 delivered datagrams"},
		{"handshake", func(w *interop.Wire) { w.Handshakes = 0 }, whole, interop.Fail, "0 of 1 connections completed the handshake"},
		{"handshake", func(w *interop.Wire) { w.Connections = 2 }, whole, interop.Fail, "2 connections"},
		{"handshake", func(w *interop.Wire) {}, short, interop.Fail, "1.bin: 0 of 10 bytes"},
		{"handshake", func(w *interop.Wire) { w.Versions = []string{wireV2} }, whole, interop.Fail, "versions [0x6b3343cf]"},
		{"transfer", func(w *interop.Wire) {}, whole, interop.Pass, "1 files whole"},
		{"transfer", func(w *interop.Wire) { w.Streams["down bidi"] = 0 }, whole, interop.Fail, "the server's STREAM frames on 0 request streams, want at least 1"},
		{"retry", func(w *interop.Wire) {}, whole, interop.Fail, "the server sent no Retry packet (5 datagrams"},
		{"retry", func(w *interop.Wire) { w.Packets["down retry"] = 1; w.RetryToken = "cafe" }, whole, interop.Fail, "did not carry its token"},
		{"retry", func(w *interop.Wire) { w.Packets["down retry"] = 1; w.RetryToken = "cafe"; w.TokenEchoed = true }, whole, interop.Pass, "2-byte token"},
		{"resumption", func(w *interop.Wire) { w.Connections = 2; w.Resumed = []bool{false, true} }, whole, interop.Pass, "resumed"},
		{"resumption", func(w *interop.Wire) { w.Connections = 2; w.Resumed = []bool{false, false} }, whole, interop.Fail, "want [false true]"},
		{"zerortt", func(w *interop.Wire) { w.Connections = 2; w.Packets["up 0rtt"] = 2; w.EarlyData = []bool{false, true} }, whole, interop.Pass, "2 0-RTT packets"},
		{"zerortt", func(w *interop.Wire) { w.Connections = 2; w.Packets["up 0rtt"] = 2; w.EarlyData = []bool{false, false} }, whole, interop.Fail, "want it in the second"},
		{"http3", func(w *interop.Wire) { w.ALPN = "h3"; w.Streams["up uni"], w.Streams["down uni"] = 3, 3 }, whole, interop.Pass, "ALPN h3"},
		{"http3", func(w *interop.Wire) { w.ALPN = "hq-interop" }, whole, interop.Fail, `ALPN "hq-interop"`},
		{"keyupdate", func(w *interop.Wire) { w.KeyPhaseFlips["up"] = 1 }, whole, interop.Fail, "the server's 1-RTT packets never flipped"},
		{"keyupdate", func(w *interop.Wire) { w.KeyPhaseFlips["up"], w.KeyPhaseFlips["down"] = 1, 1 }, whole, interop.Pass, "flipped 1 times up"},
		{"v2", func(w *interop.Wire) { w.Versions = []string{wireV2} }, whole, interop.Pass, "QUIC v2"},
		{"v2", func(w *interop.Wire) {}, whole, interop.Fail, "want 0x6b3343cf alone"},
		{"transferloss", func(w *interop.Wire) { w.Datagrams["up-dropped"] = 3 }, whole, interop.Pass, "dropped 3 datagrams up"},
		{"transferloss", func(w *interop.Wire) {}, whole, interop.Fail, "the link dropped no datagram: loss was not met"},
		{"handshakeloss", func(w *interop.Wire) {
			w.Connections, w.Handshakes, w.HandshakeDone, w.Datagrams["down-dropped"] = 5, 5, 3, 4
		}, whole, interop.Pass,
			"5 handshakes done and the file whole each time though the link dropped 0 datagrams up and 4 down (3 HANDSHAKE_DONE delivered)"},
		{"handshakeloss", func(w *interop.Wire) { w.Connections, w.Handshakes = 5, 4 }, whole, interop.Fail, "4 of 5 connections completed the handshake"},
		{"handshakeloss", func(w *interop.Wire) {}, whole, interop.Fail, "1 connections (client source connection IDs in its Initials), want 5"},
		{"transfercorruption", func(w *interop.Wire) { w.Corrupted = map[string]int{"up": 3, "down": 9}; w.Undecrypted = 12 }, whole, interop.Pass,
			"one connection and the file whole though the link corrupted 3 datagrams up and 9 down (12 packets undecryptable in the capture; 1 of 1 handshakes seen completed"},
		{"transfercorruption", func(w *interop.Wire) {}, whole, interop.Fail, "the link corrupted no datagram"},
		{"transfercorruption", func(w *interop.Wire) { w.Corrupted = map[string]int{"down": 9} }, short, interop.Fail, "1.bin: 0 of 10 bytes"},
		{"handshakecorruption", func(w *interop.Wire) {
			w.Connections, w.Handshakes, w.Undecrypted, w.Corrupted = 5, 5, 1, map[string]int{"up": 7, "down": 8}
			w.Versions = []string{wireV1, "0x00000101"} // a flipped bit in a long header's version
		}, whole, interop.Pass, "5 connections and the file whole on each though the link corrupted 7 datagrams up and 8 down"},
		{"handshakecorruption", func(w *interop.Wire) {
			w.Connections, w.Handshakes, w.Corrupted = 6, 5, map[string]int{"up": 7}
		}, whole, interop.Fail, "6 connections (client source connection IDs in its decryptable Initials), want 5"},
		{"handshakecorruption", func(w *interop.Wire) {
			w.Connections, w.Handshakes, w.Undecrypted, w.Corrupted = 5, 4, 3, map[string]int{"up": 7}
		}, whole, interop.Pass, "4 of 5 handshakes seen completed in it"},
		{"rebind-port", func(w *interop.Wire) {
			w.Rebinds, w.Paths = 2, rebound("100.64.0.6:4000", "100.64.0.6:5000", "100.64.0.6:6000")
		}, whole, interop.Pass,
			"the NAT rebound 2 times; the server followed the client over 3 destinations (100.64.0.6:4000, 100.64.0.6:5000, 100.64.0.6:6000) in 2 changes, each opened with a PATH_CHALLENGE, 2 challenges all answered by PATH_RESPONSE"},
		{"rebind-port", func(w *interop.Wire) { w.Rebinds = 2 }, whole, interop.Fail, "the server sent to 1 client ports ([one address: a single path each way]), want more than one"},
		{"rebind-port", func(w *interop.Wire) { w.Paths = rebound("100.64.0.6:4000", "100.64.0.6:5000") }, whole, interop.Fail, "the link's NAT made no rebinding"},
		{"rebind-port", func(w *interop.Wire) {
			w.Rebinds, w.Paths = 1, rebound("100.64.0.6:4000", "100.64.0.6:5000")
			w.Paths.Unchallenged = []string{"100.64.0.6:5000 at 1.002 s"}
		}, whole, interop.Fail, "the first server datagram to a new client address carried no PATH_CHALLENGE: 100.64.0.6:5000 at 1.002 s"},
		{"rebind-port", func(w *interop.Wire) {
			w.Rebinds, w.Paths = 1, rebound("100.64.0.6:4000", "100.64.0.6:5000")
			w.Paths.Unanswered = w.Paths.Challenges
		}, whole, interop.Fail, "PATH_CHALLENGE without the client's PATH_RESPONSE: [c0]"},
		{"rebind-port", func(w *interop.Wire) { w.Rebinds, w.Paths = 1, rebound("100.64.0.6:4000", "100.64.0.6:5000") }, short, interop.Fail, "1.bin: 0 of 10 bytes"},
		// A server that forbids active migration and never followed (quic-go's before v0.51,
		// measured: the transfer stalled): unsupported; one that followed is judged as any.
		{"rebind-port", func(w *interop.Wire) { w.Rebinds, w.MigrationDisabled, w.Datagrams["down"] = 2, true, 9 }, short, interop.Unsupported,
			NoRebindServer + " (it did: the server sent to 1 client ports, [one address: a single path each way], after the NAT rebound 2 times)"},
		{"rebind-port", func(w *interop.Wire) {
			w.Rebinds, w.MigrationDisabled, w.Paths = 1, true, rebound("100.64.0.6:4000", "100.64.0.6:5000")
		}, whole, interop.Pass, "the NAT rebound 1 times"},
		{"rebind-port", func(w *interop.Wire) { w.Rebinds, w.MigrationDisabled, w.Handshakes = 2, true, 0 }, short, interop.Fail, "0 of 1 connections completed the handshake"},
		{"rebind-addr", func(w *interop.Wire) { w.Rebinds, w.Paths = 1, rebound("100.64.0.6:4000", "100.64.0.6:5000") }, whole, interop.Fail,
			"the server sent to 1 client IPv4 addresses ([100.64.0.6:4000 100.64.0.6:5000]), want more than one"},
		{"rebind-addr", func(w *interop.Wire) { w.Rebinds, w.Paths = 1, rebound("100.64.0.6:4000", "100.64.0.7:5000") }, whole, interop.Pass, "the NAT rebound 1 times"},
		{"connectionmigration", func(w *interop.Wire) { w.Paths = rebound("100.64.0.6:4000", "100.64.0.6:5000") }, whole, interop.Pass,
			"the client migrated over 2 addresses (100.64.0.6:4000, 100.64.0.6:5000) with a new connection ID each time; the server followed in 1 changes, each opened with a PATH_CHALLENGE, 1 challenges all answered"},
		{"connectionmigration", func(w *interop.Wire) {}, whole, interop.Fail, "the client's datagrams came from 0 addresses ([]), want more than one: it did not migrate"},
		{"connectionmigration", func(w *interop.Wire) { w.Datagrams["up"] = 4 }, whole, interop.Fail,
			"the client's datagrams came from 1 addresses ([one address: a single path each way]), want more than one: it did not migrate; the server sent to 1 client addresses"},
		{"connectionmigration", func(w *interop.Wire) {
			w.Paths = rebound("100.64.0.6:4000", "100.64.0.6:5000")
			w.Paths.ReusedDCID = []string{"100.64.0.6:5000 at 0.400 s"}
		}, whole, interop.Fail, "kept its destination connection ID (RFC 9000 section 9.5): 100.64.0.6:5000 at 0.400 s"},
		{"connectionmigration", func(w *interop.Wire) {
			w.Paths = rebound("100.64.0.6:4000", "100.64.0.6:5000")
			w.Paths.Migrations, w.Paths.Unchallenged = 3, []string{"100.64.0.6:5000 at 0.401 s"}
		}, whole, interop.Fail, "carried no PATH_CHALLENGE: 100.64.0.6:5000 at 0.401 s; 3 changes of destination but 1 distinct PATH_CHALLENGE frames"},
		// A server that forbids active migration (quic-go's before v0.51): the client did not
		// migrate, so the case is unsupported, not failed; a failed fetch still fails; a client
		// that migrated anyway is judged as any.
		{"connectionmigration", func(w *interop.Wire) { w.Datagrams["up"], w.MigrationDisabled = 4, true }, whole, interop.Unsupported, NoMigrateServer},
		{"connectionmigration", func(w *interop.Wire) { w.Datagrams["up"], w.MigrationDisabled = 4, true }, short, interop.Fail, "1.bin: 0 of 10 bytes"},
		{"connectionmigration", func(w *interop.Wire) {
			w.MigrationDisabled, w.Paths = true, rebound("100.64.0.6:4000", "100.64.0.6:5000")
		}, whole, interop.Pass, "the client migrated over 2 addresses"},
		{"longrtt", func(w *interop.Wire) { w.ClientHellos, w.Packets["up initial"] = 2, 3 }, whole, interop.Pass,
			"handshake completed across a 1.5s RTT, the file whole; the client sent 3 Initial packets, 2 of them with its ClientHello"},
		{"longrtt", func(w *interop.Wire) { w.ClientHellos = 1 }, whole, interop.Fail, "the client's ClientHello was delivered 1 times, want at least 2"},
		{"longrtt", func(w *interop.Wire) { w.ClientHellos, w.Handshakes = 3, 0 }, whole, interop.Fail, "0 of 1 connections completed the handshake"},
		{"chacha20", func(w *interop.Wire) { w.OfferedSuites, w.ChosenSuites = []string{"0x1303"}, []string{"0x1303"} }, whole, interop.Pass, "offered 0x1303 alone and the ServerHello chose it"},
		{"chacha20", func(w *interop.Wire) {
			w.OfferedSuites, w.ChosenSuites = []string{"0x1301", "0x1302", "0x1303"}, []string{"0x1301"}
		}, whole, interop.Fail, "the client offered cipher suites [0x1301 0x1302 0x1303], want 0x1303 (TLS_CHACHA20_POLY1305_SHA256) alone; the server's ServerHello chose [0x1301], want 0x1303"},
		{"chacha20", func(w *interop.Wire) { w.OfferedSuites, w.ChosenSuites = []string{"0x1303"}, []string{"0x1303"} }, short, interop.Fail, "1.bin: 0 of 10 bytes"},
		{"blackhole", func(w *interop.Wire) {
			w.Gap = &interop.Gap{StartMS: 4900, LengthMS: 2350, Dropped: 12, AfterUp: 300, AfterDown: 600}
		}, whole, interop.Pass,
			"the file whole; no datagram delivered for 2350 ms from 4900 ms (12 dropped within it, the 2s outage), then 300 up and 600 down"},
		{"blackhole", func(w *interop.Wire) {}, whole, interop.Fail, "the longest time without a datagram delivered was 0 ms, want at least 1900 ms"},
		{"blackhole", func(w *interop.Wire) {
			w.Gap = &interop.Gap{StartMS: 100, LengthMS: 300, Dropped: 0, AfterUp: 3, AfterDown: 3}
		}, whole, interop.Fail,
			"was 300 ms, want at least 1900 ms (the 2s outage less 100ms): the outage was not met during the exchange; the link dropped no datagram within the longest gap"},
		{"blackhole", func(w *interop.Wire) { w.Gap = &interop.Gap{StartMS: 100, LengthMS: 2000, Dropped: 4, AfterUp: 3} }, whole, interop.Fail, "after the gap the link delivered 3 datagrams up and 0 down"},
	} {
		c, found := LookupExchange(tt.name)
		if !found {
			t.Fatalf("no case %s", tt.name)
		}
		w := ok()
		tt.edit(w)
		out, why := c.judge(w, tt.files)
		if out != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("%s: %s (%s), want %s with %q", tt.name, out, why, tt.want, tt.why)
		}
	}
}

// TestParseExchangeCases: probe and exchange cases mix in one list, in the order given; "all"
// is both sets; unknown and repeated names are refused naming the accepted ones.
func TestParseExchangeCases(t *testing.T) {
	p, e, err := ParseCases("retry, version-negotiation,handshake")
	if err != nil || len(p) != 1 || p[0].Name != "version-negotiation" || len(e) != 2 || e[0].Name != "retry" || e[1].Name != "handshake" {
		t.Fatalf("%v %v %v", p, e, err)
	}
	if p, e, err := ParseCases("all"); err != nil || len(p) != len(interop.Cases) || len(e) != len(Exchanges) {
		t.Errorf("all: %d probes, %d exchanges, %v", len(p), len(e), err)
	}
	for in, want := range map[string]string{"multiplexing": `unknown case "multiplexing"; accepted: all, version-negotiation`, "retry,retry": `case "retry" given twice`, "all,retry": `unknown case "all"`} {
		if _, _, err := ParseCases(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// TestJudgeECN: ECN both ways passes whoever claims it; a way without marks or counts fails
// when the endpoint at fault claims ECN support (ngtcp2) and is unsupported when it does not
// (quic-go), naming the endpoint and the counts.
func TestJudgeECN(t *testing.T) {
	whole := []interop.FileCheck{{Name: "1.bin", Bytes: 10, Got: 10, Match: true}}
	both := func(w *interop.Wire) {
		w.ECN = map[string]int{"up ect0": 40, "up not-ect": 3, "down ect0": 90, "down not-ect": 4}
		w.ACKECN = map[string]int{"up": 30, "down": 20}
	}
	qg, ng := Peer{Name: QUICGo}, Peer{Name: Ngtcp2}
	for _, tt := range []struct {
		name        string
		client, srv Peer
		edit        func(w *interop.Wire)
		want        interop.Outcome
		why         string
	}{
		{"both ways", qg, qg, both, interop.Pass, "ECN both ways, the file whole: up 40 ECT(0), 0 ECT(1), 0 CE, 3 not-ECT, 30 ACK_ECN; down 90 ECT(0), 0 ECT(1), 0 CE, 4 not-ECT, 20 ACK_ECN"},
		{"quic-go client marks nothing", qg, ng, func(w *interop.Wire) { both(w); w.ECN["up ect0"] = 0; w.Datagrams["up"] = 43 }, interop.Unsupported,
			"the client marked none of its 43 delivered datagrams ECT(0) or ECT(1) (the client does not claim ECN support"},
		{"ngtcp2 client marks nothing", ng, qg, func(w *interop.Wire) { both(w); w.ECN["up ect0"] = 0 }, interop.Fail, "the client marked none of its"},
		{"ngtcp2 server reports no counts", qg, ng, func(w *interop.Wire) { both(w); w.ACKECN["down"] = 0 }, interop.Fail,
			"the server received 40 marked datagrams and sent no ACK frame with ECN counts (type 0x03): up 40 ECT(0)"},
		{"both at fault, one claims", ng, qg, func(w *interop.Wire) { both(w); w.ECN["up ect0"], w.ECN["down ect0"] = 0, 0 }, interop.Fail,
			"the client marked none of its 0 delivered datagrams ECT(0) or ECT(1); the server marked none"},
		{"handshake missing", qg, qg, func(w *interop.Wire) { both(w); w.Handshakes = 0 }, interop.Fail, "0 of 1 connections completed the handshake"},
		{"the link bleached the client's marks", ng, ng, func(w *interop.Wire) {
			both(w)
			w.ECN["up ect0"], w.ECN["up not-ect"], w.Datagrams["up"], w.Bleached = 0, 43, 43, map[string]int{"up": 12, "down": 0}
		}, interop.Fail, "the link bleached 12 of the client's ECN marks to Not-ECT (bleach=ecn): none of its 43 delivered datagrams carried ECT(0) or ECT(1): up 0 ECT(0)"},
	} {
		c, _ := LookupExchange("ecn")
		w := &interop.Wire{Datagrams: map[string]int{}, Packets: map[string]int{}, Versions: []string{wireV1}, Connections: 1, Handshakes: 1}
		tt.edit(w)
		out, why := c.judgeFor(tt.client, tt.srv)(w, whole)
		if out != tt.want || !strings.Contains(why, tt.why) {
			t.Errorf("%s: %s (%s), want %s with %q", tt.name, out, why, tt.want, tt.why)
		}
	}
}

// TestExchangeLinks: every case's link parses, and the constants the judges read are the links'
// (longrtt's RTT, blackhole's outage).
func TestExchangeLinks(t *testing.T) {
	for _, c := range Exchanges {
		if _, err := linkspec.Parse(c.Link); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		if c.judge == nil && c.judgePeers == nil {
			t.Errorf("%s: no judge", c.Name)
		}
	}
	if s, _ := linkspec.Parse(LinkLongRTT); s.RTT != LongRTT {
		t.Errorf("longrtt: link RTT %v, LongRTT %v", s.RTT, LongRTT)
	}
	if s, _ := linkspec.Parse(LinkBlackhole); s.Outage.Off != BlackholeOutage || s.Outage.On != 5*time.Second || s.Outage.Hold {
		t.Errorf("blackhole: link outage %+v, BlackholeOutage %v", s.Outage, BlackholeOutage)
	}
}

// TestChaCha20Unsupported: a quic-go client (any release) cannot run chacha20, gtlsclient can,
// and the server plays no part in it.
func TestChaCha20Unsupported(t *testing.T) {
	c, _ := LookupExchange("chacha20")
	for _, tt := range []struct {
		client, srv string
		want        string
	}{{QUICGo, Ngtcp2, NoChaCha20QUICGo}, {"quic-go@v0.40.1", QUICGo, NoChaCha20QUICGo}, {Ngtcp2, QUICGo, ""}, {Ngtcp2, Ngtcp2, ""}} {
		if got := notSupported(c, Peer{Name: tt.client}, Peer{Name: tt.srv}); got != tt.want {
			t.Errorf("client %s, server %s: %q, want %q", tt.client, tt.srv, got, tt.want)
		}
	}
}

// TestDecodeMigrationDisabled: disable_active_migration (0x0c) among the server's transport
// parameters, as a number or by name, is read; the client's own parameters and a server without
// it are not.
func TestDecodeMigrationDisabled(t *testing.T) {
	params := func(iface, tps string) string {
		f := strings.Split(line(iface, "1", "2", "", "0x00000001", "bb33", "aa11", "", "6", "", "", "", "8", "57", "h3", ""), "\t")
		f[26] = tps
		return strings.Join(f, "\t") + "\n"
	}
	for _, tt := range []struct {
		name, capture string
		want          bool
	}{
		{"number", params("0", "1,4,12,15"), true},
		{"hex", params("0", "0x00,0x0c"), true},
		{"name", params("0", "initial_max_data (0x04),disable_active_migration (0x0c)"), true},
		{"client's", params("1", "12"), false},
		{"none", params("0", "1,4,15"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w, err := DecodeFields(strings.NewReader(tt.capture), false)
			if err != nil || w.MigrationDisabled != tt.want {
				t.Errorf("migration disabled %v (%v), want %v", w.MigrationDisabled, err, tt.want)
			}
		})
	}
}

func TestMigrationUnsupported(t *testing.T) {
	c, _ := LookupExchange("connectionmigration")
	for _, tt := range []struct {
		client, srv string
		want        string
	}{{QUICGo, Ngtcp2, ""}, {"quic-go@v0.66.0", QUICGo, ""}, {Chromium, QUICGo, NoMigrateChromium}, {Ngtcp2, QUICGo, ""}, {Ngtcp2, Ngtcp2, ""}} {
		if got := notSupported(c, Peer{Name: tt.client}, Peer{Name: tt.srv}); got != tt.want {
			t.Errorf("client %s, server %s: %q, want %q", tt.client, tt.srv, got, tt.want)
		}
	}
}

// rebound is the Paths of a client the server followed over dsts, each change opened with an
// answered PATH_CHALLENGE (c0, c1, ...).
func rebound(dsts ...string) *interop.Paths {
	p := &interop.Paths{Destinations: dsts, Sources: dsts, Migrations: len(dsts) - 1, SourceChanges: len(dsts) - 1}
	for i := range p.Migrations {
		p.Challenges = append(p.Challenges, "c"+strconv.Itoa(i))
	}
	return p
}

// pathed sets a line's addresses and its PATH_CHALLENGE and PATH_RESPONSE data.
func pathed(l, src, dst, sport, dport, challenge, response string) string {
	f := strings.Split(l, "\t")
	f[fieldIPSrc], f[fieldIPDst], f[fieldUDPSrc], f[fieldUDPDst], f[fieldChallenge], f[fieldResponse] = src, dst, sport, dport, challenge, response
	return strings.Join(f, "\t")
}

// TestDecodePaths reads a rebinding as the capture shows it: the client's port changes, the
// server's next datagram to it probes with a PATH_CHALLENGE that the client answers; a later
// change the server follows without a challenge, and a challenge left unanswered; the client's
// 1-RTT packets keep their destination connection ID across the changes (a rebinding, not a
// migration); a dropped datagram (undissected) is skipped.
func TestDecodePaths(t *testing.T) {
	c, s := "100.64.0.6", "100.64.0.5"
	capture := strings.Join([]string{
		pathed(line("1", "0", "", "", "", "", "dd01", "0", "8", "", "", "0", "", "", "", ""), c, s, "4000", "443", "", ""),
		pathed(line("0", "0", "", "", "", "", "aa11", "0", "8", "", "", "0", "", "", "", ""), s, c, "443", "4000", "", ""),
		pathed(line("1", "0", "", "", "", "", "dd01", "0", "8", "", "", "0", "", "", "", ""), c, s, "5000", "443", "", ""),
		pathed(line("0", "0", "", "", "", "", "aa11", "0", "26,8", "", "", "0", "", "", "", ""), s, c, "443", "5000", "0102030405060708", ""),
		line("2", "", "", "", "", "", "", "", "", "", "", "", "", "", "", ""),
		pathed(line("1", "0", "", "", "", "", "dd01", "0", "27", "", "", "", "", "", "", ""), c, s, "5000", "443", "", "0102030405060708"),
		pathed(line("1", "0", "", "", "", "", "dd01", "0", "8", "", "", "0", "", "", "", ""), c, s, "6000", "443", "", ""),
		pathed(line("0", "0", "", "", "", "", "aa11", "0", "8", "", "", "0", "", "", "", ""), s, c, "443", "6000", "", ""),
		pathed(line("0", "0", "", "", "", "", "aa11", "0", "26", "", "", "", "", "", "", ""), s, c, "443", "6000", "1111111111111111", ""),
	}, "\n") + "\n"
	w, err := DecodeFields(strings.NewReader(capture), false)
	if err != nil {
		t.Fatal(err)
	}
	p := w.Paths
	if p == nil {
		t.Fatal("no paths")
	}
	want := []string{c + ":4000", c + ":5000", c + ":6000"}
	if !slices.Equal(p.Destinations, want) || !slices.Equal(p.Sources, want) || p.Migrations != 2 || p.SourceChanges != 2 {
		t.Errorf("destinations %v sources %v, %d migrations, %d source changes; want %v twice, 2, 2", p.Destinations, p.Sources, p.Migrations, p.SourceChanges, want)
	}
	if len(p.Unchallenged) != 1 || !strings.HasPrefix(p.Unchallenged[0], c+":6000 at") {
		t.Errorf("unchallenged %v, want the change to :6000", p.Unchallenged)
	}
	if !slices.Equal(p.Challenges, []string{"0102030405060708", "1111111111111111"}) || !slices.Equal(p.Unanswered, []string{"1111111111111111"}) {
		t.Errorf("challenges %v, unanswered %v", p.Challenges, p.Unanswered)
	}
	if len(p.ReusedDCID) != 2 {
		t.Errorf("reused DCID %v, want both changes", p.ReusedDCID)
	}
	plain, err := DecodeFields(strings.NewReader(timedCapture), false)
	if err != nil || plain.Paths != nil {
		t.Errorf("a capture without addresses: paths %+v (%v), want nil", plain.Paths, err)
	}
}
