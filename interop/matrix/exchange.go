package matrix

import (
	"fmt"
	"strings"

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
	judge  func(w *interop.Wire, files []interop.FileCheck) (interop.Outcome, string)
}

// runs is how many times the client runs (Runs, at least 1).
func (c Exchange) runs() int { return max(c.Runs, 1) }

// ServerFeatures are what a case asks of the server.
type ServerFeatures struct {
	// Retry: validate every client's address with a Retry packet (RFC 9000 section 8.1.2).
	Retry bool
	// ZeroRTT: accept 0-RTT data (RFC 9001 section 4.6.1).
	ZeroRTT bool
	// V2: accept QUIC version 2 (RFC 9369).
	V2 bool
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
)

// HandshakeLossRuns is how many connections handshakeloss makes (the Interop Runner makes 50 of
// 1 kB each): with 30 % loss each way at least one of their some 40 datagrams is dropped but
// for a chance of about 0.7^40, 6e-7.
const HandshakeLossRuns = 5

// Version codepoints on the wire as the capture shows them.
const (
	wireV1 = "0x00000001"
	wireV2 = "0x6b3343cf"
)

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
