package server

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// The HTTP/3 stacks a Server can answer h3 with (WithH3Stack).
const (
	// StackQUICGo is quic-go's http3, in this process: the default.
	StackQUICGo = "quic-go"
	// StackNgtcp2 is ngtcp2's example server gtlsserver (ngtcp2 + nghttp3 + GnuTLS, Debian's
	// ngtcp2-server package), one child process per site, serving the site's page directory.
	StackNgtcp2 = "ngtcp2"
)

// H3Stacks are the values WithH3Stack accepts.
var H3Stacks = []string{StackQUICGo, StackNgtcp2}

// QUICGoCC is the one congestion controller quic-go runs (QUICCongestionControl): quic-go has
// no switch, so WithH3Stack refuses any other for it.
const QUICGoCC = "newreno"

// Ngtcp2CCs are the congestion controllers of gtlsserver's --cc: CUBIC (RFC 9438), NewReno
// (RFC 9002 section 7), BBR (v1, Cardwell et al. 2016) and BBRv2 (draft-cardwell-iccrg-bbr).
var Ngtcp2CCs = []string{"cubic", "reno", "bbr", "bbr2"}

// DefaultNgtcp2CC is the ngtcp2 controller when none is asked for: gtlsserver's own default.
const DefaultNgtcp2CC = "cubic"

// Ngtcp2Binary is the ngtcp2 HTTP/3 server pltlab runs (Debian package ngtcp2-server).
const Ngtcp2Binary = "gtlsserver"

// Ngtcp2IdleTimeout is the max_idle_timeout gtlsserver is started with. ngtcp2's example server
// has no way to close a connection from outside, so a connection ends by idling out (RFC 9000
// section 10.1: both ends then discard it, Chromium included, as the lower of the two idle
// timeouts applies), and Server.CloseConnections waits for that. 2 s keeps the wait short while
// staying far above three PTOs of the emulated links (RFC 9000 section 10.1 raises a shorter one
// to that anyway) and above any pause inside a page load.
const Ngtcp2IdleTimeout = 2 * time.Second

// ngtcp2CloseWait bounds how long CloseConnections and PageConn wait for gtlsserver's
// connections to idle out, past Ngtcp2IdleTimeout.
const ngtcp2CloseWait = Ngtcp2IdleTimeout + 5*time.Second

// WithH3Stack chooses the HTTP/3 stack that answers h3 (default StackQUICGo) and its congestion
// controller cc ("" for the stack's default: QUICGoCC, DefaultNgtcp2CC). quic-go accepts only
// QUICGoCC; ngtcp2 one of Ngtcp2CCs. With ngtcp2 the TCP protocols are still served by this
// process; h3 is served by one gtlsserver per site, on the same certificate, site 0 on the UDP
// port shared with h2 and every other site on a UDP port of its own (SiteInfo.Addrs). Those
// servers answer static files only (no StatsPath, no bulk bodies) and always accept 0-RTT.
func WithH3Stack(stack, cc string) Option {
	return func(c *config) { c.h3Stack, c.quicCC = stack, cc }
}

// validateH3Stack checks WithH3Stack's values and fills in the defaults; errors wrap
// ErrBadOption and name what is accepted.
func (c *config) validateH3Stack() error {
	stack, cc, err := h3StackDefaults(c.h3Stack, c.quicCC)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadOption, err)
	}
	c.h3Stack, c.quicCC = stack, cc
	if stack == StackNgtcp2 && c.qlogDir != nil {
		return fmt.Errorf("%w: qlog files of the ngtcp2 stack are read for the records and not kept: accepted: --artifacts without qlog", ErrBadOption)
	}
	return nil
}

// h3StackDefaults returns stack and cc with their defaults filled in ("" is quic-go, and each
// stack's default controller), or one line naming the bad value and what is accepted.
func h3StackDefaults(stack, cc string) (string, string, error) {
	switch stack {
	case "", StackQUICGo:
		if cc != "" && cc != QUICGoCC {
			return "", "", fmt.Errorf("QUIC congestion control %q: quic-go runs %s only (it has no switch); accepted: %s, or the ngtcp2 stack for %s",
				cc, QUICGoCC, QUICGoCC, strings.Join(Ngtcp2CCs, ", "))
		}
		return StackQUICGo, QUICGoCC, nil
	case StackNgtcp2:
		if cc == "" {
			cc = DefaultNgtcp2CC
		}
		if !slices.Contains(Ngtcp2CCs, cc) {
			return "", "", fmt.Errorf("QUIC congestion control %q for ngtcp2: accepted: %s", cc, strings.Join(Ngtcp2CCs, ", "))
		}
		return stack, cc, nil
	}
	return "", "", fmt.Errorf("HTTP/3 stack %q: accepted: %s", stack, strings.Join(H3Stacks, ", "))
}

// CheckH3Stack checks an HTTP/3 stack and congestion controller pair as WithH3Stack does
// (stack "" is quic-go, cc "" the stack's default), without a Server: one line naming the bad
// value and what is accepted, nil when the pair is good.
func CheckH3Stack(stack, cc string) error {
	_, _, err := h3StackDefaults(stack, cc)
	return err
}

// CheckNgtcp2 reports whether gtlsserver can be run here: nil when it is on PATH, else an error
// naming the package that provides it.
func CheckNgtcp2() error {
	if _, err := exec.LookPath(Ngtcp2Binary); err != nil {
		return fmt.Errorf("the ngtcp2 HTTP/3 stack needs %s (Debian package ngtcp2-server; make setup installs it): %w", Ngtcp2Binary, err)
	}
	return nil
}
