package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/big"
	"net"
	"testing"
	"time"
)

// alpnListener serves TLS handshakes offering only alpn on 127.0.0.1 and returns its address.
func alpnListener(t *testing.T, alpn string) string {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"plt.test"}, NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}, NextProtos: []string{alpn}}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { c.(*tls.Conn).Handshake(); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

// TestProbeALPN: the probe accepts the listener's own ALPN and, for another, returns ErrNoALPN
// with the protocol the listener serves, both when the server answers with the
// no_application_protocol alert (an http/1.1 listener asked for h2) and when it selects
// nothing (an h2 listener asked for http/1.1).
func TestProbeALPN(t *testing.T) {
	ctx := context.Background()
	h1, h2 := alpnListener(t, "http/1.1"), alpnListener(t, "h2")
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
