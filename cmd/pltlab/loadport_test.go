package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/protocol"
)

// tlsListener serves TLS handshakes offering only alpn on 127.0.0.1 and returns its port.
func tlsListener(t *testing.T, alpn string) int {
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
	return ln.Addr().(*net.TCPAddr).Port
}

// TestLoadWrongPortNamesTheRight (smaller things): h1 asked of the h2 listener names the port
// that serves h1 instead of letting Chromium fail with ERR_SOCKET_NOT_CONNECTED.
func TestLoadWrongPortNamesTheRight(t *testing.T) {
	h2 := tlsListener(t, "h2")
	h1 := tlsListener(t, "http/1.1")
	ctx := context.Background()
	err := checkListener(ctx, "plt.test", "127.0.0.1", h2, protocol.MustLookup("h1"), []int{h1})
	if err == nil || !isUsage(err) || !strings.Contains(err.Error(), "it serves h2") ||
		!strings.Contains(err.Error(), "h1 is served on port "+itoa(h1)) {
		t.Fatalf("err = %v; want a usage error naming h2 and port %d", err, h1)
	}
	if err := checkListener(ctx, "plt.test", "127.0.0.1", h1, protocol.MustLookup("h1"), nil); err != nil {
		t.Errorf("the right port refused: %v", err)
	}
	if err := checkListener(ctx, "plt.test", "127.0.0.1", h1, protocol.MustLookup("h2"), nil); err == nil || !strings.Contains(err.Error(), "--h1-addr") {
		t.Errorf("h2 on the h1 port: err %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
