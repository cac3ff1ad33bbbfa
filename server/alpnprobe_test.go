package server

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"

	"github.com/pltlab/pltlab/internal/testenv"
)

// TestProbeALPN: the probe accepts the listener's own ALPN and, for another, returns ErrNoALPN
// with the protocol the listener serves, both when the server answers with the
// no_application_protocol alert (an http/1.1 listener asked for h2) and when it selects
// nothing (an h2 listener asked for http/1.1).
func TestProbeALPN(t *testing.T) {
	ctx := context.Background()
	h1, h2 := alpnAddr(t, "http/1.1"), alpnAddr(t, "h2")
	for _, tt := range []struct {
		addr, alpn, offered string
		err                 error
	}{
		{h1, "http/1.1", "http/1.1", nil},
		{h2, "h2", "h2", nil},
		{h1, "h2", "h1", ErrNoALPN},
		{h2, "http/1.1", "h2", ErrNoALPN},
	} {
		offered, err := ProbeALPN(ctx, "plt.test", tt.addr, tt.alpn)
		if !errors.Is(err, tt.err) || offered != tt.offered {
			t.Errorf("probe %s offering %s: %q, %v; want %q, %v", tt.addr, tt.alpn, offered, err, tt.offered, tt.err)
		}
	}
	// A port where nothing listens is not judged: the dial error passes through.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	if _, err := ProbeALPN(ctx, "plt.test", closed, "h2"); err == nil || errors.Is(err, ErrNoALPN) {
		t.Errorf("probe of a closed port: %v, want the dial error", err)
	}
}

// alpnAddr is testenv.ALPNListener's address as host:port.
func alpnAddr(t *testing.T, alpn string) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(testenv.ALPNListener(t, alpn)))
}
