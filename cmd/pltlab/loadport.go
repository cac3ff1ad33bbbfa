package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/server"
)

// checkListener checks, before Chromium is launched, that the TCP listener at ip:port offers
// p's ALPN (server.ProbeALPN) ('pltlab serve' has one TCP listener per ALPN: h2 on --addr, h1 on --h1-addr). When it
// does not, the error names the listener's protocol and, if one of the candidates ports offers
// p, that port; otherwise Chromium would only say ERR_SOCKET_NOT_CONNECTED. QUIC protocols and
// listeners that cannot be reached are not judged here (nil).
func checkListener(ctx context.Context, host, ip string, port int, p protocol.Protocol, candidates []int) error {
	if p.Transport != protocol.TCP {
		return nil
	}
	offered, err := server.ProbeALPN(ctx, host, net.JoinHostPort(ip, strconv.Itoa(port)), p.ALPN)
	if err == nil || !errors.Is(err, server.ErrNoALPN) {
		return nil
	}
	msg := fmt.Sprintf("bad port %d for %s: the server there does not offer ALPN %s", port, p.Name, p.ALPN)
	if offered != "" {
		msg += " (it serves " + offered + ")"
	}
	for _, c := range candidates {
		if c > 0 && c < 65536 && c != port {
			if _, err := server.ProbeALPN(ctx, host, net.JoinHostPort(ip, strconv.Itoa(c)), p.ALPN); err == nil {
				return usagef("%s; %s is served on port %d: try that port in the URL", msg, p.Name, c)
			}
		}
	}
	return usagef("%s; 'pltlab serve' serves h1 on --h1-addr (default: the port after --addr's) and h2 and h3 on --addr", msg)
}
