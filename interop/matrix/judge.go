package matrix

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/interop"
)

// verdict collects the reasons a case fails; pass when there are none.
type verdict []string

func (v *verdict) need(ok bool, format string, args ...any) {
	if !ok {
		*v = append(*v, fmt.Sprintf(format, args...))
	}
}

func (v verdict) outcome(pass string) (interop.Outcome, string) {
	if len(v) == 0 {
		return interop.Pass, pass
	}
	return interop.Fail, strings.Join(v, "; ")
}

// filesWhole needs every file saved whole.
func (v *verdict) filesWhole(files []interop.FileCheck) {
	for _, f := range files {
		v.need(f.Match, "%s: %d of %d bytes saved, or other bytes", f.Name, max(f.Got, 0), f.Bytes)
	}
}

// handshook needs n connections, each with its handshake completed on the wire, and only
// version want in long headers.
func (v *verdict) handshook(w *interop.Wire, n int, want string) {
	v.need(w.Connections == n, "%d connections (client source connection IDs in its Initials), want %d", w.Connections, n)
	v.need(w.Handshakes == n, "%d of %d connections completed the handshake on the wire (the client's 1-RTT packets delivered, then the server's)", w.Handshakes, w.Connections)
	v.need(len(w.Versions) == 1 && w.Versions[0] == want, "long header versions %v, want %s alone", w.Versions, want)
}

// confirmed needs a HANDSHAKE_DONE from the server (RFC 9001 section 4.1.2); loss cases do not
// ask it: a client may fetch its file and close before a lost HANDSHAKE_DONE is sent again.
func (v *verdict) confirmed(w *interop.Wire) {
	v.need(w.HandshakeDone > 0, "no HANDSHAKE_DONE frame from the server among %d delivered datagrams", w.Datagrams["down"])
}

func judgeHandshake(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	var v verdict
	v.handshook(w, 1, wireV1)
	v.confirmed(w)
	v.need(w.Packets["down retry"] == 0, "the server sent %d Retry packets unasked", w.Packets["down retry"])
	v.filesWhole(files)
	return v.outcome(fmt.Sprintf("one connection, its handshake completed, QUIC v1, HANDSHAKE_DONE seen (%d), the file whole", w.HandshakeDone))
}

func judgeTransfer(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	var v verdict
	v.handshook(w, 1, wireV1)
	v.need(w.Streams["down bidi"] >= len(files), "the server's STREAM frames on %d request streams, want at least %d", w.Streams["down bidi"], len(files))
	v.filesWhole(files)
	return v.outcome(fmt.Sprintf("%d files whole over %d request streams of one connection", len(files), w.Streams["down bidi"]))
}

func judgeRetry(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	var v verdict
	v.need(w.Packets["down retry"] > 0, "the server sent no Retry packet (%d datagrams from it delivered)", w.Datagrams["down"])
	v.need(w.Packets["down retry"] == 0 || w.TokenEchoed, "the client's Initial after the Retry did not carry its token %q", w.RetryToken)
	if len(v) == 0 {
		v.handshook(w, 1, wireV1)
		v.confirmed(w)
	}
	v.filesWhole(files)
	return v.outcome(fmt.Sprintf("Retry sent, its %d-byte token echoed in the client's next Initial, handshake done, the file whole", len(w.RetryToken)/2))
}

func judgeResumption(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	var v verdict
	v.need(w.Connections == 2, "%d connections, want 2", w.Connections)
	v.need(len(w.Resumed) == 2 && !w.Resumed[0] && w.Resumed[1], "sessions resumed per connection %v, want [false true] (ServerHello with pre_shared_key and no Certificate)", w.Resumed)
	v.filesWhole(files)
	return v.outcome("the second connection resumed (pre_shared_key in its ServerHello, no Certificate), the first did not; the file whole")
}

func judgeZeroRTT(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	var v verdict
	v.need(w.Connections == 2, "%d connections, want 2", w.Connections)
	v.need(w.Packets["up 0rtt"] > 0, "the client sent no 0-RTT packet")
	v.need(len(w.EarlyData) == 2 && w.EarlyData[1], "the server's EncryptedExtensions carried early_data per connection %v, want it in the second", w.EarlyData)
	v.filesWhole(files)
	return v.outcome(fmt.Sprintf("%d 0-RTT packets from the client, accepted (early_data in the server's EncryptedExtensions); the file whole", w.Packets["up 0rtt"]))
}

func judgeHTTP3(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	var v verdict
	v.need(w.ALPN == "h3", "the server chose ALPN %q, want h3", w.ALPN)
	v.need(w.Streams["up uni"] > 0 && w.Streams["down uni"] > 0, "unidirectional streams up %d, down %d: want each side's control stream", w.Streams["up uni"], w.Streams["down uni"])
	v.filesWhole(files)
	return v.outcome(fmt.Sprintf("ALPN h3, unidirectional streams up %d and down %d, %d files whole", w.Streams["up uni"], w.Streams["down uni"], len(files)))
}

func judgeKeyUpdate(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	var v verdict
	v.need(w.KeyPhaseFlips["up"] > 0, "the client's 1-RTT packets never flipped the key phase bit")
	v.need(w.KeyPhaseFlips["down"] > 0, "the server's 1-RTT packets never flipped the key phase bit")
	v.filesWhole(files)
	who := map[string]string{"up": "the client", "down": "the server"}[w.KeyUpdateFirst]
	return v.outcome(fmt.Sprintf("key phase flipped %d times up and %d down (%s first), the file whole", w.KeyPhaseFlips["up"], w.KeyPhaseFlips["down"], who))
}

func judgeV2(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	var v verdict
	v.need(w.Connections == 1, "%d connections, want 1", w.Connections)
	v.need(slices.Equal(w.Versions, []string{wireV2}), "long header versions %v, want %s alone", w.Versions, wireV2)
	v.filesWhole(files)
	return v.outcome("QUIC v2 in every long header, the file whole")
}

// judgeCorruption judges a corruption case of n connections: n connections (counted without
// the undecryptable client datagrams: DecodeFields), QUIC v1 among the versions (a corrupted
// datagram is still delivered and captured, and a bit flipped in a long header's version shows
// as another version), every file whole on every connection, and that the link corrupted
// something (Wire.Corrupted, its counters). The handshakes seen completed in the capture are
// counted, not asked: the dissector does not read the packets coalesced behind a corrupted one
// (seen here: a client's Handshake packet corrupted, its coalesced 1-RTT request unread while
// the server answered it), so a completed handshake may be hidden from it; each file whole is
// the proof instead, as the server sends it only in 1-RTT packets in answer to a request the
// client can send only once it has the server's Finished (no client here resumes a session).
func judgeCorruption(n int) func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	return func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
		var v verdict
		up, down := w.Corrupted["up"], w.Corrupted["down"]
		v.need(up+down > 0, "the link corrupted no datagram: corruption was not met")
		v.need(w.Connections == n, "%d connections (client source connection IDs in its decryptable Initials), want %d", w.Connections, n)
		v.need(slices.Contains(w.Versions, wireV1), "long header versions %v, want %s among them", w.Versions, wireV1)
		v.filesWhole(files)
		what := "one connection and the file whole"
		if n > 1 {
			what = fmt.Sprintf("%d connections and the file whole on each", n)
		}
		return v.outcome(fmt.Sprintf("%s though the link corrupted %d datagrams up and %d down (%d packets undecryptable in the capture; %d of %d handshakes seen completed in it, %d HANDSHAKE_DONE delivered)", what, up, down, w.Undecrypted, w.Handshakes, w.Connections, w.HandshakeDone))
	}
}

// judgeLoss judges a loss case of n connections.
func judgeLoss(n int) func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	return func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
		var v verdict
		v.handshook(w, n, wireV1)
		v.filesWhole(files)
		what := "handshake done and the file whole"
		if n > 1 {
			what = fmt.Sprintf("%d handshakes done and the file whole each time", n)
		}
		return v.outcome(fmt.Sprintf("%s though the link dropped %d datagrams up and %d down (%d HANDSHAKE_DONE delivered)", what, w.Datagrams["up-dropped"], w.Datagrams["down-dropped"], w.HandshakeDone))
	}
}
