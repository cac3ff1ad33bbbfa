package matrix

import (
	"fmt"
	"strings"
	"time"

	"github.com/pltlab/pltlab/interop"
)

// Exchange is a case in the manner of the QUIC Interop Runner: a real client fetches files
// from a real server through an emulated link, and the case is judged from the link's capture,
// decrypted with both endpoints' TLS key logs (Wire), and from the bytes the client saved,
// never from an exit code alone.
type Exchange struct {
	// Name is the case's name on the command line and in records ("handshake").
	Name string
	// Rule is what the case checks and how its verdict is read from the wire.
	Rule string
	// Link is the emulated link's spec (shaping/linkspec grammar).
	Link string
	// Files are the sizes in bytes of the files served and fetched, in order.
	Files []int
	// Runs is how many times the client program runs, each run a new connection that fetches
	// the files again (0: once).
	Runs int
	// Server and Client are the features the case asks of each endpoint.
	Server ServerFeatures
	Client ClientFeatures
	// Goodput makes the case a measurement (goodput): its outcome says whether the transfer
	// completed correctly, and its record carries the goodput (interop.Goodput); a run during
	// which the emulator was late is made again once, by the one retry rule (result.Retry).
	Goodput bool
	judge   judgeFunc
	// judgePeers, when set, makes the judge from what the two peers claim (ecn: whether each
	// claims ECN support); judge is unused then.
	judgePeers func(client, srv Peer) judgeFunc
}

// judgeFunc judges a case from the decrypted capture and the files saved.
type judgeFunc func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string)

// runs is how many times the client runs (Runs, at least 1).
func (c Exchange) runs() int { return max(c.Runs, 1) }

// judgeFor returns the case's judge for client and srv.
func (c Exchange) judgeFor(client, srv Peer) judgeFunc {
	if c.judgePeers != nil {
		return c.judgePeers(client, srv)
	}
	return c.judge
}

// ServerFeatures are what a case asks of the server.
type ServerFeatures struct {
	// Retry: validate every client's address with a Retry packet (RFC 9000 section 8.1.2).
	Retry bool
	// ZeroRTT: accept 0-RTT data (RFC 9001 section 4.6.1).
	ZeroRTT bool
	// V2: accept QUIC version 2 (RFC 9369).
	V2 bool
	// Faults make a quic-go server misbehave on purpose, for the tests built to fail (no case
	// asks for them; gtlsserver cannot be made to: notSupported).
	Faults ServerFaults
}

// ServerFaults are the ways a quic-go server can be made to misbehave (the interop
// endpoint's -truncate, -alpn and -no-tickets), each to show that a case's verdict fails.
type ServerFaults struct {
	// Truncate serves the first half of each file and ends its stream.
	Truncate bool
	// ALPN, when set, is the one ALPN the server accepts instead of h3.
	ALPN string
	// NoTickets issues no TLS session ticket, so no session can resume.
	NoTickets bool
}

// ClientFeatures are what a case asks of the client.
type ClientFeatures struct {
	// Resume: fetch the files again on a second connection that resumes the first's session.
	Resume bool
	// ZeroRTT: like Resume, with the second connection's requests in 0-RTT.
	ZeroRTT bool
	// KeyUpdate: initiate a key update during the transfer (RFC 9001 section 6): gtlsclient's
	// --key-update, Chromium's key update limit (browser.WithKeyUpdateAfter); quic-go has no
	// option for it, but initiates its first key update itself after 100 packets sent or
	// received (handshake.FirstKeyUpdateInterval, v0.65.0).
	KeyUpdate bool
	// V2: offer QUIC version 2 alone.
	V2 bool
	// ChaCha20: offer the TLS cipher suite TLS_CHACHA20_POLY1305_SHA256 (0x1303, RFC 8446
	// section B.4; its QUIC packet and header protection: RFC 9001 sections 5.3 and 5.4.4)
	// alone (gtlsclient's --ciphers; no quic-go client can: notSupported).
	ChaCha20 bool
	// Migrate: move to a new local address during the transfer, validating the new path and
	// switching to a new connection ID (RFC 9000 sections 9 and 9.5): gtlsclient's
	// --change-local-addr, the quic-go endpoint's -migrate (Conn.AddPath, Path.Probe,
	// Path.Switch; a release before v0.51 answers "unsupported migrate"), each a new socket, a
	// new port on the same address; Chromium cannot be asked to (notSupported).
	Migrate bool
	// ZeroCID makes a quic-go client use zero-length connection IDs (the endpoint's
	// -zero-cid), with which a quic-go server follows a rebinding without validating the new
	// path (it has no connection ID for it): for the tests built to fail; no case asks it.
	ZeroCID bool
}

// Links of the exchange cases: the Interop Runner's 10 Mbit/s and 30 ms RTT, and that link
// with 30 % and 2 % random loss each way (its handshakeloss and transferloss drop rates), or
// corruption each way at those rates (its handshakecorruption and transfercorruption: one bit
// of a datagram's UDP payload flipped, the UDP checksum kept valid, so QUIC's AEAD meets it).
const (
	LinkPlain               = "rate=10mbit,rtt=30ms"
	LinkHandshakeLoss       = "rate=10mbit,rtt=30ms,loss=30%"
	LinkTransferLoss        = "rate=10mbit,rtt=30ms,loss=2%"
	LinkHandshakeCorruption = "rate=10mbit,rtt=30ms,corrupt=30%"
	LinkTransferCorruption  = "rate=10mbit,rtt=30ms,corrupt=2%"
	// LinkLongRTT is the Interop Runner's longrtt link: its simulator's `simple-p2p
	// --delay=750ms --bandwidth=10Mbps` delays each direction 750 ms (as its 15 ms is
	// LinkPlain's 30 ms RTT), a 1.5 s RTT (LongRTT).
	LinkLongRTT = "rate=10mbit,rtt=1500ms"
	// LinkBlackhole is the Interop Runner's blackhole link (`blackhole --delay=15ms
	// --bandwidth=10Mbps --on=5s --off=2s`): up 5 s, then down 2 s (BlackholeOutage), repeating
	// from the link's start, every datagram that arrives while it is down dropped.
	LinkBlackhole = "rate=10mbit,rtt=30ms,outage=5s/2s"
	// LinkGoodput is the Interop Runner's goodput link, its ns-3 `simple-p2p --delay=15ms
	// --bandwidth=10Mbps --queue=25`: 10 Mbit/s, 15 ms each way, a droptail queue of 25
	// packets (1 BDP of 1500-byte packets: 10 Mbit/s x 30 ms = 37 500 B).
	LinkGoodput = "rate=10mbit,rtt=30ms,queue=25pkt"
	// LinkRebindPort and LinkRebindAddr are the Interop Runner's rebind links (`rebind
	// --delay=15ms --bandwidth=10Mbps --queue=25 --first-rebind=1s --rebind-freq=5s`, with
	// `--rebind-addr` for the second): LinkGoodput with a NAT at the client's edge that moves
	// the client's UDP port (and for rebind-addr its IPv4 address too) to a fresh binding 1 s
	// after the link opens and every 5 s after that, dropping what the server sends to a
	// binding no longer in force.
	LinkRebindPort = "rate=10mbit,rtt=30ms,queue=25pkt,rebind=port@1s/5s"
	LinkRebindAddr = "rate=10mbit,rtt=30ms,queue=25pkt,rebind=addr@1s/5s"
)

// MigrationFile is the size in bytes of connectionmigration's file: the Interop Runner's 2 MiB.
const MigrationFile = 2 << 20

// RebindFile is the size in bytes of the rebind cases' file: the Interop Runner's 10 MiB, at
// least 8.39 s at 10 Mbit/s, so the transfer meets the rebindings at 1 s and 6 s.
const RebindFile = 10 << 20

// GoodputFile is the size in bytes of the goodput case's file: the Interop Runner's
// MeasurementGoodput.FILESIZE, 10 MiB (10 x 2^20 B; at least 8.39 s at 10 Mbit/s).
const GoodputFile = 10 << 20

// LongRTT is LinkLongRTT's round-trip time: longer than a client's first probe timeout,
// 3 x 333 ms with RFC 9002's initial RTT (section 6.2.2), so its ClientHello is sent again
// before the server's answer can arrive (section 6.2.4).
const LongRTT = 1500 * time.Millisecond

// BlackholeOutage is how long LinkBlackhole stays down each time, and BlackholeSlack how much
// shorter than it the time without a delivered datagram may be: the datagrams queued when the
// link goes down are still served (at most its queue of 1 BDP, 30 ms at 10 Mbit/s) and
// delivered half an RTT (15 ms) later.
const (
	BlackholeOutage = 2 * time.Second
	BlackholeSlack  = 100 * time.Millisecond
)

// ECNFile is the size in bytes of the ecn case's file: larger than the Interop Runner's 1 kB
// so that each side sends ECN-marked packets and ACKs for some round trips.
const ECNFile = 100_000

// HandshakeLossRuns is how many connections handshakeloss makes (the Interop Runner makes 50 of
// 1 kB each): with 30 % loss each way at least one of their some 40 datagrams is dropped but
// for a chance of about 0.7^40, 6e-7.
const HandshakeLossRuns = 5

// Version codepoints on the wire as the capture shows them.
const (
	wireV1 = "0x00000001"
	wireV2 = "0x6b3343cf"
)

// GoodputRule is the goodput case's rule.
const GoodputRule = "the Interop Runner's goodput measurement: a 10 MiB file fetched over its 10 Mbit/s, 30 ms link with a 25-packet droptail queue; the case passes when the transfer completed correctly (one connection whose handshake completed on the wire, QUIC v1, the file whole, byte for byte), and its record carries the goodput, the file's bits over the time from the client's first datagram the link delivered to the last server datagram it delivered with the file's bytes (a request stream's STREAM frame), in Mbit/s; a run during which the emulator released a packet later than its bound is made once more (the one retry rule), and one late twice keeps its outcome but its figure is not a measurement (goodput.valid false, with the reason)"

// Exchanges are the exchange cases, in the order they run.
var Exchanges = []Exchange{
	{Name: "handshake", Link: LinkPlain, Files: []int{10_000}, judge: judgeHandshake,
		Rule: "one connection (one client source connection ID in the client's Initials) whose handshake completed on the wire (the client's 1-RTT packets delivered, then the server's), QUIC v1 in every long header, no Retry, a HANDSHAKE_DONE frame from the server (RFC 9001 section 4.1.2) and the file whole"},
	{Name: "transfer", Link: LinkPlain, Files: []int{500_000, 300_000, 200_000}, judge: judgeTransfer,
		Rule: "one connection, the server's STREAM frames on at least as many client-initiated bidirectional streams as files (multiplexed, RFC 9000 section 2.1) and every file whole"},
	{Name: "retry", Link: LinkPlain, Files: []int{10_000}, Server: ServerFeatures{Retry: true}, judge: judgeRetry,
		Rule: "the server sends a Retry packet and the client's next Initial carries its token, byte for byte (RFC 9000 sections 8.1.2 and 17.2.5.2); the handshake then completes (HANDSHAKE_DONE) and the file is whole"},
	{Name: "resumption", Link: LinkPlain, Files: []int{10_000}, Client: ClientFeatures{Resume: true}, judge: judgeResumption,
		Rule: "two connections one after the other; the second's ServerHello carries pre_shared_key (RFC 8446 section 4.2.11) and no Certificate follows it (the session resumed), the first's did not; both fetch the file whole"},
	{Name: "zerortt", Link: LinkPlain, Files: []int{10_000}, Server: ServerFeatures{ZeroRTT: true}, Client: ClientFeatures{ZeroRTT: true}, judge: judgeZeroRTT,
		Rule: "two connections; the second client sends 0-RTT packets and the server accepts them: its EncryptedExtensions carry early_data (RFC 8446 section 4.2.10, RFC 9001 section 4.6.1); both fetch the file whole"},
	{Name: "http3", Link: LinkPlain, Files: []int{30_000, 20_000, 10_000}, judge: judgeHTTP3,
		Rule: "ALPN h3 in the server's EncryptedExtensions (RFC 9114 section 3.1), each side's HTTP/3 control stream (a unidirectional stream of its own, RFC 9114 section 6.2.1) on the wire, and every file whole"},
	{Name: "keyupdate", Link: LinkPlain, Files: []int{2_000_000}, Client: ClientFeatures{KeyUpdate: true}, judge: judgeKeyUpdate,
		Rule: "the key phase bit of the 1-RTT packets flips both ways (RFC 9001 section 6), read from the packets decrypted with both generations of keys, and the file is whole; which side flipped first is recorded (the client is asked to: gtlsclient's --key-update, Chromium's QUICHE key update limit of 100 packets; quic-go updates by itself after 100 packets)"},
	{Name: "v2", Link: LinkPlain, Files: []int{10_000}, Server: ServerFeatures{V2: true}, Client: ClientFeatures{V2: true}, judge: judgeV2,
		Rule: "the connection runs QUIC version 2 (RFC 9369): one connection, version 0x6b3343cf in every long header both ways (a cleartext field; HANDSHAKE_DONE is not asked, as the capture's dissector may not know v2's keys), the file whole"},
	{Name: "handshakeloss", Link: LinkHandshakeLoss, Files: []int{1_000}, Runs: HandshakeLossRuns, judge: judgeLoss(HandshakeLossRuns),
		Rule: "through 30 % random loss each way the client connects 5 times, one after another: 5 connections, each handshake completed on the wire, QUIC v1, the 1 kB file whole every time (HANDSHAKE_DONE is counted, not asked: a client may close before a lost one is sent again); the packets the link dropped are counted as the evidence that loss was met"},
	{Name: "transferloss", Link: LinkTransferLoss, Files: []int{1_000_000}, judge: judgeLoss(1),
		Rule: "through 2 % random loss each way a 1 MB file arrives whole on one connection whose handshake completed on the wire, QUIC v1; the packets the link dropped are counted"},
	{Name: "handshakecorruption", Link: LinkHandshakeCorruption, Files: []int{1_000}, Runs: HandshakeLossRuns, judge: judgeCorruption(HandshakeLossRuns),
		Rule: "through 30 % corruption each way (one bit of the UDP payload flipped, the checksum kept valid) the client connects 5 times, one after another: 5 connections (a client datagram the capture cannot decrypt opens none: its flipped bit may be in a source connection ID), QUIC v1 among the versions (a flipped bit in a long header's version shows as another), the 1 kB file whole on every connection (sent only in 1-RTT, in answer to a request sent once the handshake completed: the proof of each handshake, as the capture's dissector does not read packets coalesced behind a corrupted one); the link corrupted at least one datagram (its counters); the corrupted datagrams, the packets undecryptable in the capture (the corruption met the AEAD) and the handshakes seen completed in it are counted"},
	{Name: "transfercorruption", Link: LinkTransferCorruption, Files: []int{1_000_000}, judge: judgeCorruption(1),
		Rule: "through 2 % corruption each way a 1 MB file arrives whole on one connection, QUIC v1 among the versions; the link corrupted at least one datagram; the corrupted datagrams, the packets undecryptable in the capture and the handshakes seen completed in it are counted"},
	{Name: "longrtt", Link: LinkLongRTT, Files: []int{10_000}, judge: judgeLongRTT(LongRTT),
		Rule: "across a 1.5 s RTT (the Interop Runner's 750 ms each way): one connection whose handshake completed on the wire, QUIC v1, the file whole, and the client's ClientHello sent at least twice (the Interop Runner's rule: the RTT outlasts a first probe timeout of 3 x 333 ms, RFC 9002 sections 6.2.2 and 6.2.4, so a client sends its Initial again before the answer can come); the client's Initial packets and ClientHellos are counted"},
	{Name: "chacha20", Link: LinkPlain, Files: []int{3_000_000}, Client: ClientFeatures{ChaCha20: true}, judge: judgeChaCha20,
		Rule: "the client offers TLS_CHACHA20_POLY1305_SHA256 (0x1303) alone in its ClientHello (the Interop Runner's rule), the server's ServerHello chooses it (RFC 8446 section 4.1.3; QUIC then protects packets with ChaCha20-Poly1305 and headers with ChaCha20, RFC 9001 sections 5.3 and 5.4.4), one connection whose handshake completed on the wire, QUIC v1 and the 3 MB file whole; a client that cannot offer it alone is unsupported"},
	{Name: "blackhole", Link: LinkBlackhole, Files: []int{10_000_000}, judge: judgeBlackhole(BlackholeOutage, BlackholeSlack),
		Rule: "a 10 MB file (8 s at 10 Mbit/s) through a link that goes dark for 2 s after 5 s, repeating (the Interop Runner's blackhole): one connection whose handshake completed on the wire, QUIC v1, the file whole, and the capture shows the outage met and survived: its longest time without a datagram delivered either way is at least the outage less 100 ms (the queue served into it), the link dropped datagrams within it, and both sides' datagrams were delivered after it (the transfer resumed, RFC 9002 section 6.2's probe timeouts backing off meanwhile)"},
	{Name: "rebind-port", Link: LinkRebindPort, Files: []int{RebindFile}, judge: judgeRebind(false),
		Rule: "a 10 MiB file through a NAT that moves the client's UDP port to a fresh one 1 s after the link opens and every 5 s after (the Interop Runner's rebind-port): one connection whose handshake completed on the wire, QUIC v1, the file whole, the server's datagrams sent to more than one client port, the first server datagram to each new client address carrying a PATH_CHALLENGE (path validation on a peer's address change, RFC 9000 sections 8.2 and 9.3), at least as many distinct challenges as changes, and every challenge echoed by a PATH_RESPONSE from the client (RFC 9000 section 8.2.2); read from the capture, which holds the server's view (the NAT sits at the client's edge)"},
	{Name: "rebind-addr", Link: LinkRebindAddr, Files: []int{RebindFile}, judge: judgeRebind(true),
		Rule: "as rebind-port, the NAT moving the client's IPv4 address as well as its port at each rebinding (the Interop Runner's rebind-addr; the new addresses are the client's /30 block's other two, routed to the link): the server's datagrams sent to more than one client IPv4 address, each change opened with a PATH_CHALLENGE that the client answers, one connection, QUIC v1, the file whole"},
	{Name: "connectionmigration", Link: LinkPlain, Files: []int{MigrationFile}, Client: ClientFeatures{Migrate: true}, judge: judgeMigration,
		Rule: "the client migrates on purpose during a 2 MiB transfer (the Interop Runner's connectionmigration; gtlsclient's --change-local-addr 300 ms after its handshake, the quic-go endpoint's -migrate: Conn.AddPath, Path.Probe, Path.Switch 300 ms after its dial): one connection whose handshake completed on the wire, QUIC v1, the file whole; the client's datagrams come from more than one address (IPv4:port) and its first 1-RTT datagram from each new one carries a new destination connection ID (RFC 9000 section 9.5; the Interop Runner's rule); the server's datagrams follow it, the first to each new destination carrying a PATH_CHALLENGE, and every challenge is answered by the client's PATH_RESPONSE (RFC 9000 sections 8.2 and 9.3). The Interop Runner also asks for more than one client IP address; here the client's namespace has one address and the client migrates to a new port on it, so an address is IPv4:port. A client that cannot be asked to migrate is unsupported (Chromium; a quic-go release before v0.51, which has no Conn.AddPath)"},
	{Name: "goodput", Link: LinkGoodput, Files: []int{GoodputFile}, Goodput: true, judge: judgeGoodput, Rule: GoodputRule},
	{Name: "ecn", Link: LinkPlain, Files: []int{ECNFile}, judgePeers: judgeECN,
		Rule: "one connection whose handshake completed on the wire, QUIC v1, the 100 kB file whole, and ECN both ways (RFC 9000 section 13.4): each side's delivered datagrams carry ECT(0) or ECT(1) in their IP header (RFC 3168 section 5) and each side's ACK frames carry ECN counts (type 0x03, RFC 9000 section 19.3.2); the datagrams per codepoint and the ACK_ECN frames are counted. A side that marks nothing, or reports no ECN counts for marked packets it received, fails the case when that endpoint claims ECN support and makes it unsupported when it does not (the Interop Runner's rule: an endpoint that does not implement a case answers 127 and the case is unsupported, not failed; ngtcp2's examples claim it, no quic-go release's interop endpoint lists ecn); the wire decides a pass whatever is claimed; a way whose marks the link cleared (bleach=ecn, counted by the emulator) names the bleached marks. Unmarked datagrams are counted, not refused (the Interop Runner refuses them; RFC 9000 section 13.4.2 and Appendix A.4 mark only while testing a path and once it is validated, and quic-go marks 1-RTT packets only)"},
}

// ExchangeNames lists the names of Exchanges.
func ExchangeNames() []string {
	var n []string
	for _, c := range Exchanges {
		n = append(n, c.Name)
	}
	return n
}

// LookupExchange returns the exchange case called name; false when there is none.
func LookupExchange(name string) (Exchange, bool) {
	for _, c := range Exchanges {
		if c.Name == name {
			return c, true
		}
	}
	return Exchange{}, false
}

// ParseCases splits a comma-separated list of case names into probe cases (interop.Cases) and
// exchange cases (Exchanges), each in the order given; "" or "all" is every case of both. An
// unknown or repeated name is an error naming the accepted ones.
func ParseCases(list string) ([]interop.Case, []Exchange, error) {
	if list == "" || list == "all" {
		return interop.Cases, Exchanges, nil
	}
	var probes []interop.Case
	var ex []Exchange
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if seen[name] {
			return nil, nil, fmt.Errorf("case %q given twice", name)
		}
		seen[name] = true
		if c, err := interop.ParseCases(name); err == nil && name != "all" {
			probes = append(probes, c...)
		} else if e, ok := LookupExchange(name); ok {
			ex = append(ex, e)
		} else {
			return nil, nil, fmt.Errorf("unknown case %q; accepted: all, %s, %s", name, strings.Join(interop.CaseNames(), ", "), strings.Join(ExchangeNames(), ", "))
		}
	}
	return probes, ex, nil
}
