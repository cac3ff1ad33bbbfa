package experiment

import (
	"time"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

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
