package server

import (
	"crypto/tls"
	"slices"
	"testing"

	"github.com/pltlab/pltlab/protocol"
)

// TestProtocolVariantIsOneTableRow adds the worked example of docs/extending.md (HTTP/2 over TLS
// 1.3 only) to protocol.Table and checks that the server serves it on a port of its own with
// exactly its ALPN and TLS version, while h2 keeps the server's TLS 1.2: no other code changed.
func TestProtocolVariantIsOneTableRow(t *testing.T) {
	variant := protocol.Protocol{
		Name: "h2-tls13", Label: "HTTP/2 over TLS 1.3", Version: protocol.HTTP2, Transport: protocol.TCP,
		ALPN: "h2", NextHop: "h2", Chromium: []string{"--disable-quic"}, TLSVersion: "1.3",
	}
	saved := protocol.Table
	protocol.Table = append(slices.Clone(saved), variant)
	t.Cleanup(func() { protocol.Table = saved })

	dir, _ := writeTestPage(t, 2, 16)
	s := startServer(t, dir, WithProtocols("h1", "h2", "h3", "h2-tls13"), WithTLSVersion("1.2"))
	info := s.Info()
	addr := info.Addr("h2-tls13")
	if addr == "" || addr == info.Addr("h2") || addr == info.Addr("h1") {
		t.Fatalf("variant address %q (h1 %s, h2 %s): want a port of its own", addr, info.Addr("h1"), info.Addr("h2"))
	}
	dial := func(addr string, maxTLS uint16) (tls.ConnectionState, error) {
		c, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true, ServerName: DefaultHost, NextProtos: []string{"h2"}, MaxVersion: maxTLS})
		if err != nil {
			return tls.ConnectionState{}, err
		}
		defer c.Close()
		return c.ConnectionState(), nil
	}
	if cs, err := dial(addr, tls.VersionTLS13); err != nil || cs.Version != tls.VersionTLS13 || cs.NegotiatedProtocol != "h2" {
		t.Errorf("variant: %v, TLS %x ALPN %q; want TLS 1.3 and h2", err, cs.Version, cs.NegotiatedProtocol)
	}
	if _, err := dial(addr, tls.VersionTLS12); err == nil {
		t.Error("variant accepted a TLS 1.2 handshake")
	}
	if cs, err := dial(info.Addr("h2"), tls.VersionTLS13); err != nil || cs.Version != tls.VersionTLS12 {
		t.Errorf("h2: %v, TLS %x; want the server's TLS 1.2", err, cs.Version)
	}
	if u := info.URL("h2-tls13"); u == "" {
		t.Error("no URL for the variant")
	}
}
