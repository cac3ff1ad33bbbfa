package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"time"

	"github.com/pltlab/pltlab/protocol"
)

// ErrNoALPN is returned by ProbeALPN when the listener did not select the ALPN offered.
var ErrNoALPN = errors.New("the server does not offer the ALPN")

// ProbeTimeout bounds each TLS handshake of ProbeALPN.
const ProbeTimeout = 3 * time.Second

// alertNoApplicationProtocol is TLS alert 120, no_application_protocol (RFC 7301 section 3.2):
// what a server sends when it supports none of the ALPN protocols offered.
const alertNoApplicationProtocol tls.AlertError = 120

// ProbeALPN makes a TLS handshake with the listener at addr (host as SNI; the certificate is
// not verified: only the ALPN is asked) offering alpn, so that a client can tell before
// Chromium is launched whether the listener serves that protocol. When the listener does not
// select alpn (it answers with the no_application_protocol alert, RFC 7301 section 3.2, or, as
// Go's servers do for an http/1.1 client of an h2-only listener, selects nothing) it returns
// ErrNoALPN and, found by a second handshake offering every TCP protocol of protocol.Table,
// the protocol the listener does serve (a protocol.Table name, "" when none answered). Other
// errors (the listener cannot be reached, the handshake fails otherwise) are returned as they
// are. Each handshake is bounded by ProbeTimeout.
func ProbeALPN(ctx context.Context, host, addr, alpn string) (offered string, err error) {
	state, err := probeHandshake(ctx, host, addr, []string{alpn})
	switch {
	case err == nil && state.NegotiatedProtocol == alpn:
		return alpn, nil
	case err != nil && !isNoALPNAlert(err):
		return "", err
	}
	var all []string
	for _, p := range protocol.Table {
		if p.Transport == protocol.TCP {
			all = append(all, p.ALPN)
		}
	}
	if st, err := probeHandshake(ctx, host, addr, all); err == nil {
		offered = st.NegotiatedProtocol
		for _, p := range protocol.Table {
			if p.Transport == protocol.TCP && p.ALPN == offered {
				offered = p.Name
			}
		}
	}
	return offered, ErrNoALPN
}

// isNoALPNAlert reports whether err is the peer's no_application_protocol alert. crypto/tls
// returns a received alert as a *net.OpError "remote error" around an unexported alert type
// whose text is that of the same tls.AlertError, so the alert is recognised by that text and
// not by any wording of ours.
func isNoALPNAlert(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error" && op.Err != nil && op.Err.Error() == alertNoApplicationProtocol.Error()
}

// probeHandshake makes one TLS handshake with addr offering alpn and returns its state.
func probeHandshake(ctx context.Context, host, addr string, alpn []string) (tls.ConnectionState, error) {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{ServerName: host, NextProtos: alpn, InsecureSkipVerify: true}} //nolint:gosec // only the ALPN is asked
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	return c.(*tls.Conn).ConnectionState(), nil
}
