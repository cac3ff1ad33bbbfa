package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// UDPBufferSize is the receive and send buffer asked for on the QUIC socket, in bytes: quic-go's
// own target (desiredBufferSize = 7 MiB in v0.65, see its wiki page "UDP Buffer Sizes"), so that
// quic-go finds the buffers large enough and does not print its warning.
const UDPBufferSize = 7 << 20

// Explicit protocol settings, the same for HTTP/2 and HTTP/3 where both have them.
const (
	// MaxConcurrentStreams is SETTINGS_MAX_CONCURRENT_STREAMS (h2) and the QUIC
	// initial_max_streams_bidi (h3): 100, the minimum RFC 9113 section 6.5.2 recommends, also
	// quic-go's default.
	MaxConcurrentStreams = 100
	// IdleTimeout closes idle connections (h1 keep-alive, h2 GOAWAY, QUIC max_idle_timeout);
	// 30 s is quic-go's default max_idle_timeout.
	IdleTimeout = 30 * time.Second
	// h3NoError is H3_NO_ERROR (RFC 9114 section 8.1).
	h3NoError = quic.ApplicationErrorCode(0x100)
)

// quicListener registers every accepted QUIC connection before http3.Server sees it.
type quicListener struct {
	*quic.EarlyListener
	protocol string // the protocol.Table name registered for every connection
	reg      *registry
}

func (l *quicListener) Accept(ctx context.Context) (*quic.Conn, error) {
	c, err := l.EarlyListener.Accept(ctx)
	if err != nil {
		return nil, err
	}
	e := l.reg.add(l.protocol, c.RemoteAddr(), "", func(e *connEntry) {
		e.quic = c
		l.reg.byQUIC[c] = e
	})
	go l.watch(e, c)
	return c, nil
}

// watch records the handshake's TLS facts when it completes and the final counters on close.
func (l *quicListener) watch(e *connEntry, c *quic.Conn) {
	select {
	case <-c.HandshakeComplete():
		l.reg.mu.Lock()
		if e.quic != nil {
			l.reg.fillQUIC(e, c)
		}
		l.reg.mu.Unlock()
	case <-c.Context().Done():
	}
	<-c.Context().Done()
	l.reg.closed(e)
}

// quicConnContext attaches the connection's registry entry to every request's context.
func (s *Server) quicConnContext(ctx context.Context, c *quic.Conn) context.Context {
	s.reg.mu.Lock()
	e := s.reg.byQUIC[c]
	s.reg.mu.Unlock()
	if e == nil {
		return ctx
	}
	return context.WithValue(ctx, entryKey{}, e)
}

// quicConfig is the QUIC configuration of the listener; quic-go defaults for everything else.
func (s *Server) quicConfig() *quic.Config {
	return &quic.Config{
		MaxIdleTimeout:     IdleTimeout,
		MaxIncomingStreams: MaxConcurrentStreams,
		Allow0RTT:          s.cfg.zeroRTT,
		Tracer:             s.qlogTracer,
	}
}

// startQUIC raises the socket buffers of udp, starts an early (0-RTT capable) QUIC listener on
// it and serves HTTP/3 from it. The listener is accepting when startQUIC returns.
func (s *Server) startQUIC(udp *net.UDPConn) error {
	rcv, snd, err := setUDPBuffers(udp, UDPBufferSize)
	s.info.UDPRcvBuf, s.info.UDPSndBuf = rcv, snd
	switch {
	case err != nil:
		s.log.Warn("could not raise the QUIC socket buffers", "err", err, "rcvbuf", rcv, "sndbuf", snd)
	case rcv < UDPBufferSize || snd < UDPBufferSize:
		s.log.Warn("QUIC socket buffers are smaller than quic-go wants (run as root or raise net.core.rmem_max/wmem_max)",
			"rcvbuf", rcv, "sndbuf", snd, "want", UDPBufferSize)
	}
	s.tr = &quic.Transport{Conn: udp}
	ln, err := s.tr.ListenEarly(s.quicTLSConfig(), s.quicConfig())
	if err != nil {
		return fmt.Errorf("listen QUIC on %s: %w", udp.LocalAddr(), err)
	}
	if b := s.cfg.udpBuffers; b[0] > 0 && b[1] > 0 {
		// After quic-go's set-up, which raises the buffers of the socket it is given.
		if s.info.UDPRcvBuf, s.info.UDPSndBuf, err = resetUDPBuffers(udp, b[0], b[1]); err != nil {
			ln.Close()
			return fmt.Errorf("set the QUIC socket buffers of %s: %w", udp.LocalAddr(), err)
		}
	}
	s.qln = &quicListener{EarlyListener: ln, protocol: s.quicP.Name, reg: s.reg}
	s.h3 = &http3.Server{
		Handler:     s.handler,
		QUICConfig:  s.quicConfig(),
		IdleTimeout: IdleTimeout,
		ConnContext: s.quicConnContext,
		Logger:      nil, // quic-go logs every request at debug level
	}
	s.wg.Go(func() {
		if err := s.h3.ServeListener(s.qln); err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, quic.ErrServerClosed) {
			s.log.Error("HTTP/3 server stopped", "err", err)
		}
	})
	return nil
}

// shutdownQUIC stops HTTP/3 gracefully (GOAWAY) until ctx ends, then closes everything.
func (s *Server) shutdownQUIC(ctx context.Context) error {
	if s.h3 == nil {
		return nil
	}
	if err := s.h3.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		s.log.Debug("HTTP/3 shutdown", "err", err)
	}
	var errs []error
	if err := s.qln.Close(); err != nil && !errors.Is(err, quic.ErrServerClosed) {
		errs = append(errs, fmt.Errorf("close QUIC listener: %w", err))
	}
	if err := s.tr.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close QUIC transport: %w", err))
	}
	if err := s.udp.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close UDP socket: %w", err))
	}
	return errors.Join(errs...)
}

// QUICCongestionControl describes the congestion controller of the linked quic-go, which is not
// configurable: v0.65 runs its cubicSender with reno=true (NewReno as in RFC 9002 section 7, but
// with a multiplicative decrease of 0.7, renoBeta), slow start with HyStart, pacing, and an
// initial window of 32 packets of 1280 bytes (40960 B; Linux TCP starts with 10 segments).
func QUICCongestionControl() string {
	return quicGoStack() + " NewReno (cubicSender reno=true, beta 0.7, HyStart, paced, initial cwnd 32x1280 B)"
}

// quicGoStack is "quic-go VERSION" of the linked quic-go, from the build information.
func quicGoStack() string {
	v := "(version unknown: no build information)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/quic-go/quic-go" {
				v = d.Version
			}
		}
	}
	return "quic-go " + v
}

// resetUDPBuffers sets conn's receive and send buffers to rcv and snd bytes through the net
// package (SetReadBuffer, SetWriteBuffer: SO_RCVBUF and SO_SNDBUF, which Linux doubles and caps
// at net.core.rmem_max and wmem_max) and returns the sizes read back (readUDPBuffers). It is how a
// caller that hands quic-go its own socket (quic.Transport{Conn: conn}) sets buffers other than
// the ones quic-go raises them to: after quic-go's set-up (its listen or first dial).
func resetUDPBuffers(conn *net.UDPConn, rcv, snd int) (gotRcv, gotSnd int, err error) {
	if err := errors.Join(conn.SetReadBuffer(rcv), conn.SetWriteBuffer(snd)); err != nil {
		return 0, 0, err
	}
	gotRcv, gotSnd = readUDPBuffers(conn)
	return gotRcv, gotSnd, nil
}
