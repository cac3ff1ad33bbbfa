package experiment

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

// Carlucci2015 names the reproduction of G. Carlucci, L. De Cicco, S. Mascolo, "HTTP over UDP:
// an experimental investigation of QUIC", Proc. ACM SAC 2015, pp. 609-614.
const Carlucci2015 = "carlucci2015"

// PaperRow is one protocol's result as published.
type PaperRow struct {
	// Arm is the arm of ours it is compared with.
	Arm Arm
	// Label names the protocol as the paper did, e.g. "SPDY".
	Label string
	// PLT is the paper's page-load time.
	PLT time.Duration
}

// CarlucciPaper is the paper's loss-free image-page result at 3 Mbit/s, 50 ms RTT, buffer = BDP:
// HTTP/1.1 2.03 s, SPDY 1.45 s, QUIC 1.14 s. The paper's QUIC (Chromium 2014, gQUIC) set up
// repeat connections with 0-RTT ("no handshake required"), so its figure stands beside both our
// cold h3 (1-RTT handshake) and our warm h3 (0-RTT) rows.
var CarlucciPaper = []PaperRow{
	{Arm: Arm{"h1", result.Cold}, Label: "HTTP/1.1", PLT: 2030 * time.Millisecond},
	{Arm: Arm{"h2", result.Cold}, Label: "SPDY", PLT: 1450 * time.Millisecond},
	{Arm: Arm{"h3", result.Cold}, Label: "QUIC", PLT: 1140 * time.Millisecond},
	{Arm: Arm{"h3", result.Warm}, Label: "QUIC (0-RTT)", PLT: 1140 * time.Millisecond},
}

// CarlucciConfig returns the reproduction's experiment: the carlucci2015 page and link, h1, h2
// and h3 cold plus h3 warm, runs loads per arm after one warm-up each, TCP listeners with
// TLS 1.2 and CUBIC as in the 2015 testbed (QUIC always uses TLS 1.3 today).
func CarlucciConfig(runs int) Config {
	arms := make([]Arm, len(CarlucciPaper))
	for i, row := range CarlucciPaper {
		arms[i] = row.Arm
	}
	return Config{
		Name:    Carlucci2015,
		Pages:   []string{Carlucci2015},
		Links:   []string{Carlucci2015},
		Arms:    arms,
		Runs:    runs,
		Warmup:  1,
		Timeout: 30 * time.Second,
		TCPCC:   "cubic",
		TLS:     "1.2",
	}
}

// MinRoundTrips is the least number of round trips a cold or warm load of an HTML page and its
// images needs over a protocol before the last byte can arrive, ignoring serialization:
//   - TCP (h1, h2): 1 (TCP handshake) + 1 (TLS) + 1 (HTML request) + 1 (image requests, sent
//     once the HTML arrives) = 4, whatever the TLS version and mode. TLS 1.3 (RFC 8446 section 2)
//     needs one round trip before the client sends its request with its Finished. A full TLS 1.2
//     handshake (RFC 5246 section 7.3) takes two, but Chromium uses TLS False Start (RFC 7918)
//     with the forward-secret AEAD suites and ALPN our server negotiates: it sends the request
//     with its Finished, without waiting for the server's, so the second handshake round trip
//     carries the request (measured here: TTFB of a 2 KB page at 100 ms RTT 286-303 ms with
//     TLS 1.2, 311-330 ms with TLS 1.3, i.e. 3 round trips for both). A resumed TLS 1.2
//     handshake (warm) is one round trip too.
//   - h3 cold: 1 (QUIC + TLS 1.3 handshake, RFC 9000 section 7) + 1 (HTML) + 1 (images);
//     h3 warm with 0-RTT: the HTML request rides in the first flight (RFC 9001 section 4.6.1), so
//     1 (HTML) + 1 (images).
//
// Any QUIC row of protocol.Table counts as h3, any other as TCP.
//
// HTTP/1.1 opens up to six connections whose handshakes in practice add round trips; the bound
// assumes they were ready in time, so it is a true lower bound, not a prediction. tls is kept
// for callers: with False Start it no longer changes the bound.
func MinRoundTrips(a Arm, tls string) int {
	if p, err := protocol.Lookup(a.Protocol); err == nil && p.Transport == protocol.QUIC {
		if a.Mode == result.Warm {
			return 2
		}
		return 3
	}
	return 1 + 1 + 2 // TCP + TLS (1.3, or 1.2 with False Start, or resumed) + HTML + images
}

// IdealPLT is the lower bound of a load's PLT: the page's bytes serialized at the bottleneck rate
// plus the protocol's minimal round trips (MinRoundTrips) at the base RTT. bytes in bytes,
// rateBps in bit/s; it ignores headers and packet overhead, so real loads must take longer.
func IdealPLT(bytes int64, rateBps int64, rtt time.Duration, roundTrips int) time.Duration {
	if rateBps <= 0 {
		return time.Duration(roundTrips) * rtt
	}
	ser := time.Duration(float64(bytes*8) / float64(rateBps) * float64(time.Second))
	return ser + time.Duration(roundTrips)*rtt
}

// CarlucciDifferences lists what differs between the 2015 testbed and the reproduction whose
// records are recs, each a way the numbers could move. It is printed in the reproduction's
// report.md. Facts about today's side (QUIC stack and congestion control, browser, TLS version,
// TCP congestion control, machine) are taken from what the records say, never typed in; a fact
// no record carries is said to be unrecorded.
func CarlucciDifferences(recs []*result.Record) []string {
	f := RecordedFacts(recs)
	return []string{
		"QUIC: 2015 used Google QUIC with its own crypto handshake, whose repeat connections needed no handshake (0-RTT); " +
			"today's QUIC is IETF QUIC v1 (RFC 9000) with TLS 1.3 (RFC 9001): 1-RTT on a cold connection, 0-RTT only when resuming. " +
			"Our h3 cold row therefore pays one more round trip than the paper's QUIC; the h3 warm row is the like-for-like one.",
		"QUIC congestion control (recorded): " + f.QUICCC + "; 2015 gQUIC used CUBIC with an initial window of 10 to 32 packets. " +
			"TCP congestion control (recorded): " + f.TCPCC + ", with the Linux initial window of 10 segments.",
		"SPDY/3.1 versus HTTP/2 (RFC 9113): HPACK instead of zlib header compression and a different prioritization; both multiplex on one TCP connection.",
		"TLS over TCP (recorded): " + f.TLS + "; 2015 used TLS 1.2. A full TLS 1.2 handshake takes 2 round trips, but Chromium's TLS False Start (RFC 7918) sends the request after the first, so it delays the first request by one round trip, as TLS 1.3 does.",
		"Browser (recorded): " + f.Browser + " versus Chromium of 2014/2015 (about version 40); both open up to six HTTP/1.1 connections per host, " +
			"but request scheduling, preconnect and image decoding have changed.",
		"Servers: 2015 used separate production-style servers per protocol; here one Go handler serves all three " +
			"(Go net/http for HTTP/1.1 and HTTP/2, quic-go http3).",
		"Link: the paper shaped a 3 Mbit/s, 50 ms RTT bottleneck with a droptail buffer of one BDP; pltlab emulates the same in user space " +
			"(TUN devices, like Mahimahi) and checks the link before measuring. Machine (recorded): " + f.Machine + ".",
		"Page: the paper does not publish its page's composition; the carlucci2015 preset is 30 JPEG images of 10 KB (300 KB), chosen from the paper's PLTs (see `pltlab pages --list`).",
		"PLT: here loadEventEnd - startTime of Navigation Timing in the browser; every load is verified (protocol of every resource, bytes of every object).",
	}
}

// Facts are what the records of a run say about its testbed, each a "; "-separated list of the
// distinct values recorded (or "not recorded"), for the testbed differences of a reproduction.
type Facts struct {
	// QUICCC and TCPCC are the congestion controllers of the QUIC and TCP connections that
	// carried pages (record field cc, or tcp_cc in older records).
	QUICCC, TCPCC string
	// TLS is the TLS version of the TCP connections.
	TLS string
	// Browser is the browser product/version.
	Browser string
	// Machine describes the machine from the records' env (CPUs, kernel, QUIC stack version).
	Machine string
}

// RecordedFacts collects the distinct testbed facts of the page-load records in recs.
func RecordedFacts(recs []*result.Record) Facts {
	var quicCC, tcpCC, tlsv, browsers, machines []string
	add := func(list *[]string, v string) {
		if v != "" && !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, r := range recs {
		if r.Kind != "" && r.Kind != result.KindLoad {
			continue
		}
		cc := cmp.Or(r.CC, r.TCPCC)
		if p, err := protocol.Lookup(r.Protocol); err == nil && p.Transport == protocol.QUIC {
			add(&quicCC, cc)
		} else if err == nil {
			add(&tcpCC, cc)
			add(&tlsv, r.TLSVersion)
		}
		add(&browsers, r.Browser)
		if e := r.Env; e != nil {
			add(&machines, fmt.Sprintf("client, server and emulator share one machine with %d logical CPUs (kernel %s, %s)", e.CPUs, cmp.Or(e.Kernel, "unknown"), cmp.Or(e.QUIC, "QUIC stack version unknown")))
		}
	}
	list := func(v []string) string {
		if len(v) == 0 {
			return "not recorded"
		}
		return strings.Join(v, "; ")
	}
	return Facts{QUICCC: list(quicCC), TCPCC: list(tcpCC), TLS: list(tlsv), Browser: list(browsers), Machine: list(machines)}
}
