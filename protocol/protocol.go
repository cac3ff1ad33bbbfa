// Package protocol is the one table of the HTTP protocols pltlab measures: each protocol's name,
// ALPN, transport, how Chromium is forced onto it and how a load is verified.
//
// Every other package (server, browser, experiment, flows, the CLI and the analysis) takes its
// protocol facts from here, so that adding a variant, such as HTTP/2 over TLS 1.3 only, is one
// entry in Table (docs/extending.md has the worked example). The package imports nothing of ours.
package protocol

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Transport is the transport a protocol runs over.
type Transport int

// Transports.
const (
	// TCP is TLS over TCP (RFC 8446 / RFC 5246 over RFC 9293).
	TCP Transport = iota
	// QUIC is QUIC version 1 (RFC 9000), always with TLS 1.3 (RFC 9001).
	QUIC
)

// String returns "tcp" or "quic".
func (t Transport) String() string {
	if t == QUIC {
		return "quic"
	}
	return "tcp"
}

// Version is the HTTP version a protocol speaks, named as records name an observed protocol
// (result.Record.ObservedProtocol): "h1" (HTTP/1.1, RFC 9112), "h2" (HTTP/2, RFC 9113) or
// "h3" (HTTP/3, RFC 9114).
type Version string

// HTTP versions.
const (
	HTTP1 Version = "h1"
	HTTP2 Version = "h2"
	HTTP3 Version = "h3"
)

// OriginPlaceholder stands for the server's HOST:PORT in Protocol.Chromium switches.
const OriginPlaceholder = "{origin}"

// Protocol is one measurable protocol: a row of Table.
type Protocol struct {
	// Name is the protocol's name in flags, matrices and records ("h1"); lower case, no commas.
	Name string
	// Label is the name people read ("HTTP/1.1").
	Label string
	// Version is the HTTP version spoken; a load is verified against it.
	Version Version
	// Transport is TCP (TLS over TCP) or QUIC.
	Transport Transport
	// ALPN is the one ALPN protocol ID (RFC 7301 registry) the server offers on this protocol's
	// listener, so a client cannot fall back to another version.
	ALPN string
	// NextHop is the Resource Timing nextHopProtocol value (the ALPN ID as Chromium reports it)
	// that every resource of a valid load must show (W3C Resource Timing, nextHopProtocol).
	NextHop string
	// Chromium are the switches that force Chromium onto the protocol; OriginPlaceholder is
	// replaced by HOST:PORT. Verified on Chromium 156 (docs/design.md, "Forcing a protocol").
	Chromium []string
	// TLSVersion pins the TCP listener's TLS version ("1.2" or "1.3"); "" follows the server's
	// configured version. QUIC is always TLS 1.3 (RFC 9001).
	TLSVersion string
	// SharedPort is true for the protocol whose TCP listener shares its port number with the QUIC
	// listener (so Alt-Svc names the same port as the page's origin); at most one TCP protocol has it.
	SharedPort bool
}

// QUICOrigin is true when Chromium must be told the server's port to force QUIC on it.
func (p Protocol) QUICOrigin() bool { return p.Transport == QUIC }

// ChromiumFlagsFor returns p.Chromium with OriginPlaceholder replaced by the origins of hosts on
// port, comma-separated ("a.test:443,b.test:443": the list --origin-to-force-quic-on takes), so
// that one browser reaches every site of one server over the protocol.
func (p Protocol) ChromiumFlagsFor(hosts []string, port int) []string {
	origins := make([]string, len(hosts))
	for i, h := range hosts {
		origins[i] = h + ":" + strconv.Itoa(port)
	}
	return p.ChromiumFlagsForOrigins(origins)
}

// ChromiumFlagsForOrigins is ChromiumFlagsFor with each origin's "host:port" given, for sites
// whose servers listen on ports of their own: OriginPlaceholder becomes the origins joined by
// commas.
func (p Protocol) ChromiumFlagsForOrigins(origins []string) []string {
	origin := strings.Join(origins, ",")
	out := make([]string, len(p.Chromium))
	for i, f := range p.Chromium {
		out[i] = strings.ReplaceAll(f, OriginPlaceholder, origin)
	}
	return out
}

// Validate checks that p is a usable table row: a name of lower-case letters, digits and '-',
// a known version and transport, an ALPN ID and a NextHop, QUIC only with HTTP/3, and a TLS
// version of "", "1.2" or "1.3" (only "" or "1.3" on QUIC).
func (p Protocol) Validate() error {
	if p.Name == "" || strings.Trim(p.Name, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		return fmt.Errorf("protocol %q: a name of a-z, 0-9 and '-' is needed", p.Name)
	}
	if !slices.Contains([]Version{HTTP1, HTTP2, HTTP3}, p.Version) {
		return fmt.Errorf("protocol %s: bad version %q: accepted h1, h2, h3", p.Name, p.Version)
	}
	if (p.Version == HTTP3) != (p.Transport == QUIC) {
		return fmt.Errorf("protocol %s: HTTP/3 runs over QUIC and only HTTP/3 does", p.Name)
	}
	if p.ALPN == "" || p.NextHop == "" {
		return fmt.Errorf("protocol %s: ALPN and NextHop are needed", p.Name)
	}
	switch {
	case p.TLSVersion != "" && p.TLSVersion != "1.2" && p.TLSVersion != "1.3":
		return fmt.Errorf("protocol %s: bad TLS version %q: accepted \"\", 1.2, 1.3", p.Name, p.TLSVersion)
	case p.Transport == QUIC && p.TLSVersion == "1.2":
		return fmt.Errorf("protocol %s: QUIC always uses TLS 1.3 (RFC 9001)", p.Name)
	}
	return nil
}

// Table is every protocol pltlab measures, in canonical order (reports and schedules follow it).
// The switches are those verified on Chromium 156: h1 needs HTTP/2 and QUIC off AND an
// h1-only ALPN on the server; h2 needs QUIC off; h3 is forced per origin.
var Table = []Protocol{
	{
		Name: "h1", Label: "HTTP/1.1", Version: HTTP1, Transport: TCP, ALPN: "http/1.1", NextHop: "http/1.1",
		Chromium: []string{"--disable-http2", "--disable-quic"},
	},
	{
		Name: "h2", Label: "HTTP/2", Version: HTTP2, Transport: TCP, ALPN: "h2", NextHop: "h2",
		Chromium: []string{"--disable-quic"}, SharedPort: true,
	},
	{
		Name: "h3", Label: "HTTP/3", Version: HTTP3, Transport: QUIC, ALPN: "h3", NextHop: "h3",
		Chromium: []string{"--origin-to-force-quic-on=" + OriginPlaceholder},
	},
}

// ErrUnknown is wrapped by Lookup's and ParseList's errors.
var ErrUnknown = errors.New("unknown protocol")

// Names returns the names of Table in order: "h1", "h2", "h3".
func Names() []string {
	out := make([]string, len(Table))
	for i, p := range Table {
		out[i] = p.Name
	}
	return out
}

// Lookup returns the row of Table named name. An unknown name gives a one-line error naming it
// and what is accepted, wrapping ErrUnknown.
func Lookup(name string) (Protocol, error) {
	for _, p := range Table {
		if p.Name == name {
			return p, nil
		}
	}
	return Protocol{}, fmt.Errorf("%w %q: accepted %s", ErrUnknown, name, strings.Join(Names(), ", "))
}

// Known reports whether name is a row of Table.
func Known(name string) bool {
	_, err := Lookup(name)
	return err == nil
}

// MustLookup is Lookup for names known at compile time; it panics on an unknown name.
func MustLookup(name string) Protocol {
	p, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return p
}

// Index returns name's position in Table, or len(Table) for an unknown name (so unknown names
// sort last).
func Index(name string) int {
	for i, p := range Table {
		if p.Name == name {
			return i
		}
	}
	return len(Table)
}

// ParseList parses a comma-separated list such as "h1,h3" into names, refusing unknown and
// repeated names and an empty list with one-line errors.
func ParseList(s string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if _, err := Lookup(n); err != nil {
			return nil, err
		}
		if slices.Contains(out, n) {
			return nil, fmt.Errorf("protocol %q given twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// Observed maps a Resource Timing nextHopProtocol (an ALPN ID as the browser reports it) to the
// Version records use: "http/1.1" -> "h1", "h2" -> "h2", "h3" -> "h3". Anything else, such as
// "h3-29", "hq" or "http/2+quic/46", is returned unchanged (it is NOT h3); "" stays "" (unknown).
func Observed(nextHop string) string {
	p := strings.TrimSpace(nextHop)
	for _, r := range Table {
		if strings.EqualFold(p, r.NextHop) {
			return string(r.Version)
		}
	}
	return p
}
