package browser

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
)

// genPage generates the page spec in a new directory and returns the directory and manifest.
func genPage(t testing.TB, spec string) (string, *pages.Manifest) {
	t.Helper()
	s, err := pages.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "page")
	m, err := pages.Generate(dir, s, 1)
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// testCert returns a self-signed certificate for DefaultHost and its SPKI pin.
func testCert(t testing.TB) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: DefaultHost},
		DNSNames:     []string{DefaultHost},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(leaf.RawSubjectPublicKeyInfo)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		base64.StdEncoding.EncodeToString(sum[:])
}

// stallServer is a small TLS file server (h1 or h2) that can stall one object.
type stallServer struct {
	srv  *httptest.Server
	SPKI string
	Port int

	mu      sync.Mutex
	stalls  int           // how many more requests of stallPath to stall
	stalled chan struct{} // receives when a request starts stalling
	path    string
	release chan struct{}
	conns   atomic.Int64 // TCP connections accepted
}

// startStallServer serves dir over TLS on 127.0.0.1 with ALPN h2 (or only http/1.1 when h1).
func startStallServer(t testing.TB, dir string, h1 bool) *stallServer {
	t.Helper()
	return startStallServerOn(t, dir, h1, nil)
}

// startStallServerOn is startStallServer on the listener ln (nil: a new one on 127.0.0.1:0).
func startStallServerOn(t testing.TB, dir string, h1 bool, ln net.Listener) *stallServer {
	t.Helper()
	cert, spki := testCert(t)
	s := &stallServer{SPKI: spki, stalled: make(chan struct{}, 4), release: make(chan struct{})}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.shouldStall(r.URL.Path) {
			s.stalled <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-s.release:
			}
			return
		}
		serveFile(w, r, dir)
	}))
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	if ln != nil {
		s.srv.Listener.Close()
		s.srv.Listener = ln
	}
	s.srv.EnableHTTP2 = !h1
	s.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	s.srv.StartTLS()
	t.Cleanup(func() { close(s.release); s.srv.Close() })
	_, port, _ := net.SplitHostPort(s.srv.Listener.Addr().String())
	s.Port, _ = strconv.Atoi(port)
	return s
}

// Stall makes the next n requests of path hang until the client gives up.
func (s *stallServer) Stall(path string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.path, s.stalls = path, n
}

func (s *stallServer) shouldStall(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if path != s.path || s.stalls == 0 {
		return false
	}
	s.stalls--
	return true
}

// URL returns the page URL on DefaultHost.
func (s *stallServer) URL() string {
	return "https://" + DefaultHost + ":" + strconv.Itoa(s.Port) + pages.IndexPath
}

// checkValid checks a load that must be valid: requested protocol for the page and every
// object, every object's bytes, a plausible loopback PLT and a new connection.
func checkValid(t *testing.T, rec *result.Record, proto string, objs []pages.Object) {
	t.Helper()
	if !rec.Valid || rec.InvalidReason != "" || rec.TimedOut {
		t.Fatalf("valid=%v timed_out=%v reason=%q, want a valid load", rec.Valid, rec.TimedOut, rec.InvalidReason)
	}
	if rec.ObservedProtocol != proto || rec.Protocol != proto {
		t.Errorf("protocol %q observed %q, want %s", rec.Protocol, rec.ObservedProtocol, proto)
	}
	for _, o := range objs {
		i := findResource(rec.Resources, o.Path)
		if i < 0 {
			t.Errorf("object %s missing from the record", o.Path)
			continue
		}
		r := rec.Resources[i]
		if r.Protocol != proto || r.EncodedBodySize != o.Size {
			t.Errorf("object %s: protocol %q, %d of %d bytes", o.Path, r.Protocol, r.EncodedBodySize, o.Size)
		}
	}
	if rec.PLTMs <= 0 || rec.PLTMs >= 10000 {
		t.Errorf("plt %.1f ms, want 0 < PLT < 10 s on loopback", rec.PLTMs)
	}
	if rec.WallMs < rec.PLTMs || rec.Browser == "" || rec.Time.IsZero() {
		t.Errorf("wall %.1f ms < plt, or browser %q / time %v not set", rec.WallMs, rec.Browser, rec.Time)
	}
	if rec.ConnectMs < 0 || rec.TLSMs < 0 {
		t.Errorf("connect_ms = %v, tls_ms = %v, want >= 0", rec.ConnectMs, rec.TLSMs)
	}
}

// serveFile serves dir/PATH as it is (http.FileServer would redirect /index.html to /).
func serveFile(w http.ResponseWriter, r *http.Request, dir string) {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(path.Clean(r.URL.Path))))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	http.ServeContent(w, r, r.URL.Path, time.Time{}, f)
}
