package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/protocol"
)

// probeTimeout bounds one TLS handshake of checkListener.
const probeTimeout = 3 * time.Second

// checkListener checks, before Chromium is launched, that the TCP listener at ip:port offers
// p's ALPN ('pltlab serve' has one TCP listener per ALPN: h2 on --addr, h1 on --h1-addr). When it
// does not, the error names the listener's protocol and, if one of the candidates ports offers
// p, that port; otherwise Chromium would only say ERR_SOCKET_NOT_CONNECTED. QUIC protocols and
// listeners that cannot be reached are not judged here (nil).
func checkListener(ctx context.Context, host, ip string, port int, p protocol.Protocol, candidates []int) error {
	if p.Transport != protocol.TCP {
		return nil
	}
	offered, err := negotiate(ctx, host, ip, port, p.ALPN)
	if err == nil || !errors.Is(err, errNoALPN) {
		return nil
	}
	msg := fmt.Sprintf("bad port %d for %s: the server there does not offer ALPN %s", port, p.Name, p.ALPN)
	if offered != "" {
		msg += " (it serves " + offered + ")"
	}
	for _, c := range candidates {
		if c > 0 && c < 65536 && c != port {
			if _, err := negotiate(ctx, host, ip, c, p.ALPN); err == nil {
				return usagef("%s; %s is served on port %d: try that port in the URL", msg, p.Name, c)
			}
		}
	}
	return usagef("%s; 'pltlab serve' serves h1 on --h1-addr (default: the port after --addr's) and h2 and h3 on --addr", msg)
}

// errNoALPN is returned by negotiate when the server refused the offered ALPN.
var errNoALPN = errors.New("server refused the ALPN")

// negotiate makes a TLS handshake with ip:port offering alpn (certificate not verified: only the
// ALPN is asked). When the server does not select it (it refuses it, or, as Go's servers do for
// an http/1.1 client of an h2-only listener, selects nothing), it returns errNoALPN and, found
// by a second handshake, the protocol the listener does serve (a protocol.Table name).
func negotiate(ctx context.Context, host, ip string, port int, alpn string) (offered string, err error) {
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	state, err := handshake(ctx, host, addr, []string{alpn})
	switch {
	case err == nil && state.NegotiatedProtocol == alpn:
		return alpn, nil
	case err != nil && !strings.Contains(err.Error(), "no application protocol"):
		return "", err
	}
	var all []string
	for _, p := range protocol.Table {
		if p.Transport == protocol.TCP {
			all = append(all, p.ALPN)
		}
	}
	if st, err := handshake(ctx, host, addr, all); err == nil {
		offered = st.NegotiatedProtocol
		for _, p := range protocol.Table {
			if p.Transport == protocol.TCP && p.ALPN == offered {
				offered = p.Name
			}
		}
	}
	return offered, errNoALPN
}

func handshake(ctx context.Context, host, addr string, alpn []string) (tls.ConnectionState, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	d := tls.Dialer{Config: &tls.Config{ServerName: host, NextProtos: alpn, InsecureSkipVerify: true}} //nolint:gosec // only the ALPN is asked
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer c.Close()
	return c.(*tls.Conn).ConnectionState(), nil
}
