package studies

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

// Carlucci2015 names the reproduction of G. Carlucci, L. De Cicco, S. Mascolo, "HTTP over UDP:
// an experimental investigation of QUIC", Proc. ACM SAC 2015, pp. 609-614.
const Carlucci2015 = "carlucci2015"

// carlucciSource is where the paper's loss-free PLTs were published.
const carlucciSource = "Carlucci et al. 2015, section 4 (page load time, loss-free image page) and abstract"

// CarlucciPaper is the paper's loss-free image-page result at 3 Mbit/s, 50 ms RTT, buffer = BDP:
// HTTP/1.1 2.03 s, SPDY 1.45 s, QUIC 1.14 s (means). The paper's QUIC (Chromium 2014, gQUIC) set
// up repeat connections with 0-RTT ("no handshake required"), so its figure stands beside both
// our cold h3 (1-RTT handshake) and our warm h3 (0-RTT) rows.
var CarlucciPaper = []analysis.Reference{
	{Part: "lossless", Page: Carlucci2015, Link: Carlucci2015, Protocol: "h1", Mode: result.Cold, Label: "HTTP/1.1", PaperMs: 2030, Stat: "mean", Source: carlucciSource},
	{Part: "lossless", Page: Carlucci2015, Link: Carlucci2015, Protocol: "h2", Mode: result.Cold, Label: "SPDY", PaperMs: 1450, Stat: "mean", Source: carlucciSource},
	{Part: "lossless", Page: Carlucci2015, Link: Carlucci2015, Protocol: "h3", Mode: result.Cold, Label: "QUIC", PaperMs: 1140, Stat: "mean", Source: carlucciSource},
	{Part: "lossless", Page: Carlucci2015, Link: Carlucci2015, Protocol: "h3", Mode: result.Warm, Label: "QUIC (0-RTT)", PaperMs: 1140, Stat: "mean", Source: carlucciSource},
}

// CarlucciConfig returns the reproduction's experiment: the carlucci2015 page and link, h1, h2
// and h3 cold plus h3 warm, runs loads per arm after one warm-up each, TCP listeners with
// TLS 1.2 and CUBIC as in the 2015 testbed (QUIC always uses TLS 1.3 today).
func CarlucciConfig(runs int) experiment.Config {
	arms := make([]experiment.Arm, len(CarlucciPaper))
	for i, row := range CarlucciPaper {
		arms[i] = experiment.Arm{Protocol: row.Protocol, Mode: row.Mode}
	}
	return experiment.Config{
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
