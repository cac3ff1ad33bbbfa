package flows

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/capture"
)

// dialTimeout bounds a flow's connection set-up (TCP or QUIC handshake, TLS, request).
const dialTimeout = 20 * time.Second

// ErrProtocol is wrapped when a flow's connection did not negotiate its protocol.
var ErrProtocol = errors.New("flow did not negotiate its protocol")

// target is where flows connect: a started server reached through a link.
type target struct {
	link  shaping.Link
	info  server.Info
	roots *x509.CertPool
}

func newTarget(l shaping.Link, srv *server.Server) target {
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return target{link: l, info: srv.Info(), roots: roots}
}

// transfer is one flow's open bulk download.
type transfer struct {
	body        io.ReadCloser
	close       func() error
	alpn        string
	quicVersion string
	tlsVersion  string // "1.2" or "1.3", as the client negotiated it
	connID      uint64
	odcid       string // an ngtcp2 flow's original destination connection ID (hex): its qlog's name for it
	cc          string
	key         capture.FlowKey
	validErr    error // set when the negotiated protocol is not the requested one
}

// ngtcp2 reports whether the target's h3 is the ngtcp2 stack.
func (t target) ngtcp2() bool { return t.info.H3Stack == server.StackNgtcp2 }

// isQUICSpec reports whether flow s runs over QUIC.
func isQUICSpec(s Spec) bool {
	p, err := protocol.Lookup(s.Protocol)
	return err == nil && p.Transport == protocol.QUIC
}

// portFor returns the port flow s connects to: the server's port of its protocol, or for a QUIC
// flow on the ngtcp2 stack the port of the gtlsserver running its controller.
func (t target) portFor(s Spec) (int, error) {
	if t.ngtcp2() && isQUICSpec(s) {
		a, ok := t.info.BulkH3[s.CC]
		if !ok {
			return 0, fmt.Errorf("no ngtcp2 server runs congestion control %q (the server runs %v)", s.CC, slices.Sorted(maps.Keys(t.info.BulkH3)))
		}
		ap, err := netip.ParseAddrPort(a)
		if err != nil {
			return 0, err
		}
		return int(ap.Port()), nil
	}
	return t.port(s.Protocol)
}

// port returns the server's port for protocol name (from Info.URL).
func (t target) port(name string) (int, error) {
	u, err := url.Parse(t.info.URL(name))
	if err != nil || u.Port() == "" {
		return 0, fmt.Errorf("server does not serve %s", name)
	}
	return strconv.Atoi(u.Port())
}

// endless is the size asked for a flow's object: 1 PiB, more than any run transfers. A sized
// body (Content-Length) rather than an endless chunked one, because net/http's chunked reader
// returns only whole chunks (the server's 256 KiB writes), which would make the goodput bins
// bursty; a Content-Length body is returned as it arrives.
const endless = 1 << 50

// request builds the bulk GET for a flow of spec s on port: pltlab's BulkPath, or for the ngtcp2
// stack gtlsserver's generated body of server.Ngtcp2MaxBulk bytes (it sets no controller per
// request: each of its processes runs one).
func (t target) request(ctx context.Context, s Spec, port int) (*http.Request, error) {
	u := "https://" + net.JoinHostPort(Host, strconv.Itoa(port)) + server.BulkPath +
		"?bytes=" + strconv.FormatInt(endless, 10) + "&cc=" + url.QueryEscape(s.CC)
	if t.ngtcp2() && isQUICSpec(s) {
		u = "https://" + net.JoinHostPort(Host, strconv.Itoa(port)) + server.Ngtcp2BulkPath(server.Ngtcp2MaxBulk)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("bulk request: %w", err)
	}
	return req, nil
}

func (t target) tlsConfig(alpn string) *tls.Config {
	return &tls.Config{ServerName: Host, RootCAs: t.roots, NextProtos: []string{alpn}, MinVersion: tls.VersionTLS12}
}

// dial opens the transfer of flow s: a connection from the link's client namespace, the
// protocol checked, the bulk response's headers read. ctx bounds the whole transfer.
func (t target) dial(ctx context.Context, s Spec) (*transfer, error) {
	p, err := protocol.Lookup(s.Protocol)
	if err != nil {
		return nil, err
	}
	port, err := t.portFor(s)
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", s, err)
	}
	var tr *transfer
	if p.Transport == protocol.QUIC {
		tr, err = t.dialQUIC(ctx, p, s, port)
	} else {
		tr, err = t.dialTCP(ctx, p, s, port)
	}
	if err != nil {
		return nil, fmt.Errorf("flow %s: %w", s, err)
	}
	return tr, nil
}

// dialTCP connects over TLS over TCP through a net/http Transport limited to the protocol's
// HTTP version (HTTP/1.1 or HTTP/2), whose one connection is dialled in the client namespace.
func (t target) dialTCP(ctx context.Context, p protocol.Protocol, s Spec, port int) (*transfer, error) {
	addr := netip.AddrPortFrom(t.link.HostAddr(), uint16(port))
	tr := &transfer{}
	var conn *tls.Conn
	ht := &http.Transport{
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := t.dialTLS(ctx, addr, p.ALPN)
			conn = c
			return c, err
		},
		Protocols:          new(http.Protocols),
		DisableCompression: true,
		DisableKeepAlives:  p.Version == protocol.HTTP1,
	}
	ht.Protocols.SetHTTP1(p.Version == protocol.HTTP1)
	ht.Protocols.SetHTTP2(p.Version == protocol.HTTP2)
	req, err := t.request(ctx, s, port)
	if err != nil {
		return nil, err
	}
	resp, err := ht.RoundTrip(req)
	if err != nil {
		ht.CloseIdleConnections()
		return nil, fmt.Errorf("%s request: %w", p.Label, err)
	}
	cs := conn.ConnectionState()
	local, _ := netip.ParseAddrPort(conn.LocalAddr().String())
	tr.key = capture.FlowKey{Proto: capture.ProtoTCP, Server: addr, Client: netip.AddrPortFrom(t.link.ClientAddr(), local.Port())}
	tr.alpn, tr.tlsVersion = cs.NegotiatedProtocol, tlsVersionName(cs.Version)
	if tr.alpn != p.ALPN || resp.ProtoMajor != map[protocol.Version]int{protocol.HTTP1: 1, protocol.HTTP2: 2}[p.Version] {
		tr.validErr = fmt.Errorf("%w: ALPN %q, response %s, want %q", ErrProtocol, tr.alpn, resp.Proto, p.ALPN)
	}
	tr.close = func() error {
		err := conn.Close()
		ht.CloseIdleConnections()
		return err
	}
	return tr, tr.fromResponse(resp)
}

// dialTLS dials addr from the client namespace and completes a TLS handshake offering only alpn.
func (t target) dialTLS(ctx context.Context, addr netip.AddrPort, alpn string) (*tls.Conn, error) {
	var raw net.Conn
	err := shaping.InClient(t.link, func() error {
		d := net.Dialer{Timeout: dialTimeout}
		var err error
		raw, err = d.DialContext(ctx, "tcp4", addr.String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dial %s from the client namespace: %w", addr, err)
	}
	tc := tls.Client(raw, t.tlsConfig(alpn))
	hctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}

// dialQUIC connects over QUIC from a UDP socket made in the client namespace and speaks HTTP/3.
func (t target) dialQUIC(ctx context.Context, p protocol.Protocol, s Spec, port int) (*transfer, error) {
	addr := netip.AddrPortFrom(t.link.HostAddr(), uint16(port))
	var udp *net.UDPConn
	err := shaping.InClient(t.link, func() error {
		var err error
		udp, err = net.ListenUDP("udp4", nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("UDP socket in the client namespace: %w", err)
	}
	qt := &quic.Transport{Conn: udp}
	closeAll := func() error { return errors.Join(qt.Close(), udp.Close()) }
	hctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	var odcid string
	qconf := &quic.Config{MaxIdleTimeout: server.IdleTimeout,
		// quic-go calls Tracer with the connection ID it chose for its first Initial (the original
		// destination connection ID), which ngtcp2 writes into the qlog as the trace's group_id.
		Tracer: func(_ context.Context, _ bool, id quic.ConnectionID) qlogwriter.Trace {
			odcid = hex.EncodeToString(id.Bytes())
			return nil
		}}
	qc, err := qt.Dial(hctx, net.UDPAddrFromAddrPort(addr), t.tlsConfig(p.ALPN), qconf)
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("QUIC handshake with %s: %w", addr, err)
	}
	local := udp.LocalAddr().(*net.UDPAddr).AddrPort()
	st := qc.ConnectionState()
	tr := &transfer{alpn: st.TLS.NegotiatedProtocol, quicVersion: st.Version.String(), tlsVersion: tlsVersionName(st.TLS.Version),
		key: capture.FlowKey{Proto: capture.ProtoUDP, Server: addr, Client: netip.AddrPortFrom(t.link.ClientAddr(), local.Port())}}
	if tr.alpn != p.ALPN || st.Version != quic.Version1 {
		tr.validErr = fmt.Errorf("%w: ALPN %q, QUIC %s, want %q over QUIC v1", ErrProtocol, tr.alpn, st.Version, p.ALPN)
	}
	tr.close = func() error {
		return errors.Join(qc.CloseWithError(0, "flow ended"), closeAll())
	}
	req, err := t.request(ctx, s, port)
	if err != nil {
		tr.close()
		return nil, err
	}
	resp, err := (&http3.Transport{}).NewClientConn(qc).RoundTrip(req)
	if err != nil {
		tr.close()
		return nil, fmt.Errorf("HTTP/3 request: %w", err)
	}
	if err := tr.fromResponse(resp); err != nil {
		return nil, err
	}
	if t.ngtcp2() {
		// gtlsserver names neither the controller nor the connection in its response: the
		// process this flow reached runs the controller it was started with, read back from its
		// command line (server.Info.BulkH3), and its qlog is found by odcid (server.FlowStats).
		tr.odcid = odcid
		for cc, a := range t.info.BulkH3 {
			if a == addr.String() {
				tr.cc = cc
			}
		}
	}
	return tr, nil
}

// once makes f run at most once; later calls return its first error.
func once(f func() error) func() error {
	var (
		o   sync.Once
		err error
	)
	return func() error { o.Do(func() { err = f() }); return err }
}

// fromResponse checks the bulk response and takes its body and server facts; on error the
// transfer is closed.
func (tr *transfer) fromResponse(resp *http.Response) error {
	tr.close = once(tr.close)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		tr.close()
		return fmt.Errorf("bulk request: %s: %s", resp.Status, b)
	}
	tr.body = resp.Body
	tr.cc = resp.Header.Get(server.HeaderCC)
	tr.connID, _ = strconv.ParseUint(resp.Header.Get(server.HeaderConnID), 10, 64)
	return nil
}

// tlsVersionName returns "1.2" or "1.3" for a TLS version (the server's spelling, tls_version),
// tls.VersionName's text otherwise.
func tlsVersionName(v uint16) string {
	return strings.TrimPrefix(tls.VersionName(v), "TLS ")
}
