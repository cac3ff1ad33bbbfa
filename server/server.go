// Package server serves one generated page set over HTTP/1.1, HTTP/2 and HTTP/3 from one handler.
package server

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/protocol"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// ShutdownGrace is how long Close lets requests in flight finish (GOAWAY on h2 and h3) before it
// closes every connection; Close returns within about this long, well under 2 s.
const ShutdownGrace = time.Second

// Server serves a page directory over the protocols of protocol.Table it is given (by default
// h1: TLS, ALPN http/1.1 only; h2: TLS, ALPN h2 only; h3: QUIC), one listener per protocol, and
// records facts about every connection. Make one with New, then Start it.
type Server struct {
	cfg     config
	log     *slog.Logger
	sites   map[string]*content // by hostname (lower case); see contentFor
	def     *content            // the first site's (the only one of New)
	multi   bool                // NewSites with several sites: the Host header picks the site
	cert    *certificate
	handler http.Handler
	reg     *registry
	altSvc  string // Alt-Svc value for TCP responses, "" without h3
	bulk    []byte // the buffer bulk bodies are written from (newBulkData)
	replay  replayLog

	mu      sync.Mutex // guards info, started
	info    Info
	started bool

	tcp   []*tcpServer // one per served TCP protocol, in protocol.Table order
	quicP protocol.Protocol
	tr    *quic.Transport
	udp   *net.UDPConn
	qln   *quicListener
	h3    *http3.Server
	ng    *ngtcp2Stack // the ngtcp2 processes serving h3 (WithH3Stack StackNgtcp2), else nil
	wg    sync.WaitGroup

	closeOnce sync.Once
	closeErr  error
	done      chan struct{}
}

// Info are the facts a caller needs to reach a started Server and to label its results.
type Info struct {
	// Host is the TLS/SNI hostname the certificate is made for (default DefaultHost).
	Host string `json:"host"`
	// Addrs maps each served protocol's name (protocol.Table) to the "ip:port" it listens on.
	// The TCP protocol marked SharedPort (h2) and the QUIC protocol (h3) share the port number.
	Addrs map[string]string `json:"addrs"`
	// SPKI is the base64 SHA-256 of the certificate's SubjectPublicKeyInfo (see SPKIPin).
	SPKI string `json:"spki"`
	// TCPCC is the congestion control set on the TCP listeners, e.g. "cubic".
	TCPCC string `json:"tcp_cc"`
	// TLSVersion is the TCP listeners' highest TLS version, "1.2" or "1.3".
	TLSVersion string `json:"tls_version"`
	// QUICCC describes the h3 stack's congestion controller: quic-go's
	// (QUICCongestionControl), or "ngtcp2 VERSION CC" with CC read back from the running
	// gtlsserver (Ngtcp2CCs).
	QUICCC string `json:"quic_cc"`
	// H3Stack is the stack that answers h3: StackQUICGo or StackNgtcp2.
	H3Stack string `json:"h3_stack"`
	// QUICStack names the h3 stack and its version as read from what runs: "quic-go v0.65.0"
	// (the build information) or "ngtcp2 0.12.1+dfsg-1+deb12u1 (libngtcp2.so.9.0.1, ...)" (the
	// libraries the running gtlsserver mapped, and the Debian package that installed them).
	QUICStack string `json:"quic_stack"`
	// UDPRcvBuf and UDPSndBuf are the QUIC socket's buffer sizes in bytes as getsockopt reports them
	// (Linux reports twice the size asked for); 0 without h3.
	UDPRcvBuf int `json:"udp_rcvbuf"`
	UDPSndBuf int `json:"udp_sndbuf"`
	// ZeroRTT is true when the QUIC listener accepts 0-RTT.
	ZeroRTT bool `json:"zero_rtt"`
	// Manifest is the served page's manifest (the first site's, NewSites).
	Manifest *pages.Manifest `json:"-"`
	// BulkH3 maps a congestion controller to the "ip:port" of the gtlsserver running it, on a
	// page-less server of the ngtcp2 stack (WithNgtcp2BulkCCs; the first also in Addrs["h3"]).
	// The controllers are read back from the running processes. Nil otherwise.
	BulkH3 map[string]string `json:"bulk_h3,omitempty"`
	// Sites are the sites served, in the order given (one for New), each with its host and
	// manifest.
	Sites []SiteInfo `json:"sites,omitempty"`
}

// SiteInfo is one site of a server: its hostname and its page's manifest.
type SiteInfo struct {
	// Host is the site's hostname, on the server's certificate.
	Host string `json:"host"`
	// Manifest is its page's manifest.
	Manifest *pages.Manifest `json:"-"`
	// Origins are the hostnames of the page's other origins (pages.Manifest.OriginHosts), served
	// by this server too and named on its certificate; a browser reaches them at the server's
	// port (browser.WithOriginHosts).
	Origins []string `json:"origins,omitempty"`
	// Addrs maps a protocol name to the "ip:port" serving it for this site when that is not the
	// server's (Info.Addrs): with the ngtcp2 stack every site but the first has an h3 server of
	// its own. Nil when every protocol is on the server's address.
	Addrs map[string]string `json:"addrs,omitempty"`
}

// SiteURL returns "https://HOST:PORT/index.html" of site host on the port serving the named
// protocol, or "" when that protocol is off or host is not a site of the server.
func (i Info) SiteURL(host, name string) string {
	for _, st := range i.Sites {
		if st.Host == host {
			j := i
			j.Host, j.Manifest = host, st.Manifest
			if a, ok := st.Addrs[name]; ok {
				j.Addrs = map[string]string{name: a}
			}
			return j.URL(name)
		}
	}
	return ""
}

// Addr returns the "ip:port" serving the named protocol, "" when it is off or unknown.
func (i Info) Addr(name string) string { return i.Addrs[name] }

// SitePorts returns the port serving the named protocol for every site whose port differs from
// the server's (SiteInfo.Addrs), by host; nil when none does.
func (i Info) SitePorts(name string) map[string]int {
	var out map[string]int
	for _, st := range i.Sites {
		a, ok := st.Addrs[name]
		if !ok {
			continue
		}
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			continue
		}
		if out == nil {
			out = map[string]int{}
		}
		out[st.Host] = int(ap.Port())
	}
	return out
}

// URL returns "https://HOST:PORT/index.html" on the port serving the named protocol (a
// protocol.Table name such as "h1"), or "" when that protocol is off or unknown.
func (i Info) URL(name string) string {
	addr := i.Addrs[name]
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
	return newServer([]Site{{Dir: dir}}, false, opts)
}

// Site is one page set a server serves under its own hostname (NewSites).
type Site struct {
	// Host is the site's hostname ("" for the server's host, WithHost); every site's host is on
	// the certificate.
	Host string
	// Dir is the page directory (as New's dir); ignored when Archive is set.
	Dir string
	// Archive, when set, is a HAR the site replays instead of a page directory: every host it
	// recorded is served (the site's Host standing for the main document's host, the others
	// being the site's origins, SiteInfo.Origins), each request answered as
	// pages.Archive.Match finds it (see serveReplay, ReplayStats).
	Archive *pages.Archive
}

// NewSites is New for several page sets on one server: each site is served under its own
// hostname, chosen by the request's Host (the :authority of h2 and h3), all with one certificate
// that names every host, on the same listeners. A request for another host is answered 421
// (Misdirected Request, RFC 9110 section 15.5.20). One server then serves every page of a link,
// and one browser per protocol loads them all (browser.WithSiteHosts). Errors as New's, and a
// site host that is empty after defaults, given twice or not a hostname.
func NewSites(sites []Site, opts ...Option) (*Server, error) {
	if len(sites) == 0 {
		return nil, fmt.Errorf("%w: no site to serve", ErrBadOption)
	}
	return newServer(sites, true, opts)
}

func newServer(sites []Site, multi bool, opts []Option) (*Server, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.logger, sites: map[string]*content{}, multi: multi && len(sites) > 1,
		reg: newRegistry(), bulk: newBulkData(), done: make(chan struct{})}
	var hosts []string
	var infos []SiteInfo
	held := int64(0) // page-object bytes held in memory, all sites together (MemoryBudget)
	for _, st := range sites {
		host := strings.ToLower(cmp.Or(st.Host, cfg.host))
		if _, dup := s.sites[host]; dup || strings.ContainsAny(host, " ,:/") {
			return nil, fmt.Errorf("%w: site host %q: accepted distinct hostnames", ErrBadOption, host)
		}
		var c *content
		var err error
		if st.Archive != nil {
			c, err = replayContent(st.Archive, host)
		} else {
			c, err = loadContent(st.Dir, &held)
		}
		if err != nil {
			return nil, err
		}
		s.sites[host] = c
		s.def = cmp.Or(s.def, c)
		hosts = append(hosts, host)
		origins := c.manifest.OriginHosts()
		if c.archive != nil {
			origins = replayOrigins(c)
		}
		infos = append(infos, SiteInfo{Host: host, Manifest: c.manifest, Origins: origins})
	}
	for i, st := range infos {
		var err error
		if hosts, err = s.addOrigins(st, hosts, len(sites)); err != nil {
			return nil, err
		}
		if len(st.Origins) > 0 && cfg.h3Stack == StackNgtcp2 {
			return nil, fmt.Errorf("%w: page %d (%s) has objects on other origins (%s): the %s h3 stack serves one host per server; use %s",
				ErrBadOption, i+1, st.Manifest.Spec, strings.Join(st.Origins, ", "), StackNgtcp2, StackQUICGo)
		}
	}
	cert, err := newCertificate(hosts, time.Now())
	if err != nil {
		return nil, err
	}
	s.cert = cert
	s.info = Info{
		Host: hosts[0], SPKI: cert.spki, TCPCC: cfg.tcpCC, TLSVersion: cfg.tlsVersion,
		QUICCC: QUICCongestionControl(), H3Stack: StackQUICGo, QUICStack: quicGoStack(), ZeroRTT: cfg.zeroRTT,
		Manifest: s.def.manifest, Sites: infos,
	}
	s.handler = s.newHandler()
	return s, nil
}

// addOrigins routes the origin hosts of site st (pages.Manifest.OriginHosts) to its content and
// returns hosts with them added (for the certificate); the first nSites hosts are the sites'. An
// origin host that is a site's host, or another page's origin, is an error; two identical pages
// (same items and seed, so the same origin hosts: pages.PageID) share theirs.
func (s *Server) addOrigins(st SiteInfo, hosts []string, nSites int) ([]string, error) {
	c := s.sites[st.Host]
	for _, h := range st.Origins {
		other, ok := s.sites[h]
		if ok && (slices.Contains(hosts[:nSites], h) || other.manifest.Items != c.manifest.Items || other.manifest.Seed != c.manifest.Seed) {
			return nil, fmt.Errorf("%w: origin host %s of page %s is also another site's host or origin", ErrBadOption, h, st.Manifest.Spec)
		}
		if !ok {
			s.sites[h] = c
			hosts = append(hosts, h)
		}
	}
	return hosts, nil
}

// contentFor returns the site a request is for: with several sites the one of its Host (nil for
// another host), else the one site whatever the Host.
func (s *Server) contentFor(r *http.Request) *content {
	if !s.multi {
		return s.def
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return s.sites[strings.ToLower(host)]
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
	if err := s.bind(); err != nil {
		return err
	}
	var err error
	for _, t := range s.tcp {
		if t.srv, err = s.newHTTPServer(t.p); err != nil {
			break
		}
	}
	if err == nil && s.udp != nil {
		if s.cfg.h3Stack == StackNgtcp2 {
			err = s.startNgtcp2()
		} else {
			err = s.startQUIC(s.udp)
		}
	}
	if err != nil {
		s.closeListeners()
		return err
	}
	for _, t := range s.tcp {
		s.serveTCP(t)
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
// load has to open new connections. Listeners stay open. With the ngtcp2 stack, which cannot
// close a connection on request, it waits until its connections have idled out
// (Ngtcp2IdleTimeout after their last packet), and fails when one has not after
// Ngtcp2IdleTimeout + 5 s.
func (s *Server) CloseConnections() error {
	err := s.reg.closeAll()
	if s.ng != nil {
		err = errors.Join(err, s.ng.closeConnections())
	}
	return err
}

// PageConn returns the connection that started serving the page (IndexPath, or "/") most
// recently after since; false if none did. With the ngtcp2 stack, when no TCP connection
// served the page, it waits until the h3 connections opened since the last CloseConnections
// have idled out, reads their qlogs and returns the one opened last (its facts are the qlog's:
// see ConnInfo); an error only when the server exited or a connection did not end.
func (s *Server) PageConn(since time.Time) (ConnInfo, bool, error) {
	if ci, ok := s.reg.pageConn(since); ok || s.ng == nil {
		return ci, ok, nil
	}
	return s.ng.pageConn(since)
}

// Conns returns every connection accepted so far, open or closed, in the order accepted (the
// oldest closed ones are forgotten beyond 10000); with the ngtcp2 stack its h3 connections
// follow, those PageConn has read (closed ones only).
func (s *Server) Conns() []ConnInfo {
	out := s.reg.conns()
	if s.ng != nil {
		out = append(out, s.ng.allConns()...)
	}
	return out
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
	tcp := s.tcp
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
	defer cancel()
	var (
		wg   sync.WaitGroup
		errs = make([]error, len(tcp)+1)
	)
	for i, t := range tcp {
		if t.srv != nil {
			wg.Go(func() { errs[i] = shutdownHTTP(ctx, t.srv) })
		}
	}
	wg.Go(func() { errs[len(tcp)] = s.shutdownQUIC(ctx) })
	wg.Wait()
	if s.ng != nil {
		errs = append(errs, s.ng.close())
	}
	s.wg.Wait()
	// net/http does not always close a connection handed to x/net/http2 when Shutdown times
	// out; close whatever is still open so that Close leaves no connection behind.
	return errors.Join(append(errs, s.reg.closeAll())...)
}

// bind opens the listening sockets: TCP for the SharedPort protocol (h2) and UDP for the QUIC
// protocol (h3) on one port number, then one TCP port for every other TCP protocol (h1). With
// port 0 it retries until a port is free for both TCP and UDP. On error nothing stays open.
func (s *Server) bind() error {
	var shared, quicP *protocol.Protocol
	var own []protocol.Protocol
	for _, p := range s.cfg.served() {
		switch {
		case p.Transport == protocol.QUIC:
			quicP = &p
		case p.SharedPort:
			shared = &p
		default:
			own = append(own, p)
		}
	}
	s.info.Addrs = map[string]string{}
	if shared != nil || quicP != nil {
		ln, udp, err := s.bindShared(shared != nil, quicP != nil)
		if err != nil {
			return err
		}
		if shared != nil {
			s.addTCP(*shared, ln)
		}
		if quicP != nil {
			s.udp, s.quicP = udp, *quicP
			s.info.Addrs[quicP.Name] = udp.LocalAddr().String()
			_, port, _ := net.SplitHostPort(udp.LocalAddr().String())
			s.altSvc = quicP.ALPN + `=":` + port + `"`
		}
	}
	for i, p := range own {
		ln, err := s.listenTCP(s.ownAddr(p.Name, i))
		if err != nil {
			s.closeListeners()
			return err
		}
		s.addTCP(p, ln)
	}
	return nil
}

// tcpServer is the listener and HTTP server of one TCP protocol.
type tcpServer struct {
	p   protocol.Protocol
	ln  net.Listener
	srv *http.Server
}

// addTCP records ln as protocol p's listener.
func (s *Server) addTCP(p protocol.Protocol, ln net.Listener) {
	s.tcp = append(s.tcp, &tcpServer{p: p, ln: ln})
	s.info.Addrs[p.Name] = ln.Addr().String()
}

// closeListeners closes every socket bind opened, for a Start that failed half-way.
func (s *Server) closeListeners() {
	for _, t := range s.tcp {
		_ = t.ln.Close()
	}
	if s.udp != nil {
		_ = s.udp.Close()
	}
	s.tcp, s.udp, s.altSvc = nil, nil, ""
	s.info.Addrs = nil
}

// bindShared binds the SharedPort TCP listener (when tcp) and the QUIC UDP socket (when udp) on
// the same port number.
func (s *Server) bindShared(tcp, udp bool) (net.Listener, *net.UDPConn, error) {
	host, port, _ := net.SplitHostPort(s.cfg.addr)
	tries := 1
	if port == "0" {
		tries = 50
	}
	var err error
	for range tries {
		var ln net.Listener
		addr := s.cfg.addr
		if tcp {
			if ln, err = s.listenTCP(addr); err != nil {
				return nil, nil, err
			}
			_, p, _ := net.SplitHostPort(ln.Addr().String())
			addr = net.JoinHostPort(host, p)
		}
		if !udp {
			return ln, nil, nil
		}
		var uc *net.UDPConn
		if uc, err = listenUDP(addr); err == nil {
			return ln, uc, nil
		}
		if ln != nil {
			_ = ln.Close()
		}
	}
	return nil, nil, err
}

// ownAddr is the address of the i-th TCP protocol with a port of its own (named name): the
// WithListenAddr address if given, else port+1+i after WithAddr's port (a free port for port 0).
func (s *Server) ownAddr(name string, i int) string {
	if a, ok := s.cfg.listenAddrs[name]; ok {
		return a
	}
	host, port, _ := net.SplitHostPort(s.cfg.addr)
	if n, err := strconv.Atoi(port); err == nil && n > 0 && n+1+i <= 65535 {
		return net.JoinHostPort(host, strconv.Itoa(n+1+i))
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
