package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/pltlab/pltlab/protocol"
)

// serveTCP serves t's HTTP server on its listener wrapped in connection tracking and TLS with
// the protocol's one ALPN ID.
func (s *Server) serveTCP(t *tcpServer) {
	tl := &tcpListener{Listener: t.ln, protocol: t.p.Name, wantCC: s.cfg.tcpCC, reg: s.reg, log: s.log}
	tlsLn := tls.NewListener(tl, s.tcpTLSConfig(t.p))
	s.wg.Go(func() {
		if err := t.srv.Serve(tlsLn); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("TCP server stopped", "protocol", t.p.Name, "err", err)
		}
	})
}

// shutdownHTTP stops srv gracefully until ctx ends, then closes its connections.
func shutdownHTTP(ctx context.Context, srv *http.Server) error {
	if err := srv.Shutdown(ctx); err == nil {
		return nil
	}
	if err := srv.Close(); err != nil {
		return fmt.Errorf("close %s: %w", srv.Addr, err)
	}
	return nil
}

// newHTTPServer makes the net/http server of a TCP protocol's listener. HTTP/2 uses x/net/http2
// with explicit settings; HTTP/1.1 gets an empty TLSNextProto so that it never speaks HTTP/2.
func (s *Server) newHTTPServer(p protocol.Protocol) (*http.Server, error) {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       IdleTimeout,
		ConnContext:       tcpConnContext,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	switch p.Version {
	case protocol.HTTP1:
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
	case protocol.HTTP2:
		configureHTTP2(srv)
	}
	return srv, nil
}

// listenTCP listens on addr with the configured congestion control set on the socket.
func (s *Server) listenTCP(addr string) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error { return setTCPCC(c, s.cfg.tcpCC) }}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen TCP %s (congestion control %s): %w", addr, s.cfg.tcpCC, err)
	}
	return ln, nil
}

// configureHTTP2 makes srv speak only HTTP/2 (net/http's own implementation) with explicit
// settings: SETTINGS_MAX_CONCURRENT_STREAMS = MaxConcurrentStreams (Go would say 250), and the
// Go defaults written out for the rest (1 MiB max read frame and receive windows, which only
// limit what clients send).
func configureHTTP2(srv *http.Server) {
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP2(true)
	srv.HTTP2 = &http.HTTP2Config{
		MaxConcurrentStreams:          MaxConcurrentStreams,
		MaxReadFrameSize:              1 << 20,
		MaxReceiveBufferPerConnection: 1 << 20,
		MaxReceiveBufferPerStream:     1 << 20,
	}
}
