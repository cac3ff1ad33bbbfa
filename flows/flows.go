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
// MixExperiment and Execute are the one runner of bulk-flow experiments ('pltlab flows' and the studies'
// flow parts): a seeded schedule of mixes and repetitions (Schedule), a self-check of a shaped
// link before the flows, each run's evidence kept through artifacts.Recorder, and records with
// the complete env (hostenv.Local). Run is the layer below: one run of one mix on a link and
// server the caller holds.
package flows

import (
	"cmp"
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
	// DefaultTCPCC); for QUIC the h3 stack's (server.QUICCCName, the only one quic-go has, or
	// one of server.Ngtcp2CCs), "" meaning the stack's own until ResolveQUIC fills it in.
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

// String returns "PROTO:CC", or "PROTO" for a QUIC flow whose controller is still the stack's.
func (s Spec) String() string {
	if s.CC == "" {
		return s.Protocol
	}
	return s.Protocol + ":" + s.CC
}

// QUICCCs are the QUIC congestion controllers a flow may name: quic-go's only one
// (server.QUICCCName) and ngtcp2's (server.Ngtcp2CCs).
var QUICCCs = append([]string{server.QUICCCName}, server.Ngtcp2CCs...)

// ParseSpec parses "PROTO[:CC]" (e.g. "h1:cubic", "h2:bbr", "h3", "h3:bbr"). A TCP protocol's
// CC defaults to DefaultTCPCC. A QUIC flow's CC is one of QUICCCs, or "" when not given: the h3
// stack's controller, filled in by ResolveQUIC (which also refuses a controller the stack lacks:
// quic-go runs newreno only, quic-go issue 776). Errors are one line naming the bad value and
// what is accepted.
func ParseSpec(s string) (Spec, error) {
	name, cc, _ := strings.Cut(strings.TrimSpace(s), ":")
	p, err := protocol.Lookup(name)
	if err != nil {
		return Spec{}, fmt.Errorf("bad flow %q: %w", s, err)
	}
	if p.Transport == protocol.QUIC {
		if cc != "" && !slices.Contains(QUICCCs, cc) {
			return Spec{}, fmt.Errorf("bad flow %q: QUIC congestion control %q: accepted %s (quic-go), %s (ngtcp2, --h3-stack ngtcp2), or none for the stack's own",
				s, cc, server.QUICCCName, strings.Join(server.Ngtcp2CCs, ", "))
		}
		return Spec{Protocol: name, CC: cc}, nil
	}
	cc = cmp.Or(cc, DefaultTCPCC)
	if avail := AvailableTCPCC(); len(avail) > 0 && !slices.Contains(avail, cc) {
		return Spec{}, fmt.Errorf("bad flow %q: congestion control %q: accepted %s", s, cc, strings.Join(avail, ", "))
	}
	if strings.Trim(cc, "abcdefghijklmnopqrstuvwxyz0123456789_-") != "" || len(cc) >= 16 {
		return Spec{}, fmt.Errorf("bad flow %q: congestion control %q: accepted a kernel algorithm name such as cubic, bbr, reno", s, cc)
	}
	return Spec{Protocol: name, CC: cc}, nil
}

// ResolveQUIC returns mix with every QUIC flow's controller checked against the h3 stack
// (server.StackQUICGo, also "", or server.StackNgtcp2) and a QUIC flow given without one set to
// def, or to the stack's default when def is "" (quic-go: server.QUICCCName; ngtcp2:
// server.DefaultNgtcp2CC). quic-go accepts only server.QUICCCName; ngtcp2 one of
// server.Ngtcp2CCs (its "reno" is RFC 9002's NewReno). TCP flows are returned as given. The
// error is one line naming the flow, the stack and what is accepted.
func ResolveQUIC(mix []Spec, stack, def string) ([]Spec, error) {
	out := slices.Clone(mix)
	for i, s := range out {
		if p, err := protocol.Lookup(s.Protocol); err != nil || p.Transport != protocol.QUIC {
			continue
		}
		cc := cmp.Or(s.CC, def)
		if err := server.CheckH3Stack(stack, cc); err != nil {
			return nil, fmt.Errorf("flow %s: %w", s, err)
		}
		if cc == "" {
			if stack == server.StackNgtcp2 {
				cc = server.DefaultNgtcp2CC
			} else {
				cc = server.QUICCCName
			}
		}
		out[i].CC = cc
	}
	return out, nil
}

// QUICCCsOf returns the distinct controllers of the QUIC flows of mixes, sorted (after
// ResolveQUIC): the ones a page-less ngtcp2 server must run (server.WithNgtcp2BulkCCs).
func QUICCCsOf(mixes ...[]Spec) []string {
	var ccs []string
	for _, mix := range mixes {
		for _, s := range mix {
			if p, err := protocol.Lookup(s.Protocol); err == nil && p.Transport == protocol.QUIC && s.CC != "" {
				ccs = append(ccs, s.CC)
			}
		}
	}
	slices.Sort(ccs)
	return slices.Compact(ccs)
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
