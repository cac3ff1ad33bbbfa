package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/protocol"
)

// Defaults used by New when no option overrides them.
const (
	// DefaultHost is the TLS/SNI hostname the certificate is made for; browsers reach it through
	// --host-resolver-rules, never by a bare IP.
	DefaultHost = "plt.test"
	// DefaultAddr is where HTTP/2 (TCP) and HTTP/3 (UDP) listen: loopback, a free port.
	DefaultAddr = "127.0.0.1:0"
	// DefaultTCPCC is the TCP congestion control set on every TCP listener. It is set explicitly
	// because the system default on the lab machines is bbr, which must never be inherited silently.
	DefaultTCPCC = "cubic"
	// DefaultTLSVersion is the highest TLS version of the TCP listeners ("1.2" or "1.3").
	// QUIC always uses TLS 1.3 (RFC 9001).
	DefaultTLSVersion = "1.3"
)

// DefaultProtocols are the protocols served when WithProtocols is not given: every row of
// protocol.Table (h1: HTTP/1.1 over TLS, h2: HTTP/2 over TLS, h3: HTTP/3 over QUIC).
var DefaultProtocols = protocol.Names()

// KnownTCPCCs are the TCP congestion control algorithms the lab machines offer (see
// /proc/sys/net/ipv4/tcp_available_congestion_control); WithTCPCC accepts any name the kernel has.
var KnownTCPCCs = []string{"cubic", "bbr", "reno"}

// TLSVersions are the values accepted by WithTLSVersion.
var TLSVersions = []string{"1.2", "1.3"}

// ErrBadOption is wrapped by New's errors about invalid option values.
var ErrBadOption = errors.New("bad server option")

// Option configures a Server; pass options to New.
type Option func(*config)

type config struct {
	host        string
	addr        string
	listenAddrs map[string]string // protocol name -> address of its own TCP port (WithListenAddr)
	protocols   []string
	tcpCC       string
	tlsVersion  string
	zeroRTT     bool
	udpBuffers  [2]int // WithUDPBuffers: SO_RCVBUF, SO_SNDBUF set after quic-go's set-up; 0 keeps UDPBufferSize
	logger      *slog.Logger
	keyLog      io.Writer
	qlogDir     func() string
	h3Stack     string   // WithH3Stack: StackQUICGo (after validate) or StackNgtcp2
	quicCC      string   // its congestion controller (after validate, never "")
	bulkCCs     []string // WithNgtcp2BulkCCs: a page-less ngtcp2 server's controllers, sorted
}

func defaultConfig() config {
	return config{
		host:       DefaultHost,
		addr:       DefaultAddr,
		protocols:  slices.Clone(DefaultProtocols),
		tcpCC:      DefaultTCPCC,
		tlsVersion: DefaultTLSVersion,
		logger:     slog.Default(),
	}
}

// WithHost sets the TLS/SNI hostname the certificate is made for (default DefaultHost).
func WithHost(name string) Option { return func(c *config) { c.host = name } }

// WithAddr sets the "host:port" where HTTP/2 listens on TCP and HTTP/3 on UDP, on the same port
// number (default DefaultAddr). Port 0 picks a port that is free for both.
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// WithListenAddr sets the "host:port" of the named TCP protocol's own listener (h1's, or a
// variant's; not the protocol sharing WithAddr's port). By default the i-th such protocol in
// protocol.Table order listens on the port i+1 after WithAddr's port on the same host, or on a
// free port when that port is 0.
func WithListenAddr(name, addr string) Option {
	return func(c *config) {
		if c.listenAddrs == nil {
			c.listenAddrs = map[string]string{}
		}
		c.listenAddrs[name] = addr
	}
}

// WithH1Addr is WithListenAddr("h1", addr), the address of the HTTP/1.1 listener.
func WithH1Addr(addr string) Option { return WithListenAddr("h1", addr) }

// WithProtocols sets which protocol.Table names are served (default DefaultProtocols).
func WithProtocols(protocols ...string) Option {
	return func(c *config) { c.protocols = slices.Clone(protocols) }
}

// WithTCPCC sets the TCP congestion control of the TCP listeners by name (TCP_CONGESTION, e.g.
// "cubic", "bbr", "reno"; default DefaultTCPCC). Start fails if the kernel lacks it.
func WithTCPCC(name string) Option { return func(c *config) { c.tcpCC = name } }

// WithTLSVersion caps the TLS version of the TCP listeners: "1.2" or "1.3" (default). QUIC always
// uses TLS 1.3.
func WithTLSVersion(v string) Option { return func(c *config) { c.tlsVersion = v } }

// With0RTT makes the QUIC listener accept 0-RTT data on resumed connections (quic-go Allow0RTT;
// default false). TLS session resumption is always on, for TCP and QUIC.
func With0RTT(on bool) Option { return func(c *config) { c.zeroRTT = on } }

// WithUDPBuffers sets the QUIC socket's receive and send buffers to rcv and snd bytes (the
// values given to setsockopt, which Linux doubles) once quic-go has set up its listener, in
// place of the UDPBufferSize it raised them to: the buffers a host keeps without raising them
// (e.g. net.core.rmem_default). Info reports the sizes read back.
func WithUDPBuffers(rcv, snd int) Option { return func(c *config) { c.udpBuffers = [2]int{rcv, snd} } }

// WithKeyLog makes every TLS handshake, over TCP and QUIC, write its secrets to w in the NSS key
// log format (SSLKEYLOGFILE; crypto/tls Config.KeyLogWriter), for decrypting captures. w must be
// safe for concurrent use. Default: no key log. Anyone holding the log can decrypt the traffic.
func WithKeyLog(w io.Writer) Option { return func(c *config) { c.keyLog = w } }

// WithQlogDir makes every QUIC connection write a qlog (JSON-SEQ, quic-go's qlog tracer,
// draft-ietf-quic-qlog-quic-events) to the directory dir() returns when the connection starts,
// as QlogFileName(odcid); "" at that moment means no qlog for that connection. Default: none.
func WithQlogDir(dir func() string) Option { return func(c *config) { c.qlogDir = dir } }

// WithLogger sets where the server logs (default slog.Default()); nil discards the logs.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		c.logger = l
	}
}

var hostnameRE = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$`)

// validate checks every option value; errors wrap ErrBadOption and name what is accepted.
func (c *config) validate() error {
	if len(c.host) > 253 || !hostnameRE.MatchString(c.host) {
		return fmt.Errorf("%w: host %q: accepted: a DNS name such as %s", ErrBadOption, c.host, DefaultHost)
	}
	if err := c.validateProtocols(); err != nil {
		return err
	}
	if err := c.validateH3Stack(); err != nil {
		return err
	}
	if len(c.tcpCC) == 0 || len(c.tcpCC) >= 16 || strings.ContainsAny(c.tcpCC, " \t\n/") {
		return fmt.Errorf("%w: TCP congestion control %q: accepted: a kernel algorithm name such as %s",
			ErrBadOption, c.tcpCC, strings.Join(KnownTCPCCs, ", "))
	}
	if !slices.Contains(TLSVersions, c.tlsVersion) {
		return fmt.Errorf("%w: TLS version %q: accepted: %s", ErrBadOption, c.tlsVersion, strings.Join(TLSVersions, ", "))
	}
	addrs := []string{c.addr}
	for name, a := range c.listenAddrs {
		p, err := protocol.Lookup(name)
		if err != nil || p.Transport != protocol.TCP || p.SharedPort {
			return fmt.Errorf("%w: listen address for %q: accepted for a TCP protocol with a port of its own, such as h1", ErrBadOption, name)
		}
		addrs = append(addrs, a)
	}
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("%w: address %q: accepted: HOST:PORT such as 127.0.0.1:8443", ErrBadOption, a)
		}
	}
	return nil
}

func (c *config) validateProtocols() error {
	if len(c.protocols) == 0 {
		return fmt.Errorf("%w: no protocols: accepted: %s", ErrBadOption, strings.Join(DefaultProtocols, ", "))
	}
	quic := 0
	for i, name := range c.protocols {
		p, err := protocol.Lookup(name)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrBadOption, err)
		}
		if slices.Contains(c.protocols[:i], name) {
			return fmt.Errorf("%w: protocol %q given twice", ErrBadOption, name)
		}
		if p.Transport == protocol.QUIC {
			if quic++; quic > 1 {
				return fmt.Errorf("%w: protocol %q: one server serves one QUIC protocol (its UDP port is shared with the page's origin)", ErrBadOption, name)
			}
		}
	}
	return nil
}

// served returns the served protocols in protocol.Table order.
func (c *config) served() []protocol.Protocol {
	var out []protocol.Protocol
	for _, p := range protocol.Table {
		if slices.Contains(c.protocols, p.Name) {
			out = append(out, p)
		}
	}
	return out
}
