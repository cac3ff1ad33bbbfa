package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/pages"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// writeTestPage writes a page directory like pages.Generate does: index.html, n JPEG objects of
// side x side pixels under /img/, and manifest.json. It returns the directory and its manifest.
func writeTestPage(t testing.TB, n, side int) (string, *pages.Manifest) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "img"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := &pages.Manifest{Spec: fmt.Sprintf("test %dx%dpx", n, side), Seed: 1, Index: pages.IndexPath}
	var html strings.Builder
	html.WriteString("<!doctype html><html><head><title>test</title></head><body>\n")
	for i := range n {
		b := testJPEG(t, side, i)
		p := fmt.Sprintf("/img/%04d.jpg", i+1)
		if err := os.WriteFile(filepath.Join(dir, p[1:]), b, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		m.Objects = append(m.Objects, pages.Object{Path: p, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:]), Width: side, Height: side})
		m.TotalBytes += int64(len(b))
		fmt.Fprintf(&html, "<img src=%q width=%d height=%d>\n", p, side, side)
	}
	html.WriteString("</body></html>\n")
	writeFile(t, filepath.Join(dir, "index.html"), []byte(html.String()))
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, pages.ManifestFile), mj)
	return dir, m
}

func writeFile(t testing.TB, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testJPEG encodes a side x side noisy image, different for every seed.
func testJPEG(t testing.TB, side, seed int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	x := uint32(seed*7919 + 1)
	for i := 0; i < len(img.Pix); i += 4 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(x), uint8(x>>8), uint8(x>>16), 255
	}
	img.Set(0, 0, color.RGBA{A: 255})
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// startServer starts a server for dir on 127.0.0.1:0 and closes it when the test ends.
func startServer(t testing.TB, dir string, opts ...Option) *Server {
	t.Helper()
	opts = append([]Option{WithAddr("127.0.0.1:0"), WithLogger(testLogger(t))}, opts...)
	s, err := New(dir, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// clientTLS trusts s's certificate for s's host, offering the ALPN protocols alpn.
func clientTLS(s *Server, alpn ...string) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return &tls.Config{RootCAs: pool, ServerName: s.Info().Host, NextProtos: alpn}
}

// testClient is an HTTP client for one protocol of s that resolves the host to the bound address.
type testClient struct {
	*http.Client
	base  string // "https://plt.test:PORT"
	close func()
}

func newClient(t testing.TB, s *Server, protocol string) *testClient {
	t.Helper()
	info := s.Info()
	addr := info.Addr(protocol)
	_, port, _ := net.SplitHostPort(addr)
	var rt http.RoundTripper
	var closeFn func()
	switch protocol {
	case "h1":
		tr := &http.Transport{
			TLSClientConfig: clientTLS(s, "http/1.1"),
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
			MaxIdleConnsPerHost: 100,
		}
		rt, closeFn = tr, tr.CloseIdleConnections
	case "h2":
		tr := &http.Transport{
			TLSClientConfig: clientTLS(s, "h2"),
			DialTLSContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&tls.Dialer{Config: clientTLS(s, "h2")}).DialContext(ctx, network, addr)
			},
			Protocols: new(http.Protocols),
		}
		tr.Protocols.SetHTTP2(true)
		rt, closeFn = tr, tr.CloseIdleConnections
	case "h3":
		tr := newH3Transport(s, addr, nil)
		rt, closeFn = tr, func() { _ = tr.Close() }
	}
	c := &testClient{Client: &http.Client{Transport: rt, Timeout: 20 * time.Second}, base: "https://" + net.JoinHostPort(info.Host, port), close: closeFn}
	t.Cleanup(closeFn)
	return c
}

// newH3Transport dials QUIC to addr; cache (may be nil) keeps TLS sessions for resumption/0-RTT.
func newH3Transport(s *Server, addr string, cache tls.ClientSessionCache) *http3.Transport {
	cfg := clientTLS(s)
	cfg.ClientSessionCache = cache
	return &http3.Transport{
		TLSClientConfig: cfg,
		Dial: func(ctx context.Context, _ string, tlsCfg *tls.Config, qc *quic.Config) (*quic.Conn, error) {
			return quic.DialAddrEarly(ctx, addr, tlsCfg, qc)
		},
	}
}

// get fetches path and returns the response with its whole body read.
func (c *testClient) get(t testing.TB, method, path string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, c.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp, b
}

var wantProto = map[string]string{"h1": "HTTP/1.1", "h2": "HTTP/2.0", "h3": "HTTP/3.0"}

// ticketCache is a client session cache that lets a test wait for a session ticket to arrive
// (instead of sleeping): TLS 1.3 tickets come after the handshake.
type ticketCache struct {
	tls.ClientSessionCache
	got chan struct{}
}

func newTicketCache() *ticketCache {
	return &ticketCache{ClientSessionCache: tls.NewLRUClientSessionCache(8), got: make(chan struct{}, 16)}
}

func (c *ticketCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	if cs != nil {
		select {
		case c.got <- struct{}{}:
		default:
		}
	}
}

// drain forgets the tickets seen so far.
func (c *ticketCache) drain() {
	for {
		select {
		case <-c.got:
		default:
			return
		}
	}
}

// wait returns once a ticket arrived after the last drain, failing t after 5 s.
func (c *ticketCache) wait(t testing.TB) {
	t.Helper()
	select {
	case <-c.got:
	case <-time.After(5 * time.Second):
		t.Fatal("no TLS session ticket within 5 s")
	}
}
