//go:build linux && !race

package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/pltlab/pltlab/internal/testenv"
)

// The ngtcp2 integration tests are left out of race-detector builds for the reason
// TestIntegration0RTT gives: quic-go's own client races with itself on a 0-RTT dial.

// TestIntegrationNgtcp2 serves a page with the ngtcp2 stack (gtlsserver) and fetches it over h3
// with quic-go's client: every object arrives whole, the page's connection is read back from the
// server's qlog (requests, bytes, the controller of its command line), a second connection
// resumes (and gtlsclient's, with 0-RTT), h2 is still served by this process, and Close leaves no process behind.
func TestIntegrationNgtcp2(t *testing.T) {
	if testing.Short() {
		t.Skip("starts gtlsserver: skipped with -short")
	}
	testenv.Require(t, Ngtcp2Binary)
	dir, m := writeTestPage(t, 3, 64)
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir, WithH3Stack(StackNgtcp2, "bbr"))
	info := s.Info()
	if info.H3Stack != StackNgtcp2 || !strings.HasPrefix(info.QUICStack, "ngtcp2 ") || !strings.HasSuffix(info.QUICCC, " bbr") ||
		!strings.Contains(info.QUICStack, "libngtcp2.so") || !info.ZeroRTT {
		t.Errorf("info: stack %q %q cc %q 0-RTT %t", info.H3Stack, info.QUICStack, info.QUICCC, info.ZeroRTT)
	}
	cache := newTicketCache()
	fetch := func() ConnInfo {
		t.Helper()
		tr := newH3Transport(s, info.Addr("h3"), cache)
		tr.Dial = func(ctx context.Context, addr string, tlsCfg *tls.Config, qc *quic.Config) (*quic.Conn, error) {
			return quic.DialAddr(ctx, info.Addr("h3"), tlsCfg, qc) // resumes, never tries 0-RTT
		}
		since := time.Now()
		cache.drain()
		paths := []string{"/index.html"}
		for _, o := range m.Objects {
			paths = append(paths, o.Path)
		}
		for i, p := range paths {
			meth := http.MethodGet
			req, _ := http.NewRequest(meth, "https://plt.test"+p, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatalf("%s %s: %v", meth, p, err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s %s: %s %v", meth, p, resp.Status, err)
			}
			if i == 0 && !bytes.Equal(b, index) {
				t.Errorf("index.html: %d bytes, not the page's", len(b))
			}
			if i > 0 {
				sum := sha256.Sum256(b)
				if o := m.Objects[i-1]; hex.EncodeToString(sum[:]) != o.SHA256 || int64(len(b)) != o.Size {
					t.Errorf("%s: %d bytes, digest differs from the manifest's", p, len(b))
				}
			}
		}
		cache.wait(t)
		_ = tr.Close() // CONNECTION_CLOSE: the server ends the connection without idling
		ci, ok, err := s.PageConn(since)
		if err != nil || !ok {
			t.Fatalf("page connection: %v %t", err, ok)
		}
		return ci
	}
	first := fetch()
	if first.Resumed || first.Used0RTT || first.Requests != 1+len(m.Objects) || first.BodyBytes < m.TotalBytes+int64(len(index)) ||
		first.BytesSent < first.BodyBytes || first.QUICCC != "bbr" || first.TLSVersion != "1.3" {
		t.Errorf("first connection: %+v (page %d B + index %d B)", first, m.TotalBytes, len(index))
	}
	// quic-go's client resumes, but GnuTLS refuses its 0-RTT: Go's TLS client keeps a ticket's
	// receipt time in whole seconds, so the ticket age it sends exceeds the real one, which
	// GnuTLS's anti-replay check rejects (docs/design.md, "the interop").
	second := fetch()
	if !second.Resumed || second.Used0RTT || second.ID == first.ID {
		t.Errorf("second connection: %+v, want resumed without 0-RTT", second)
	}
	// ngtcp2's own client keeps the age in milliseconds: its second connection sends 0-RTT and
	// the server's qlog shows it received.
	testenv.Require(t, "gtlsclient")
	_, port, _ := net.SplitHostPort(info.Addr("h3"))
	session, tp := filepath.Join(t.TempDir(), "session"), filepath.Join(t.TempDir(), "tp")
	gtls := func() ConnInfo {
		t.Helper()
		since := time.Now()
		out, err := exec.Command("gtlsclient", "-q", "--exit-on-all-streams-close", "--session-file="+session,
			"--tp-file="+tp, "127.0.0.1", port, "https://plt.test:"+port+"/index.html").CombinedOutput()
		if err != nil {
			t.Fatalf("gtlsclient: %v: %s", err, out)
		}
		ci, ok, err := s.PageConn(since)
		if err != nil || !ok {
			t.Fatalf("gtlsclient's connection: %v %t", err, ok)
		}
		return ci
	}
	third := gtls()
	fourth := gtls()
	if third.Used0RTT || third.Requests != 1 || third.BodyBytes < int64(len(index)) {
		t.Errorf("gtlsclient's first connection: %+v", third)
	}
	if !fourth.Resumed || !fourth.Used0RTT || fourth.Requests != 1 {
		t.Errorf("gtlsclient's second connection: %+v, want resumed with 0-RTT", fourth)
	}
	if n := len(s.Conns()); n != 4 {
		t.Errorf("%d connections known, want the 4 ngtcp2 ones", n)
	}
	if err := s.CloseConnections(); err != nil {
		t.Errorf("close connections with none open: %v", err)
	}
	c := newClient(t, s, "h2")
	if resp, b := c.get(t, http.MethodGet, "/index.html"); resp.StatusCode != 200 || !bytes.Equal(b, index) {
		t.Errorf("h2 beside ngtcp2: %s, %d bytes", resp.Status, len(b))
	}
	pid := s.ng.sites[0].cmd.Process.Pid
	tmp := s.ng.tmp
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Errorf("gtlsserver %d still runs after Close", pid)
	}
	if _, err := os.Stat(tmp); err == nil {
		t.Errorf("%s (key, qlogs) left after Close", tmp)
	}
}

// TestIntegrationNgtcp2Sites: with several sites each gets its own gtlsserver on a port of its
// own (SiteInfo.Addrs, SitePorts, SiteURL), serving its own page.
func TestIntegrationNgtcp2Sites(t *testing.T) {
	if testing.Short() {
		t.Skip("starts gtlsserver: skipped with -short")
	}
	testenv.Require(t, Ngtcp2Binary)
	dirA, _ := writeTestPage(t, 1, 16)
	dirB, _ := writeTestPage(t, 2, 24)
	s, err := NewSites([]Site{{Dir: dirA}, {Host: "p1.plt.test", Dir: dirB}}, WithAddr("127.0.0.1:0"),
		WithH3Stack(StackNgtcp2, ""), WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info := s.Info()
	ports := info.SitePorts("h3")
	addrB := info.Sites[1].Addrs["h3"]
	if len(ports) != 1 || ports["p1.plt.test"] == 0 || addrB == "" || addrB == info.Addr("h3") || !strings.HasSuffix(info.QUICCC, " cubic") {
		t.Fatalf("site ports %v, site 1 addr %q, server %q, cc %q", ports, addrB, info.Addr("h3"), info.QUICCC)
	}
	if u := info.SiteURL("p1.plt.test", "h3"); !strings.HasSuffix(u, fmt.Sprintf(":%d/index.html", ports["p1.plt.test"])) {
		t.Errorf("site 1 h3 URL %q", u)
	}
	for _, site := range []struct{ host, addr, dir string }{{"plt.test", info.Addr("h3"), dirA}, {"p1.plt.test", addrB, dirB}} {
		want, _ := os.ReadFile(filepath.Join(site.dir, "index.html"))
		tr := newH3Transport(s, site.addr, nil)
		tr.TLSClientConfig.ServerName = site.host
		req, _ := http.NewRequest(http.MethodGet, "https://"+site.host+"/index.html", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: %v", site.host, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		_ = tr.Close()
		if !bytes.Equal(b, want) {
			t.Errorf("%s served %d bytes, not its page's index", site.host, len(b))
		}
	}
}
