package server

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
)

// maxClosedConns bounds how many closed connections Conns keeps (the oldest are forgotten).
const maxClosedConns = 10000

// ConnInfo describes one client connection the server accepted.
type ConnInfo struct {
	// ID numbers connections from 1 in the order they were accepted.
	ID uint64 `json:"id"`
	// Protocol is the listener's protocol, a protocol.Table name such as "h1".
	Protocol string `json:"protocol"`
	// ALPN is the negotiated ALPN protocol ("http/1.1", "h2", "h3"). ALPN, TLSVersion and Resumed
	// are filled at the first request on a TCP connection (so stay empty on one that served
	// none, e.g. a browser's unused preconnect) and when the QUIC handshake completes.
	ALPN string `json:"alpn"`
	// TLSVersion is "1.2" or "1.3".
	TLSVersion string `json:"tls_version"`
	// Resumed is true when the TLS session was resumed (tls.ConnectionState.DidResume).
	Resumed bool `json:"resumed"`
	// Used0RTT is true when the server accepted 0-RTT data on this QUIC connection.
	Used0RTT bool `json:"used_0rtt"`
	// TCPCC is the congestion control read back from the accepted TCP socket; "" for h3.
	TCPCC string `json:"tcp_cc,omitempty"`
	// QUICCC is the congestion controller of an ngtcp2 connection (Ngtcp2CCs), read from its
	// server's command line; "" for quic-go's (Info.QUICCC) and TCP.
	QUICCC string `json:"quic_cc,omitempty"`
	// Qlog is the file name of an ngtcp2 connection's qlog, whose facts these are (named by the
	// server's connection ID); "" otherwise.
	Qlog string `json:"qlog,omitempty"`
	// Remote is the client's "ip:port".
	Remote string `json:"remote"`
	// Requests is the number of HTTP requests served on the connection.
	Requests int `json:"requests"`
	// BytesSent is what the server wrote to the transport, in bytes: TCP payload (TLS records,
	// handshake included) for h1/h2; QUIC packets including retransmissions, without UDP/IP
	// headers (quic-go ConnectionStats.BytesSent) for h3.
	BytesSent int64 `json:"bytes_sent"`
	// BodyBytes is the sum of the response bodies served on the connection, in bytes.
	BodyBytes int64 `json:"body_bytes"`
	// Hosts are the hostnames the connection's requests were for (Host, or :authority for h2 and
	// h3, lower case, without the port), each once in the order first seen: more than one when
	// the browser coalesced origins onto the connection. Empty for the ngtcp2 stack's.
	Hosts []string `json:"hosts,omitempty"`
	// Opened is when the connection was accepted; Closed when it closed (zero while open).
	Opened time.Time `json:"opened"`
	Closed time.Time `json:"closed,omitzero"`
}

// connEntry is the registry's record of one connection. Fields below mu are guarded by
// registry.mu; sent is atomic because every TCP write adds to it.
type connEntry struct {
	info     ConnInfo
	pageAt   time.Time // last time this connection started serving the page
	tlsKnown bool
	sent     atomic.Int64
	tcp      *trackedConn // open TCP connection, nil once closed
	quic     *quic.Conn   // open QUIC connection, nil once closed
}

// registry tracks every connection of a Server.
type registry struct {
	mu        sync.Mutex
	nextID    uint64
	all       []*connEntry // in ID order
	open      map[*connEntry]struct{}
	byQUIC    map[*quic.Conn]*connEntry
	nClosed   int
	requests  int64
	bodyBytes int64
	afterAdd  func() // test hook: runs after a connection is registered, outside mu
}

func newRegistry() *registry {
	return &registry{open: map[*connEntry]struct{}{}, byQUIC: map[*quic.Conn]*connEntry{}}
}

// add registers a newly accepted connection and, in the same locked step, attaches its socket
// (attach is called with mu held), so that a closeAll running at the same time either sees the
// connection with its socket or does not see it at all: never an entry it cannot close.
func (r *registry) add(protocol string, remote net.Addr, tcpCC string, attach func(*connEntry)) *connEntry {
	r.mu.Lock()
	r.nextID++
	e := &connEntry{info: ConnInfo{ID: r.nextID, Protocol: protocol, Remote: remote.String(), TCPCC: tcpCC, Opened: time.Now()}}
	attach(e)
	r.all = append(r.all, e)
	r.open[e] = struct{}{}
	r.mu.Unlock()
	if r.afterAdd != nil {
		r.afterAdd()
	}
	return e
}

// closed marks e closed (once) and forgets the oldest closed entries beyond maxClosedConns.
func (r *registry) closed(e *connEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !e.info.Closed.IsZero() {
		return
	}
	if qc := e.quic; qc != nil {
		r.fillQUIC(e, qc)
		delete(r.byQUIC, qc)
		e.quic = nil
	}
	e.tcp = nil
	e.info.Closed = time.Now()
	delete(r.open, e)
	r.nClosed++
	if r.nClosed > maxClosedConns {
		r.prune()
	}
}

// prune drops the oldest closed entries down to maxClosedConns/2; called with mu held.
func (r *registry) prune() {
	keep := r.all[:0]
	drop := r.nClosed - maxClosedConns/2
	for _, e := range r.all {
		if drop > 0 && !e.info.Closed.IsZero() {
			drop--
			r.nClosed--
			continue
		}
		keep = append(keep, e)
	}
	clear(r.all[len(keep):])
	r.all = keep
}

// request records one request served on e (nil for a connection the server does not track).
func (r *registry) request(e *connEntry, req *http.Request, body int64, start time.Time, isPage bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	r.bodyBytes += body
	if e == nil {
		return
	}
	e.info.Requests++
	e.info.BodyBytes += body
	if h := requestHost(req); !slices.Contains(e.info.Hosts, h) {
		e.info.Hosts = append(e.info.Hosts, h)
	}
	if isPage && start.After(e.pageAt) {
		e.pageAt = start
	}
	if e.quic != nil {
		r.fillQUIC(e, e.quic)
	} else if !e.tlsKnown && req.TLS != nil && req.TLS.HandshakeComplete {
		fillTLS(e, req.TLS)
	}
}

// fillTLS copies the TLS facts of a completed handshake into e; called with mu held.
func fillTLS(e *connEntry, cs *tls.ConnectionState) {
	e.info.ALPN = cs.NegotiatedProtocol
	e.info.TLSVersion = tlsVersionName(cs.Version)
	e.info.Resumed = cs.DidResume
	e.tlsKnown = true
}

// fillQUIC refreshes e from its QUIC connection; called with mu held.
func (r *registry) fillQUIC(e *connEntry, c *quic.Conn) {
	st := c.ConnectionState()
	if st.Used0RTT {
		e.info.Used0RTT = true
	}
	if st.TLS.HandshakeComplete {
		fillTLS(e, &st.TLS)
	}
	e.sent.Store(int64(c.ConnectionStats().BytesSent))
}

// snapshot returns e's facts; called with mu held.
func (r *registry) snapshot(e *connEntry) ConnInfo {
	if e.quic != nil {
		r.fillQUIC(e, e.quic)
	}
	ci := e.info
	ci.BytesSent = e.sent.Load()
	ci.Hosts = slices.Clone(e.info.Hosts)
	return ci
}

// requestHost is r's host, lower case, without the port.
func requestHost(r *http.Request) string {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(host)
}

// HostConns counts the connections that served one hostname.
type HostConns struct {
	// Host is the hostname (ConnInfo.Hosts).
	Host string
	// Conns is the number of connections that served requests for Host; Shared is how many of
	// them also served another host (coalesced: h2 and h3 connection pooling).
	Conns, Shared int
}

// HostConns returns, per hostname in the order first served, the connections opened at or after
// since that served it: a cold load's connections per origin (h1: up to six per host in
// Chromium; h2 and h3: one, or one shared by several origins when they were coalesced).
// Connections of the ngtcp2 stack record no hosts and are left out.
func (s *Server) HostConns(since time.Time) []HostConns {
	var out []HostConns
	idx := map[string]int{}
	for _, c := range s.reg.conns() {
		if c.Opened.Before(since) {
			continue
		}
		for _, h := range c.Hosts {
			i, ok := idx[h]
			if !ok {
				i = len(out)
				idx[h] = i
				out = append(out, HostConns{Host: h})
			}
			out[i].Conns++
			if len(c.Hosts) > 1 {
				out[i].Shared++
			}
		}
	}
	return out
}

// conns returns every known connection in ID order.
func (r *registry) conns() []ConnInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ConnInfo, 0, len(r.all))
	for _, e := range r.all {
		out = append(out, r.snapshot(e))
	}
	return out
}

// pageConn returns the connection that most recently started serving the page after since.
func (r *registry) pageConn(since time.Time) (ConnInfo, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var best *connEntry
	for _, e := range r.all {
		if e.pageAt.After(since) && (best == nil || e.pageAt.After(best.pageAt)) {
			best = e
		}
	}
	if best == nil {
		return ConnInfo{}, false
	}
	return r.snapshot(best), true
}

// openConns returns the open TCP and QUIC connections.
func (r *registry) openConns() (tcp []*trackedConn, qc []*quic.Conn, entries []*connEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for e := range r.open {
		if e.tcp != nil {
			tcp = append(tcp, e.tcp)
		}
		if e.quic != nil {
			qc = append(qc, e.quic)
		}
		entries = append(entries, e)
	}
	return tcp, qc, entries
}

// closeAll closes every open connection: TCP sockets at once (the peer sees a FIN), QUIC ones
// with CONNECTION_CLOSE and H3_NO_ERROR (RFC 9114 section 8.1). It returns once all are closed.
func (r *registry) closeAll() error {
	tcp, qc, entries := r.openConns()
	var errs []error
	for _, c := range tcp {
		if err := c.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	var wg sync.WaitGroup
	for _, c := range qc {
		wg.Go(func() { _ = c.CloseWithError(h3NoError, "pltlab: closing all connections") })
	}
	wg.Wait()
	for _, e := range entries {
		r.closed(e)
	}
	return errors.Join(errs...)
}

// stats returns totals for /_pltlab/stats.
func (r *registry) stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{Conns: r.nextID, OpenConns: len(r.open), Requests: r.requests, Bytes: r.bodyBytes}
}

// trackedConn is an accepted TCP connection that counts the bytes written to it and unregisters
// itself on Close.
type trackedConn struct {
	net.Conn
	e    *connEntry
	reg  *registry
	once sync.Once
}

func (c *trackedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.e.sent.Add(int64(n))
	return n, err
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.reg.closed(c.e) })
	return err
}

// tcpListener registers every accepted connection as protocol and checks its congestion control.
type tcpListener struct {
	net.Listener
	protocol string
	wantCC   string
	reg      *registry
	log      *slog.Logger
}

func (l *tcpListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := l.connCC(c)
	var tc *trackedConn
	l.reg.add(l.protocol, c.RemoteAddr(), cc, func(e *connEntry) {
		tc = &trackedConn{Conn: c, e: e, reg: l.reg}
		e.tcp = tc
	})
	return tc, nil
}

// connCC reads the accepted socket's congestion control back and sets it if it differs (it is
// inherited from the listener, so that should never happen).
func (l *tcpListener) connCC(c net.Conn) string {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return ""
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return ""
	}
	cc, err := getTCPCC(rc)
	if err == nil && cc != l.wantCC {
		l.log.Warn("accepted TCP connection has another congestion control; setting it", "got", cc, "want", l.wantCC)
		if err = setTCPCC(rc, l.wantCC); err == nil {
			cc, err = getTCPCC(rc)
		}
	}
	if err != nil {
		l.log.Warn("read TCP congestion control", "err", err)
	}
	return cc
}

type entryKey struct{}

// tcpConnContext attaches the connection's registry entry to every request's context.
func tcpConnContext(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	if t, ok := c.(*trackedConn); ok {
		return context.WithValue(ctx, entryKey{}, t.e)
	}
	return ctx
}

// entryFrom returns the registry entry attached to ctx, nil if none.
func entryFrom(ctx context.Context) *connEntry {
	e, _ := ctx.Value(entryKey{}).(*connEntry)
	return e
}
