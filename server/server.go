// Package server serves one generated page set over HTTP/1.1, HTTP/2 and HTTP/3 from one handler.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/pltlab/pltlab/pages"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// ShutdownGrace is how long Close lets requests in flight finish (GOAWAY on h2 and h3) before it
// closes every connection; Close returns within about this long, well under 2 s.
const ShutdownGrace = time.Second

// Server serves a page directory over h1 (TLS, ALPN http/1.1 only), h2 (TLS, ALPN h2 only) and
// h3 (QUIC) and records facts about every connection. Make one with New, then Start it.
type Server struct {
	cfg     config
	log     *slog.Logger
	content *content
	cert    *certificate
	handler http.Handler
	reg     *registry
	altSvc  string // Alt-Svc value for TCP responses, "" without h3
	bulk    []byte // the buffer bulk bodies are written from (newBulkData)

	mu      sync.Mutex // guards info, started
	info    Info
	started bool

	h1, h2 *http.Server
	tr     *quic.Transport
	udp    *net.UDPConn
	qln    *quicListener
	h3     *http3.Server
	wg     sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
	done      chan struct{}
}

// Info are the facts a caller needs to reach a started Server and to label its results.
type Info struct {
	// Host is the TLS/SNI hostname the certificate is made for (default DefaultHost).
	Host string `json:"host"`
	// H2Addr, H1Addr and H3Addr are the "ip:port" actually bound, "" for a protocol that is off.
	// H2 (TCP) and H3 (UDP) share the port number.
	H2Addr string `json:"h2_addr,omitempty"`
	H1Addr string `json:"h1_addr,omitempty"`
	H3Addr string `json:"h3_addr,omitempty"`
	// SPKI is the base64 SHA-256 of the certificate's SubjectPublicKeyInfo (see SPKIPin).
	SPKI string `json:"spki"`
	// TCPCC is the congestion control set on the TCP listeners, e.g. "cubic".
	TCPCC string `json:"tcp_cc"`
	// TLSVersion is the TCP listeners' highest TLS version, "1.2" or "1.3".
	TLSVersion string `json:"tls_version"`
	// QUICCC describes quic-go's congestion controller (QUICCongestionControl).
	QUICCC string `json:"quic_cc"`
	// UDPRcvBuf and UDPSndBuf are the QUIC socket's buffer sizes in bytes as getsockopt reports them
	// (Linux reports twice the size asked for); 0 without h3.
	UDPRcvBuf int `json:"udp_rcvbuf"`
	UDPSndBuf int `json:"udp_sndbuf"`
	// ZeroRTT is true when the QUIC listener accepts 0-RTT.
	ZeroRTT bool `json:"zero_rtt"`
	// Manifest is the served page's manifest.
	Manifest *pages.Manifest `json:"-"`
}

// URL returns "https://HOST:PORT/index.html" on the port serving protocol ("h1", "h2" or "h3"),
// or "" when that protocol is off or unknown.
func (i Info) URL(protocol string) string {
	addr := map[string]string{"h1": i.H1Addr, "h2": i.H2Addr, "h3": i.H3Addr}[protocol]
	_, port, err := net.SplitHostPort(addr)
	if addr == "" || err != nil {
		return ""
	}
	index := pages.IndexPath
	if i.Manifest != nil && i.Manifest.Index != "" {
		index = i.Manifest.Index
	}
	return "https://" + net.JoinHostPort(i.Host, port) + index
}

// New loads the page directory dir (index.html, objects and manifest.json, as pages.Generate
// writes it; "" serves an empty page, for bulk flows only) into memory, checks every object against the manifest and makes a fresh ECDSA P-256
// certificate for the host. It opens no socket; Start does. Invalid options give errors wrapping
// ErrBadOption.
func New(dir string, opts ...Option) (*Server, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	c, err := loadContent(dir)
	if err != nil {
		return nil, err
	}
	cert, err := newCertificate(cfg.host, time.Now())
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.logger, content: c, cert: cert, reg: newRegistry(), bulk: newBulkData(), done: make(chan struct{})}
	s.info = Info{
		Host: cfg.host, SPKI: cert.spki, TCPCC: cfg.tcpCC, TLSVersion: cfg.tlsVersion,
		QUICCC: QUICCongestionControl(), ZeroRTT: cfg.zeroRTT, Manifest: c.manifest,
	}
	s.handler = s.newHandler()
	return s, nil
}

// Start binds every listener and starts serving; it returns once all are accepting. The QUIC
// listener is up before any TCP connection is accepted, so the very first TCP response can
// carry Alt-Svc. When ctx is cancelled the server shuts down as Close does.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("server already started (or closed)")
	}
	s.started = true
	tcp2, h1Ln, err := s.bind()
	if err != nil {
		return err
	}
	if s.h2, err = s.newHTTPServer("h2"); err == nil {
		s.h1, err = s.newHTTPServer("h1")
	}
	if err == nil && s.udp != nil {
		err = s.startQUIC(s.udp)
	}
	if err != nil {
		closeAll(tcp2, h1Ln, s.udp)
		s.h1, s.h2, s.udp = nil, nil, nil
		return err
	}
	if tcp2 == nil {
		s.h2 = nil
	} else {
		s.serveTCP(s.h2, tcp2, "h2")
	}
	if h1Ln == nil {
		s.h1 = nil
	} else {
		s.serveTCP(s.h1, h1Ln, "h1")
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-s.done:
		}
	}()
	return nil
}

// Info returns the server's facts; addresses and buffer sizes are filled by Start.
func (s *Server) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// CloseConnections closes every open h1, h2 and h3 connection (TCP: the socket is closed; QUIC:
// CONNECTION_CLOSE with H3_NO_ERROR) and returns once they are closed, so that the next page
// load has to open new connections. Listeners stay open.
func (s *Server) CloseConnections() error {
	return s.reg.closeAll()
}

// PageConn returns the connection that started serving the page (IndexPath, or "/") most
// recently after since; false if none did.
func (s *Server) PageConn(since time.Time) (ConnInfo, bool) {
	return s.reg.pageConn(since)
}

// Conns returns every connection accepted so far, open or closed, in the order accepted (the
// oldest closed ones are forgotten beyond 10000).
func (s *Server) Conns() []ConnInfo {
	return s.reg.conns()
}

// Stats returns the server's totals, as served at StatsPath.
func (s *Server) Stats() Stats {
	return s.reg.stats()
}

// Close shuts the server down: listeners stop, requests in flight get ShutdownGrace to finish
// (h2 and h3 send GOAWAY), then every connection is closed. It returns within about 2 s; later
// calls return the first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		start := time.Now()
		close(s.done)
		s.closeErr = s.shutdown()
		s.log.Debug("server closed", "took", time.Since(start), "err", s.closeErr)
	})
	return s.closeErr
}

func (s *Server) shutdown() error {
	s.mu.Lock()
	s.started = true // Start after Close fails
	h1, h2 := s.h1, s.h2
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	var (
		wg   sync.WaitGroup
		errs = make([]error, 3)
	)
	for i, srv := range []*http.Server{h1, h2} {
		if srv != nil {
			wg.Go(func() { errs[i] = shutdownHTTP(ctx, srv) })
		}
	}
	wg.Go(func() { errs[2] = s.shutdownQUIC(ctx) })
	wg.Wait()
	s.wg.Wait()
	// net/http does not always close a connection handed to x/net/http2 when Shutdown times
	// out; close whatever is still open so that Close leaves no connection behind.
	return errors.Join(append(errs, s.reg.closeAll())...)
}

// bind opens the listening sockets: TCP for h2 and UDP for h3 on one port number, then TCP for
// h1. With port 0 it retries until a port is free for both TCP and UDP.
func (s *Server) bind() (tcp2, h1 net.Listener, err error) {
	if s.cfg.has("h2") || s.cfg.has("h3") {
		if tcp2, s.udp, err = s.bindShared(); err != nil {
			return nil, nil, err
		}
	}
	if s.cfg.has("h1") {
		if h1, err = s.listenTCP(s.h1Addr()); err != nil {
			closeAll(tcp2, nil, s.udp)
			s.udp = nil
			return nil, nil, err
		}
		s.info.H1Addr = h1.Addr().String()
	}
	if tcp2 != nil {
		s.info.H2Addr = tcp2.Addr().String()
	}
	if s.udp != nil {
		s.info.H3Addr = s.udp.LocalAddr().String()
		_, port, _ := net.SplitHostPort(s.info.H3Addr)
		s.altSvc = `h3=":` + port + `"`
	}
	return tcp2, h1, nil
}

// bindShared binds the h2 TCP listener and the h3 UDP socket on the same port number.
func (s *Server) bindShared() (net.Listener, *net.UDPConn, error) {
	host, port, _ := net.SplitHostPort(s.cfg.addr)
	tries := 1
	if port == "0" {
		tries = 50
	}
	var err error
	for range tries {
		var ln net.Listener
		addr := s.cfg.addr
		if s.cfg.has("h2") {
			if ln, err = s.listenTCP(addr); err != nil {
				return nil, nil, err
			}
			_, p, _ := net.SplitHostPort(ln.Addr().String())
			addr = net.JoinHostPort(host, p)
		}
		if !s.cfg.has("h3") {
			return ln, nil, nil
		}
		var udp *net.UDPConn
		if udp, err = listenUDP(addr); err == nil {
			return ln, udp, nil
		}
		closeAll(ln, nil, nil)
	}
	return nil, nil, err
}

// h1Addr is WithH1Addr's address, else the port after the h2/h3 port (a free one for port 0).
func (s *Server) h1Addr() string {
	if s.cfg.h1Addr != "" {
		return s.cfg.h1Addr
	}
	host, port, _ := net.SplitHostPort(s.cfg.addr)
	if n, err := strconv.Atoi(port); err == nil && n > 0 && n < 65535 {
		return net.JoinHostPort(host, strconv.Itoa(n+1))
	}
	return net.JoinHostPort(host, "0")
}

func listenUDP(addr string) (*net.UDPConn, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("resolve UDP %s: %w", addr, err)
	}
	c, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("listen UDP %s: %w", addr, err)
	}
	return c, nil
}

func closeAll(a, b net.Listener, u *net.UDPConn) {
	for _, l := range []net.Listener{a, b} {
		if l != nil {
			_ = l.Close()
		}
	}
	if u != nil {
		_ = u.Close()
	}
}
