// Package interop judges QUIC servers from what they put on the wire: a raw probe client of
// its own (Initial keys per RFC 9001 section 5, a ClientHello from crypto/tls's QUIC API)
// sends chosen packets and records every datagram each way as the evidence of a typed outcome.
package interop

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Outcome is a case's verdict.
type Outcome string

// The outcomes of a case: the server did what the RFC asks (pass) or did not (fail), the case
// does not apply to it (unsupported), or the probe could not tell (error: no evidence either
// way, e.g. the server answered nothing, not even a valid Initial).
const (
	Pass        Outcome = "pass"
	Fail        Outcome = "fail"
	Unsupported Outcome = "unsupported"
	Error       Outcome = "error"
)

// Target is the server a probe talks to.
type Target struct {
	// Addr is the server's UDP "host:port".
	Addr string
	// ServerName is the TLS SNI of the ClientHello.
	ServerName string
	// ALPN are the application protocols offered (default DefaultALPN).
	ALPN []string
	// Quiet is how long a silence must last before "no answer" is concluded (default
	// DefaultQuiet).
	Quiet time.Duration
	// Window is how long the amplification probe watches the server's answer to its one
	// Initial, and how long ack-only and flow-control give the handshake and the server's
	// answer (default DefaultWindow).
	Window time.Duration
	// Path is the HTTP/3 request path (with any query) of a resource the server serves that is
	// larger than FlowLimits.StreamDataBidiLocal, for flow-control ("": that case is
	// unsupported; package interop/matrix sets it per server stack).
	Path string
}

// Defaults of Target.
const (
	// DefaultQuiet is 1 s: about the first probe timeout of a server without an RTT sample,
	// 333 ms + 4 x 166.5 ms (RFC 9002 sections 6.2.1 and 6.2.2), though servers answer a
	// first Initial at once.
	DefaultQuiet = time.Second
	// DefaultWindow is 4 s: room for the first flight and the PTO retransmissions at about
	// 1 s and 3 s after it of a server without an RTT sample (the PTO doubles each time, RFC
	// 9002 section 6.2.1); every byte of them counts towards the limit (RFC 9002 section
	// 6.2.2.1).
	DefaultWindow = 4 * time.Second
)

// DefaultALPN offers HTTP/3 (RFC 9114 section 3.1).
var DefaultALPN = []string{"h3"}

func (t Target) withDefaults() Target {
	if t.Quiet <= 0 {
		t.Quiet = DefaultQuiet
	}
	if t.Window <= 0 {
		t.Window = DefaultWindow
	}
	if len(t.ALPN) == 0 {
		t.ALPN = DefaultALPN
	}
	return t
}

// Datagram is one UDP datagram of an Observation, as the probe sent or received it.
type Datagram struct {
	// Dir is "sent" or "received".
	Dir string `json:"dir"`
	// AtMS is when, in milliseconds since the probe's socket opened.
	AtMS float64 `json:"at_ms"`
	// Size is the UDP payload's size in bytes.
	Size    int          `json:"size"`
	Packets []PacketInfo `json:"packets"`
}

// PacketInfo is one QUIC packet of a datagram: its header and, where the probe has the keys,
// its packet number and frames.
type PacketInfo struct {
	Type     PacketType `json:"type"`
	Version  string     `json:"version,omitempty"`
	Size     int        `json:"size"`
	PN       *uint64    `json:"pn,omitempty"`
	Frames   []string   `json:"frames,omitempty"`
	Versions []string   `json:"versions,omitempty"` // Version Negotiation: the versions listed
	Note     string     `json:"note,omitempty"`     // why it was not decrypted or parsed
}

// Observation is what a case saw on the wire: every datagram each way, their byte totals, and
// the facts a case's verdict rests on.
type Observation struct {
	Datagrams     []Datagram `json:"datagrams"`
	BytesSent     int        `json:"bytes_sent"`
	BytesReceived int        `json:"bytes_received"`
	// ServerHello is true when TLS accepted a ServerHello from the server's Initial packets
	// and CipherSuite names the suite it chose; TLSError is TLS's complaint otherwise.
	ServerHello bool   `json:"server_hello,omitempty"`
	CipherSuite string `json:"cipher_suite,omitempty"`
	TLSError    string `json:"tls_error,omitempty"`
	// VersionsListed are a Version Negotiation packet's versions (version-negotiation).
	VersionsListed []string `json:"versions_listed,omitempty"`
	// ControlAnswered is whether a case's control was answered: initial-under-1200's, the
	// valid Initial sent in 1200 bytes on new connection IDs after the undersized one (RFC 9000
	// section 14.1); ack-only's, a PING after its ACK-only packets, acknowledged (section
	// 13.2.1). Without that answer the silence before it proves nothing.
	ControlAnswered *bool `json:"control_answered,omitempty"`
	// Connected is true when the probe completed a handshake: TLS accepted the server's
	// Finished and the server sent HANDSHAKE_DONE (RFC 9001 section 4.1.2; ack-only,
	// flow-control).
	Connected bool `json:"connected,omitempty"`
	// ACKOnlySent are the packet numbers of ack-only's ACK-only 1-RTT packets, and ACKOnlyReplies
	// those of the server's packets of only ACK (and PADDING) frames that acknowledge one of them
	// (RFC 9000 section 13.2.1: each is a non-ack-eliciting packet sent in response to one).
	ACKOnlySent    []uint64 `json:"ack_only_sent,omitempty"`
	ACKOnlyReplies []uint64 `json:"ack_only_replies,omitempty"`
	// Flow is flow-control's account of the server's STREAM data (RFC 9000 section 4.1).
	Flow *FlowObservation `json:"flow,omitempty"`
	// ResetToken is the last 16 bytes of a Stateless Reset, its Stateless Reset Token
	// (stateless-reset, RFC 9000 section 10.3).
	ResetToken string `json:"reset_token,omitempty"`
	// LimitBytes is 3 x the bytes the probe sent before address validation and Ratio the bytes
	// received over the bytes sent (amplification-limit, RFC 9000 section 8.1).
	LimitBytes int     `json:"limit_bytes,omitempty"`
	Ratio      float64 `json:"ratio,omitempty"`
	// EachUnderLimit is true when every datagram the server sent left while the bytes it had
	// sent before it were under LimitBytes: a server that checks the limit before each packet
	// rather than at the packet's end (quic-go's choice since its pull request 2862, "allow an
	// amplification factor of 3.x") overshoots by less than one datagram and shows this.
	EachUnderLimit bool `json:"each_under_limit,omitempty"`
	// Wire is an exchange case's decrypted capture (nil for a probe) and Files the files its
	// client fetched.
	Wire  *Wire       `json:"wire,omitempty"`
	Files []FileCheck `json:"files,omitempty"`
	// Goodput is a measurement case's figure (the exchange case goodput); nil for the others.
	Goodput *Goodput `json:"goodput,omitempty"`
}

// Result is one case's outcome against one server, with what it observed.
type Result struct {
	Case     string        `json:"case"`
	Outcome  Outcome       `json:"outcome"`
	Reason   string        `json:"reason"`
	Observed Observation   `json:"evidence"`
	Start    time.Time     `json:"-"`
	Duration time.Duration `json:"-"`
}

// Case is one server-behaviour probe.
type Case struct {
	// Name is the case's name on the command line and in records.
	Name string
	// Rule is the RFC rule it checks, with its section.
	Rule string
	run  func(ctx context.Context, t Target, ev *Observation) (Outcome, string, error)
}

// Cases are the probes, in the order they run.
var Cases = []Case{
	{Name: "version-negotiation", Rule: "RFC 9000 sections 6.1 and 17.2.1: a packet of an unsupported version in a datagram of 1200 bytes or more gets a Version Negotiation packet that echoes the connection IDs and lists the versions the server supports (not the one offered)", run: probeVersionNegotiation},
	{Name: "initial-under-1200", Rule: "RFC 9000 section 14.1: a server discards an Initial in a UDP datagram under 1200 bytes (a valid Initial on new IDs is then answered, as the control)", run: probeSmallInitial},
	{Name: "amplification-limit", Rule: "RFC 9000 section 8.1: before validating the client's address a server sends at most 3 times the bytes it received (the probe sends one 1200-byte Initial and never acknowledges)", run: probeAmplification},
	{Name: "stateless-reset", Rule: "RFC 9000 sections 10.3 and 10.3.3: a server MAY answer a short-header packet of a connection it does not know with a Stateless Reset; one it sends looks like a short header, is at least 21 bytes and smaller than the packet that triggered it", run: probeStatelessReset},
	{Name: "ack-only", Rule: ACKOnlyRule, run: probeACKOnly},
	{Name: "flow-control", Rule: FlowRule, run: probeFlowControl},
}

// CaseNames lists the names of Cases.
func CaseNames() []string {
	var n []string
	for _, c := range Cases {
		n = append(n, c.Name)
	}
	return n
}

// ParseCases turns a comma-separated list of case names ("" or "all": every case) into Cases,
// in the order given; an unknown or repeated name is an error naming the accepted ones.
func ParseCases(list string) ([]Case, error) {
	if list == "" || list == "all" {
		return Cases, nil
	}
	var out []Case
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		c, ok := lookup(name)
		if !ok {
			return nil, fmt.Errorf("unknown case %q; accepted: all, %s", name, strings.Join(CaseNames(), ", "))
		}
		if seen[name] {
			return nil, fmt.Errorf("case %q given twice", name)
		}
		seen[name] = true
		out = append(out, c)
	}
	return out, nil
}

func lookup(name string) (Case, bool) {
	for _, c := range Cases {
		if c.Name == name {
			return c, true
		}
	}
	return Case{}, false
}

// Run runs case c against t. A probe that cannot run at all (no socket, no ClientHello)
// gives the outcome Error with the reason; it never returns a verdict without evidence.
func Run(ctx context.Context, c Case, t Target) Result {
	r := Result{Case: c.Name, Start: time.Now()}
	out, reason, err := c.run(ctx, t.withDefaults(), &r.Observed)
	r.Duration = time.Since(r.Start)
	if err != nil {
		out, reason = Error, err.Error()
	}
	r.Outcome, r.Reason = out, reason
	return r
}
