// Package flows runs bulk transfers over h1, h2 and h3 through an emulated link and measures
// goodput, link utilization, loss ratio, queueing delay and fairness.
//
// The server side is pltlab's own server (package server, endpoint server.BulkPath: an endless
// incompressible object, the TCP congestion control set per connection). The client side is Go,
// in the link's client namespace: each flow's socket is created there on a locked OS thread
// (shaping.InClient) and keeps that namespace; reading happens on ordinary goroutines. h1 is
// net/http's wire format over TLS with ALPN http/1.1 only, h2 is golang.org/x/net/http2's client
// connection over TLS with ALPN h2, h3 is quic-go's http3 client connection over QUIC v1. Every
// flow's ALPN (and QUIC version) is checked, and its congestion control is what the server
// reports for the connection (h3: quic-go's NewReno, the only controller it has).
//
// Plan and Execute are the one runner of bulk-flow experiments ('pltlab flows' and the studies'
// flow parts): a seeded schedule of mixes and repetitions (Schedule), a self-check of a shaped
// link before the flows, each run's evidence kept through artifacts.Recorder, and records with
// the complete env (hostenv.Local). Run is the layer below: one run of one mix on a link and
// server the caller holds.
package flows

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/server"
)

// Defaults of a Config.
const (
	// DefaultDuration is how long each flow runs when neither Spec nor Config says.
	DefaultDuration = 30 * time.Second
	// DefaultBin is the width of the goodput and queueing-delay series' bins.
	DefaultBin = 100 * time.Millisecond
	// DefaultTCPCC is the congestion control of a TCP flow given without one (CUBIC, RFC 9438).
	DefaultTCPCC = server.DefaultTCPCC
	// Host is the TLS/SNI name of the flows' server.
	Host = server.DefaultHost
)

// Spec is one flow: protocol, congestion control, start offset and length.
type Spec struct {
	// Protocol is a protocol.Table name ("h1", "h2", "h3").
	Protocol string
	// CC is the congestion control: a kernel TCP algorithm for TCP protocols (default
	// DefaultTCPCC), server.QUICCCName for QUIC (the only one quic-go has).
	CC string
	// Start is when the flow starts after the run's start.
	Start time.Duration
	// Duration is how long it runs (0: the Config's Duration).
	Duration time.Duration
}

// CheckCC reports whether this process may run s: for a TCP flow it tries the congestion
// control on a throwaway socket (server.ProbeTCPCC) and returns its one-line refusal; a QUIC
// flow's controller is quic-go's own and always accepted.
func CheckCC(s Spec) error {
	if p, err := protocol.Lookup(s.Protocol); err != nil || p.Transport != protocol.TCP {
		return nil
	}
	return server.ProbeTCPCC(s.CC)
}

// String returns "PROTO:CC".
func (s Spec) String() string { return s.Protocol + ":" + s.CC }

// ParseSpec parses "PROTO[:CC]" (e.g. "h1:cubic", "h2:bbr", "h3"). A TCP protocol's CC
// defaults to DefaultTCPCC; h3's is server.QUICCCName and nothing else is accepted, because
// quic-go v0.65 has no other congestion controller (quic-go issue 776). Errors are one line
// naming the bad value and what is accepted.
func ParseSpec(s string) (Spec, error) {
	name, cc, _ := strings.Cut(strings.TrimSpace(s), ":")
	p, err := protocol.Lookup(name)
	if err != nil {
		return Spec{}, fmt.Errorf("bad flow %q: %w", s, err)
	}
	if p.Transport == protocol.QUIC {
		if cc != "" && cc != server.QUICCCName {
			return Spec{}, fmt.Errorf("bad flow %q: %s runs over quic-go, whose only congestion control is %s (quic-go issue 776): accepted %s or %s:%s",
				s, name, server.QUICCCName, name, name, server.QUICCCName)
		}
		return Spec{Protocol: name, CC: server.QUICCCName}, nil
	}
	if cc == "" {
		cc = DefaultTCPCC
	}
	if avail := AvailableTCPCC(); len(avail) > 0 && !slices.Contains(avail, cc) {
		return Spec{}, fmt.Errorf("bad flow %q: congestion control %q: accepted %s", s, cc, strings.Join(avail, ", "))
	}
	if strings.Trim(cc, "abcdefghijklmnopqrstuvwxyz0123456789_-") != "" || len(cc) >= 16 {
		return Spec{}, fmt.Errorf("bad flow %q: congestion control %q: accepted a kernel algorithm name such as cubic, bbr, reno", s, cc)
	}
	return Spec{Protocol: name, CC: cc}, nil
}

// AvailableTCPCC returns the kernel's TCP congestion control algorithms
// (/proc/sys/net/ipv4/tcp_available_congestion_control), nil when unknown.
func AvailableTCPCC() []string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// Mix returns the run's mix name: the flows' "PROTO:CC" joined by "+".
func Mix(specs []Spec) string {
	parts := make([]string, len(specs))
	for i, s := range specs {
		parts[i] = s.String()
	}
	return strings.Join(parts, "+")
}
