package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/pages"
)

func TestNewBadOptions(t *testing.T) {
	dir, _ := writeTestPage(t, 1, 8)
	tests := []struct {
		name string
		opt  Option
		want string
	}{
		{"unknown protocol", WithProtocols("h1", "h4"), `protocol "h4"`},
		{"no protocols", WithProtocols(), "no protocols"},
		{"twice", WithProtocols("h2", "h2"), "twice"},
		{"tls", WithTLSVersion("1.1"), `TLS version "1.1"`},
		{"host", WithHost("bad host"), `host "bad host"`},
		{"cc", WithTCPCC(""), "congestion control"},
		{"addr", WithAddr("8443"), `address "8443"`},
		{"h1 addr", WithH1Addr("nope"), `address "nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(dir, tt.opt)
			if !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want ErrBadOption mentioning %q", err, tt.want)
			}
		})
	}
}

func TestNewBadPages(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(dir string, m *pages.Manifest)
		want  string
	}{
		{"missing manifest", func(dir string, m *pages.Manifest) { os.Remove(filepath.Join(dir, pages.ManifestFile)) }, "manifest"},
		{"size mismatch", func(dir string, m *pages.Manifest) { m.Objects[0].Size++ }, "manifest says"},
		{"sha mismatch", func(dir string, m *pages.Manifest) { m.Objects[0].SHA256 = strings.Repeat("0", 64) }, "manifest says"},
		{"traversal", func(dir string, m *pages.Manifest) { m.Objects[0].Path = "/../etc/passwd" }, "bad URL path"},
		{"dot segment", func(dir string, m *pages.Manifest) { m.Objects[0].Path = "/img/./0001.jpg" }, "bad URL path"},
		{"duplicate", func(dir string, m *pages.Manifest) { m.Objects[1].Path = m.Objects[0].Path }, "used twice"},
		{"fixed path", func(dir string, m *pages.Manifest) { m.Objects[0].Path = StatsPath }, "used twice"},
		{"missing object", func(dir string, m *pages.Manifest) { os.Remove(filepath.Join(dir, "img", "0001.jpg")) }, "read page file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, m := writeTestPage(t, 2, 8)
			tt.spoil(dir, m)
			if _, err := os.Stat(filepath.Join(dir, pages.ManifestFile)); err == nil {
				b, _ := json.Marshal(m)
				writeFile(t, filepath.Join(dir, pages.ManifestFile), b)
			}
			if _, err := New(dir); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an error mentioning %q", err, tt.want)
			}
		})
	}
}

func TestInfoURL(t *testing.T) {
	i := Info{Host: "plt.test", Addrs: map[string]string{"h2": "127.0.0.1:8443", "h3": "127.0.0.1:8443", "h1": "127.0.0.1:8444"}}
	tests := map[string]string{
		"h1": "https://plt.test:8444/index.html",
		"h2": "https://plt.test:8443/index.html",
		"h3": "https://plt.test:8443/index.html",
		"h4": "",
	}
	for p, want := range tests {
		if got := i.URL(p); got != want {
			t.Errorf("URL(%q) = %q, want %q", p, got, want)
		}
	}
	if got := (Info{Host: "plt.test"}).URL("h1"); got != "" {
		t.Errorf("URL of an unbound protocol = %q, want empty", got)
	}
}

func TestStartInfo(t *testing.T) {
	dir, m := writeTestPage(t, 1, 8)
	s := startServer(t, dir)
	i := s.Info()
	_, p2, _ := net.SplitHostPort(i.Addr("h2"))
	_, p3, _ := net.SplitHostPort(i.Addr("h3"))
	_, p1, _ := net.SplitHostPort(i.Addr("h1"))
	if p2 == "0" || p2 != p3 || p1 == p2 || p1 == "0" {
		t.Errorf("addresses h2 %s h3 %s h1 %s: want h2 and h3 on one bound port, h1 on another", i.Addr("h2"), i.Addr("h3"), i.Addr("h1"))
	}
	if i.Host != DefaultHost || i.TCPCC != DefaultTCPCC || i.TLSVersion != "1.3" || i.ZeroRTT || i.Manifest.TotalBytes != m.TotalBytes {
		t.Errorf("info = %+v", i)
	}
	if !strings.Contains(i.QUICCC, "quic-go") || !strings.Contains(i.QUICCC, "NewReno") {
		t.Errorf("QUICCC = %q", i.QUICCC)
	}
	// Root (in the initial user namespace) raises the buffers past net.core.rmem_max with
	// SO_RCVBUFFORCE/SO_SNDBUFFORCE, so there a smaller buffer is a failure: QUIC would then
	// drop packets in the kernel at high rates. Without the privilege it is only logged.
	if i.UDPRcvBuf < UDPBufferSize || i.UDPSndBuf < UDPBufferSize {
		if os.Geteuid() == 0 && initialUserNS() {
			t.Errorf("UDP buffers %d/%d below %d although running as root", i.UDPRcvBuf, i.UDPSndBuf, UDPBufferSize)
		} else {
			t.Logf("UDP buffers %d/%d below %d (not root)", i.UDPRcvBuf, i.UDPSndBuf, UDPBufferSize)
		}
	}
	if err := s.Start(context.Background()); err == nil {
		t.Error("second Start succeeded")
	}
}

func TestPortDefaults(t *testing.T) {
	dir, _ := writeTestPage(t, 1, 8)
	port := freePort(t)
	s := startServer(t, dir, WithAddr(net.JoinHostPort("127.0.0.1", strconv.Itoa(port))))
	if got, want := s.Info().Addr("h1"), net.JoinHostPort("127.0.0.1", strconv.Itoa(port+1)); got != want {
		t.Errorf("h1 address %s, want the next port %s", got, want)
	}
	only := startServer(t, dir, WithProtocols("h3"))
	if i := only.Info(); i.Addr("h1") != "" || i.Addr("h2") != "" || i.Addr("h3") == "" {
		t.Errorf("h3 only: %+v", i)
	}
}

// freePort returns a port free for TCP and UDP now, whose next port is free for TCP too.
func freePort(t *testing.T) int {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		u, err1 := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		n, err2 := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p+1)))
		if err1 == nil {
			u.Close()
		}
		if err2 == nil {
			n.Close()
		}
		if err1 == nil && err2 == nil {
			return p
		}
	}
	t.Fatal("no free port pair")
	return 0
}

func TestSPKIMatchesHandshake(t *testing.T) {
	dir, _ := writeTestPage(t, 1, 8)
	s := startServer(t, dir)
	conn, err := tls.Dial("tcp", s.Info().Addr("h2"), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}, ServerName: DefaultHost})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cert := conn.ConnectionState().PeerCertificates[0]
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	if want := base64.StdEncoding.EncodeToString(sum[:]); s.Info().SPKI != want {
		t.Errorf("SPKI %s, handshake certificate's %s", s.Info().SPKI, want)
	}
	if err := cert.VerifyHostname(DefaultHost); err != nil {
		t.Error(err)
	}
	if _, ok := cert.PublicKey.(*ecdsa.PublicKey); !ok || cert.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("key algorithm %v, want ECDSA", cert.PublicKeyAlgorithm)
	}
}

func TestWriteCert(t *testing.T) {
	dir, _ := writeTestPage(t, 1, 8)
	s, err := New(dir, WithHost("example.test"))
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := s.WriteCert(filepath.Join(t.TempDir(), "certs"))
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if pair.Leaf.DNSNames[0] != "example.test" || SPKIPin(pair.Leaf) != s.Info().SPKI {
		t.Errorf("written certificate for %v, pin %s; want example.test, %s", pair.Leaf.DNSNames, SPKIPin(pair.Leaf), s.Info().SPKI)
	}
	if st, _ := os.Stat(keyFile); st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	b, _ := os.ReadFile(certFile)
	if blk, _ := pem.Decode(b); blk == nil || blk.Type != "CERTIFICATE" {
		t.Error("cert.pem is not a PEM certificate")
	}
}

// TestObjectsEveryProtocol fetches the page and every object over each protocol and checks
// protocol, headers, size and SHA-256 against the manifest.
func TestObjectsEveryProtocol(t *testing.T) {
	dir, m := writeTestPage(t, 5, 64)
	s := startServer(t, dir)
	index, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	for _, p := range DefaultProtocols {
		t.Run(p, func(t *testing.T) {
			c := newClient(t, s, p)
			resp, body := c.get(t, http.MethodGet, "/index.html")
			if resp.Proto != wantProto[p] || string(body) != string(index) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
				t.Fatalf("page: %s %s %q, %d bytes", resp.Proto, resp.Status, resp.Header.Get("Content-Type"), len(body))
			}
			for _, o := range m.Objects {
				resp, body := c.get(t, http.MethodGet, o.Path)
				sum := sha256.Sum256(body)
				if resp.StatusCode != 200 || resp.Proto != wantProto[p] || int64(len(body)) != o.Size || hex.EncodeToString(sum[:]) != o.SHA256 {
					t.Errorf("%s: %s %s, %d bytes, sha256 %x", o.Path, resp.Proto, resp.Status, len(body), sum)
				}
				h := resp.Header
				if h.Get("Content-Type") != "image/jpeg" || h.Get("Content-Length") != strconv.FormatInt(o.Size, 10) || h.Get("Cache-Control") != "no-store" {
					t.Errorf("%s headers: %v", o.Path, h)
				}
			}
			resp, body = c.get(t, http.MethodHead, m.Objects[0].Path)
			if resp.StatusCode != 200 || len(body) != 0 || resp.ContentLength != m.Objects[0].Size {
				t.Errorf("HEAD: %s, %d body bytes, Content-Length %d", resp.Status, len(body), resp.ContentLength)
			}
		})
	}
}

func TestFixedPaths(t *testing.T) {
	dir, m := writeTestPage(t, 2, 8)
	s := startServer(t, dir)
	c := newClient(t, s, "h2")
	if resp, body := c.get(t, http.MethodGet, HealthPath); resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Errorf("healthz: %s %q", resp.Status, body)
	}
	var got pages.Manifest
	if _, body := c.get(t, http.MethodGet, ManifestPath); json.Unmarshal(body, &got) != nil || len(got.Objects) != len(m.Objects) {
		t.Errorf("manifest: %s", body)
	}
	if resp, body := c.get(t, http.MethodGet, "/"); resp.StatusCode != 200 || !strings.Contains(string(body), "<img") {
		t.Errorf("/: %s", resp.Status)
	}
	c.get(t, http.MethodGet, m.Objects[0].Path)
	var st Stats
	if _, body := c.get(t, http.MethodGet, StatsPath); json.Unmarshal(body, &st) != nil || st.Conns != 1 || st.Requests != 4 || st.Bytes < m.Objects[0].Size {
		t.Errorf("stats: %s", body)
	}
}

func TestNotFound(t *testing.T) {
	dir, _ := writeTestPage(t, 1, 8)
	s := startServer(t, dir)
	paths := []string{"/nope", "/img/", "/img", "/img/9999.jpg", "/index.html/", "/../index.html", "/img/../index.html",
		"/img/%2e%2e/index.html", "/..%2f..%2fetc/passwd", "/manifest.json/..", "//index.html", "/img/0001.jpg?x=1/.."}
	for _, p := range DefaultProtocols {
		t.Run(p, func(t *testing.T) {
			c := newClient(t, s, p)
			for _, path := range paths {
				resp, _ := c.get(t, http.MethodGet, path)
				want := 404
				if strings.HasPrefix(path, "/img/0001.jpg?") {
					want = 200 // the query is not part of the path
				}
				if resp.StatusCode != want {
					t.Errorf("GET %s: %s, want %d", path, resp.Status, want)
				}
			}
			if resp, _ := c.get(t, http.MethodPost, "/img/0001.jpg"); resp.StatusCode != 404 {
				t.Errorf("POST object: %s", resp.Status)
			}
		})
	}
}

func TestRawTraversalH1(t *testing.T) {
	dir, _ := writeTestPage(t, 1, 8)
	s := startServer(t, dir)
	for _, target := range []string{"/../manifest.json", "/img/../../etc/passwd", "/./index.html"} {
		conn, err := tls.Dial("tcp", s.Info().Addr("h1"), clientTLS(s, "http/1.1"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = conn.Write([]byte("GET " + target + " HTTP/1.1\r\nHost: plt.test\r\nConnection: close\r\n\r\n"))
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		n, _ := conn.Read(buf)
		conn.Close()
		if !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 404") {
			t.Errorf("raw GET %s: %q", target, buf[:n])
		}
	}
}

// initialUserNS reports whether the test runs in the initial user namespace, whose uid map is the
// identity over all 2^32-1 ids (user_namespaces(7)): only there does uid 0 hold CAP_NET_ADMIN
// over the host's socket buffer limits.
func initialUserNS() bool {
	b, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) == 3 && f[0] == "0" && f[1] == "0" && f[2] == "4294967295"
}

// TestUDPBuffersAfterQUICGo: WithUDPBuffers sets the QUIC socket's buffers once quic-go has set
// up its listener (which raises them), through the socket pltlab handed it, and Info reports
// them read back (Linux doubles the value given, socket(7)).
func TestUDPBuffersAfterQUICGo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("socket buffers are read back on Linux only")
	}
	dir, _ := writeTestPage(t, 1, 8)
	i := startServer(t, dir, WithUDPBuffers(106496, 106496)).Info()
	if i.UDPRcvBuf != 2*106496 || i.UDPSndBuf != 2*106496 {
		t.Errorf("UDP buffers %d/%d, want %d each", i.UDPRcvBuf, i.UDPSndBuf, 2*106496)
	}
}
