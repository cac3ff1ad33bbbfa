package matrix

import (
	"fmt"
	"slices"
	"strings"
	"time"

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

// judgeLoss judges a loss case of n connections: n connections, each handshake completed on
// the wire, QUIC v1, every file whole, and the link dropped at least one datagram (its drop
// interfaces in the capture), so a case whose loss was never met does not pass.
func judgeLoss(n int) func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	return func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
		var v verdict
		v.need(w.Datagrams["up-dropped"]+w.Datagrams["down-dropped"] > 0, "the link dropped no datagram: loss was not met")
		v.handshook(w, n, wireV1)
		v.filesWhole(files)
		what := "handshake done and the file whole"
		if n > 1 {
			what = fmt.Sprintf("%d handshakes done and the file whole each time", n)
		}
		return v.outcome(fmt.Sprintf("%s though the link dropped %d datagrams up and %d down (%d HANDSHAKE_DONE delivered)", what, w.Datagrams["up-dropped"], w.Datagrams["down-dropped"], w.HandshakeDone))
	}
}

// judgeLongRTT judges longrtt, its link's RTT rtt: the handshake conditions of one
// connection, the file whole and the client's ClientHello sent at least twice (the Interop
// Runner's rule: rtt outlasts a first probe timeout, RFC 9002 sections 6.2.2 and 6.2.4).
func judgeLongRTT(rtt time.Duration) judgeFunc {
	return func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
		var v verdict
		v.handshook(w, 1, wireV1)
		v.need(w.ClientHellos >= 2, "the client's ClientHello was delivered %d times, want at least 2 (a %v RTT outlasts its first probe timeout, RFC 9002 section 6.2.4)", w.ClientHellos, rtt)
		v.filesWhole(files)
		return v.outcome(fmt.Sprintf("handshake completed across a %v RTT, the file whole; the client sent %d Initial packets, %d of them with its ClientHello", rtt, w.Packets["up initial"], w.ClientHellos))
	}
}

// suiteChaCha20 is TLS_CHACHA20_POLY1305_SHA256 as Wire names suites (RFC 8446 section B.4).
const suiteChaCha20 = "0x1303"

func judgeChaCha20(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	var v verdict
	v.handshook(w, 1, wireV1)
	v.need(slices.Equal(w.OfferedSuites, []string{suiteChaCha20}), "the client offered cipher suites %v, want %s (TLS_CHACHA20_POLY1305_SHA256) alone", w.OfferedSuites, suiteChaCha20)
	v.need(slices.Equal(w.ChosenSuites, []string{suiteChaCha20}), "the server's ServerHello chose %v, want %s", w.ChosenSuites, suiteChaCha20)
	v.filesWhole(files)
	return v.outcome(fmt.Sprintf("the client offered %s alone and the ServerHello chose it; one connection, its handshake completed, the file whole", suiteChaCha20))
}

// judgeBlackhole judges blackhole, its link down for outage at a time: one connection, its
// handshake completed, the file whole, and the capture's longest time without a delivered
// datagram at least outage-slack, with datagrams dropped within it and delivered both ways
// after it.
func judgeBlackhole(outage, slack time.Duration) judgeFunc {
	return func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
		var v verdict
		v.handshook(w, 1, wireV1)
		g := w.Gap
		if g == nil {
			g = &interop.Gap{}
		}
		least := float64((outage - slack).Milliseconds())
		v.need(g.LengthMS >= least, "the longest time without a datagram delivered was %.0f ms, want at least %.0f ms (the %v outage less %v): the outage was not met during the exchange", g.LengthMS, least, outage, slack)
		v.need(g.Dropped > 0, "the link dropped no datagram within the longest gap (%.0f ms at %.0f ms)", g.LengthMS, g.StartMS)
		v.need(g.AfterUp > 0 && g.AfterDown > 0, "after the gap the link delivered %d datagrams up and %d down: want both sides resumed", g.AfterUp, g.AfterDown)
		v.filesWhole(files)
		return v.outcome(fmt.Sprintf("the file whole; no datagram delivered for %.0f ms from %.0f ms (%d dropped within it, the %v outage), then %d up and %d down", g.LengthMS, g.StartMS, g.Dropped, outage, g.AfterUp, g.AfterDown))
	}
}

// judgeECN makes the ecn case's judge for client and srv: the handshake conditions, the file
// whole, and ECN both ways (ecnWays). Where a way lacks it the case fails when the endpoint at
// fault claims ECN support (claimsECN) and is unsupported otherwise, the Interop Runner's rule
// (an endpoint that does not implement a case answers 127: unsupported, not failed).
func judgeECN(client, srv Peer) judgeFunc {
	return func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
		var v verdict
		v.handshook(w, 1, wireV1)
		v.filesWhole(files)
		if len(v) > 0 {
			return v.outcome("")
		}
		counts := ecnCounts(w)
		faults := ecnFaults(w, map[string]string{"up": "client", "down": "server"})
		if len(faults) == 0 {
			return interop.Pass, "ECN both ways, the file whole: " + counts
		}
		var unclaimed []string
		for _, f := range faults {
			p := map[string]Peer{"client": client, "server": srv}[f.who]
			if claims, why := claimsECN(p); !claims {
				unclaimed = append(unclaimed, fmt.Sprintf("%s (the %s %s)", f.what, f.who, why))
			} else {
				v = append(v, f.what)
			}
		}
		if len(v) > 0 {
			return interop.Fail, strings.Join(append(v, unclaimed...), "; ") + ": " + counts
		}
		return interop.Unsupported, strings.Join(unclaimed, "; ") + ": " + counts
	}
}

// ecnFault is a way ECN is missing and the endpoint ("client", "server") at fault.
type ecnFault struct{ who, what string }

// ecnFaults lists what ECN lacks each way: the sender marked no delivered datagram ECT(0)
// or ECT(1), or its peer received marked ones and sent no ACK frame with ECN counts. Where the
// link bleached marks that way (Wire.Bleached, bleach=ecn) the fault says so: the sender's
// marks were cleared on the way, and its ECN validation (RFC 9000 section 13.4.2) is what
// made it stop marking.
func ecnFaults(w *interop.Wire, who map[string]string) []ecnFault {
	var out []ecnFault
	for _, dir := range []string{"up", "down"} {
		peer := map[string]string{"up": "down", "down": "up"}[dir]
		marked := w.ECN[dir+" ect0"] + w.ECN[dir+" ect1"] + w.ECN[dir+" ce"]
		switch {
		case marked == 0 && w.Bleached[dir] > 0:
			out = append(out, ecnFault{who[dir], fmt.Sprintf("the link bleached %d of the %s's ECN marks to Not-ECT (bleach=ecn): none of its %d delivered datagrams carried ECT(0) or ECT(1)", w.Bleached[dir], who[dir], w.Datagrams[dir])})
		case marked == 0:
			out = append(out, ecnFault{who[dir], fmt.Sprintf("the %s marked none of its %d delivered datagrams ECT(0) or ECT(1)", who[dir], w.Datagrams[dir])})
		case w.ACKECN[peer] == 0:
			out = append(out, ecnFault{who[peer], fmt.Sprintf("the %s received %d marked datagrams and sent no ACK frame with ECN counts (type 0x03)", who[peer], marked)})
		}
	}
	return out
}

// ecnCounts says the datagrams per ECN codepoint and the ACK_ECN frames each way.
func ecnCounts(w *interop.Wire) string {
	way := func(dir string) string {
		return fmt.Sprintf("%d ECT(0), %d ECT(1), %d CE, %d not-ECT, %d ACK_ECN", w.ECN[dir+" ect0"], w.ECN[dir+" ect1"], w.ECN[dir+" ce"], w.ECN[dir+" not-ect"], w.ACKECN[dir])
	}
	return "up " + way("up") + "; down " + way("down")
}

// judgeGoodput judges the goodput case: one connection, its handshake completed on the wire,
// QUIC v1, the file whole, and a transfer time read from the capture (Wire.TransferMS); the
// figure itself is the record's (goodputOf), not the verdict's.
func judgeGoodput(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	var v verdict
	v.handshook(w, 1, wireV1)
	v.need(w.TransferMS > 0, "no server datagram with a request stream's STREAM frame after the client's first: no transfer time")
	v.filesWhole(files)
	bytes := 0
	for _, f := range files {
		bytes += f.Bytes
	}
	return v.outcome(fmt.Sprintf("the file whole (%d bytes) in %.0f ms: %.2f Mbit/s", bytes, w.TransferMS, mbps(bytes, w.TransferMS)))
}

// mbps is the goodput of n bytes in ms milliseconds, in Mbit/s (0 for no time).
func mbps(n int, ms float64) float64 {
	if ms <= 0 {
		return 0
	}
	return 8 * float64(n) / (ms * 1e3)
}

// judgeRebind judges rebind-port (addr false) and rebind-addr (addr true) as the Interop
// Runner does, from the capture's server view (Wire.Paths): one connection, its handshake
// completed, QUIC v1, the file whole; the server's datagrams went to more than one client
// port (rebind-addr: IPv4 address); the first server datagram to each new destination carried
// a PATH_CHALLENGE (RFC 9000 sections 8.2 and 9.3: a server that sees the client's address
// change validates the new path), at least as many distinct challenges as changes, and each
// echoed by a client PATH_RESPONSE (section 8.2.2). A server whose transport parameters forbid
// active migration (Wire.MigrationDisabled) and that never sent to a new client address after
// a rebinding makes the case unsupported (NoRebindServer), its one handshake completed: RFC 9000
// section 9 lets it drop the packets from the new address, so the transfer may stall; the
// server lacks the feature, as the Interop Runner's endpoint that does not implement a case.
func judgeRebind(addr bool) judgeFunc {
	return func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
		var v verdict
		v.handshook(w, 1, wireV1)
		p := pathsOf(w)
		v.need(w.Rebinds > 0, "the link's NAT made no rebinding during the exchange: the rebinding was not met")
		what, n := "ports", len(p.Destinations)
		if addr {
			what, n = "IPv4 addresses", len(distinctHosts(p.Destinations))
		}
		if w.MigrationDisabled && w.Rebinds > 0 && n <= 1 && w.Connections == 1 && w.Handshakes == 1 {
			return interop.Unsupported, NoRebindServer + fmt.Sprintf(" (it did: the server sent to %d client %s, %v, after the NAT rebound %d times)", n, what, p.Destinations, w.Rebinds)
		}
		v.need(n > 1, "the server sent to %d client %s (%v), want more than one: it never saw the rebinding", n, what, p.Destinations)
		v.need(len(p.Unchallenged) == 0, "the first server datagram to a new client address carried no PATH_CHALLENGE: %s", strings.Join(p.Unchallenged, ", "))
		v.need(len(p.Challenges) >= p.Migrations, "%d changes of destination but %d distinct PATH_CHALLENGE frames", p.Migrations, len(p.Challenges))
		v.need(len(p.Unanswered) == 0, "PATH_CHALLENGE without the client's PATH_RESPONSE: %v", p.Unanswered)
		v.filesWhole(files)
		return v.outcome(fmt.Sprintf("the NAT rebound %d times; the server followed the client over %d destinations (%s) in %d changes, each opened with a PATH_CHALLENGE, %d challenges all answered by PATH_RESPONSE; %d server datagrams to a forgotten binding dropped; the file whole",
			w.Rebinds, len(p.Destinations), strings.Join(p.Destinations, ", "), p.Migrations, len(p.Challenges), w.Unbound))
	}
}

// onePath names the client's one address in a capture of one path each way, whose address
// Wire.Paths does not keep.
const onePath = "one address: a single path each way"

// pathsOf is w's Paths, or for a capture of one path each way (Wire.Paths nil) that path:
// onePath as the client's source when it sent a datagram and as the server's destination
// when the server did, so that a verdict counts one address, not none.
func pathsOf(w *interop.Wire) *interop.Paths {
	if w.Paths != nil {
		return w.Paths
	}
	p := &interop.Paths{}
	if w.Datagrams["up"] > 0 {
		p.Sources = []string{onePath}
	}
	if w.Datagrams["down"] > 0 {
		p.Destinations = []string{onePath}
	}
	return p
}

// distinctHosts is the distinct IPv4 addresses of "IPv4:port" addresses, in order.
func distinctHosts(addrs []string) []string {
	var out []string
	for _, a := range addrs {
		h := a
		if i := strings.LastIndexByte(a, ':'); i >= 0 {
			h = a[:i]
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// judgeMigration judges connectionmigration from the capture (Wire.Paths): one connection,
// its handshake completed, QUIC v1, the file whole; the client's datagrams from more than one
// address (IPv4:port: the Interop Runner asks for more than one IP address, but the client here
// has one, see the case's rule), each change's first 1-RTT datagram with a new destination
// connection ID (RFC 9000 section 9.5), the server following with a PATH_CHALLENGE on each new
// destination and every challenge answered (sections 8.2 and 9.3). A server whose transport
// parameters forbid active migration (Wire.MigrationDisabled) and a client that therefore did
// not migrate make the case unsupported (NoMigrateServer), once the handshake and the file are
// whole: the server lacks the feature, as the Interop Runner's endpoint that does not implement a
// case.
func judgeMigration(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string) {
	var v verdict
	v.handshook(w, 1, wireV1)
	p := pathsOf(w)
	if w.MigrationDisabled && len(p.Sources) <= 1 {
		v.filesWhole(files)
		if o, why := v.outcome(""); o != interop.Pass {
			return o, why
		}
		return interop.Unsupported, NoMigrateServer
	}
	v.need(len(p.Sources) > 1, "the client's datagrams came from %d addresses (%v), want more than one: it did not migrate", len(p.Sources), p.Sources)
	v.need(len(p.ReusedDCID) == 0, "the client's first 1-RTT datagram from a new address kept its destination connection ID (RFC 9000 section 9.5): %s", strings.Join(p.ReusedDCID, ", "))
	v.need(len(p.Destinations) > 1, "the server sent to %d client addresses (%v), want more than one: it did not follow the migration", len(p.Destinations), p.Destinations)
	v.need(len(p.Unchallenged) == 0, "the first server datagram to a new client address carried no PATH_CHALLENGE: %s", strings.Join(p.Unchallenged, ", "))
	v.need(len(p.Challenges) >= p.Migrations, "%d changes of destination but %d distinct PATH_CHALLENGE frames", p.Migrations, len(p.Challenges))
	v.need(len(p.Unanswered) == 0, "PATH_CHALLENGE without the client's PATH_RESPONSE: %v", p.Unanswered)
	v.filesWhole(files)
	return v.outcome(fmt.Sprintf("the client migrated over %d addresses (%s) with a new connection ID each time; the server followed in %d changes, each opened with a PATH_CHALLENGE, %d challenges all answered by PATH_RESPONSE; the file whole",
		len(p.Sources), strings.Join(p.Sources, ", "), p.Migrations, len(p.Challenges)))
}
