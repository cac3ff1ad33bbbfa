package server

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestALPNPerPort(t *testing.T) {
	dir, _ := writeTestPage(t, 1, 8)
	s := startServer(t, dir)
	i := s.Info()
	tests := []struct {
		name, addr string
		offer      []string
		want       string // negotiated protocol, "fail" for a refused handshake
	}{
		{"h1 port refuses h2-only", i.Addr("h1"), []string{"h2"}, "fail"},
		{"h1 port picks http/1.1", i.Addr("h1"), []string{"h2", "http/1.1"}, "http/1.1"},
		{"h1 port without ALPN", i.Addr("h1"), nil, ""},
		{"h2 port picks h2", i.Addr("h2"), []string{"h2", "http/1.1"}, "h2"},
		{"h2 port refuses http/1.1", i.Addr("h2"), []string{"http/1.1"}, "fail"},
		{"h2 port refuses no ALPN", i.Addr("h2"), nil, "fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := tls.Dial("tcp", tt.addr, clientTLS(s, tt.offer...))
			if err == nil {
				// TLS 1.3: the server's verdict may come with the first read.
				_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				_, rerr := conn.Read(make([]byte, 1))
				if ne, ok := rerr.(net.Error); !ok || !ne.Timeout() {
					err = rerr
				}
				conn.Close()
			}
			switch {
			case tt.want == "fail" && err == nil:
				t.Fatalf("handshake offering %q succeeded", tt.offer)
			case tt.want != "fail" && err != nil:
				t.Fatalf("handshake offering %q: %v", tt.offer, err)
			case err == nil && conn.ConnectionState().NegotiatedProtocol != tt.want:
				t.Fatalf("negotiated %q, want %q", conn.ConnectionState().NegotiatedProtocol, tt.want)
			}
		})
	}
}

func TestAltSvcFirstResponse(t *testing.T) {
	dir, _ := writeTestPage(t, 1, 8)
	for _, p := range []string{"h1", "h2"} {
		t.Run(p, func(t *testing.T) {
			s := startServer(t, dir)
			_, port, _ := net.SplitHostPort(s.Info().Addr("h3"))
			resp, _ := newClient(t, s, p).get(t, http.MethodGet, "/index.html")
			if got, want := resp.Header.Get("Alt-Svc"), `h3=":`+port+`"`; got != want {
				t.Errorf("first %s response: Alt-Svc %q, want %q", p, got, want)
			}
			if resp, _ = newClient(t, s, p).get(t, http.MethodGet, "/nope"); resp.Header.Get("Alt-Svc") == "" {
				t.Error("404 response without Alt-Svc")
			}
			if resp, _ = newClient(t, s, "h3").get(t, http.MethodGet, "/index.html"); resp.Header.Get("Alt-Svc") != "" {
				t.Errorf("h3 response carries Alt-Svc %q", resp.Header.Get("Alt-Svc"))
			}
		})
	}
	s := startServer(t, dir, WithProtocols("h1", "h2"))
	if resp, _ := newClient(t, s, "h2").get(t, http.MethodGet, "/"); resp.Header.Get("Alt-Svc") != "" {
		t.Errorf("Alt-Svc %q without h3", resp.Header.Get("Alt-Svc"))
	}
}

// availableCCs lists the kernel's TCP congestion control algorithms.
func availableCCs(t *testing.T) []string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		t.Skipf("no TCP congestion control list: %v", err)
	}
	return strings.Fields(string(b))
}

func TestTCPCongestionControl(t *testing.T) {
	avail := availableCCs(t)
	dir, _ := writeTestPage(t, 1, 8)
	for _, cc := range []string{"", "cubic", "reno", "bbr"} {
		want := cc
		if cc == "" {
			want = DefaultTCPCC
		}
		t.Run(want, func(t *testing.T) {
			if !slices.Contains(avail, want) {
				t.Skipf("kernel lacks %s (has %v)", want, avail)
			}
			var opts []Option
			if cc != "" {
				opts = append(opts, WithTCPCC(cc))
			}
			s := startServer(t, dir, opts...)
			newClient(t, s, "h1").get(t, http.MethodGet, "/")
			newClient(t, s, "h2").get(t, http.MethodGet, "/")
			conns := s.Conns()
			if len(conns) != 2 {
				t.Fatalf("%d connections, want 2", len(conns))
			}
			for _, c := range conns {
				if c.TCPCC != want {
					t.Errorf("%s connection: congestion control %q, want %q", c.Protocol, c.TCPCC, want)
				}
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		s, err := New(dir, WithTCPCC("nosuchcc"), WithAddr("127.0.0.1:0"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "nosuchcc") {
			t.Errorf("Start: %v, want an error naming nosuchcc", err)
		}
		_ = s.Close()
	})
}

func TestConnFacts(t *testing.T) {
	dir, m := writeTestPage(t, 2, 32)
	for _, tlsv := range []string{"1.3", "1.2"} {
		s := startServer(t, dir, WithTLSVersion(tlsv))
		for _, p := range DefaultProtocols {
			t.Run(tlsv+"/"+p, func(t *testing.T) {
				since := time.Now()
				c := newClient(t, s, p)
				c.get(t, http.MethodGet, "/index.html")
				c.get(t, http.MethodGet, m.Objects[0].Path)
				ci, ok, _ := s.PageConn(since)
				// The last TCP write is counted just after it returns: the client may be faster.
				for deadline := time.Now().Add(2 * time.Second); ok && ci.BytesSent <= ci.BodyBytes && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
					ci, ok, _ = s.PageConn(since)
				}
				wantTLS := map[bool]string{true: "1.3", false: tlsv}[p == "h3"]
				wantALPN := map[string]string{"h1": "http/1.1", "h2": "h2", "h3": "h3"}[p]
				switch {
				case !ok:
					t.Fatal("PageConn found no connection")
				case ci.Protocol != p || ci.ALPN != wantALPN || ci.TLSVersion != wantTLS || ci.Resumed || ci.Used0RTT:
					t.Errorf("facts %+v, want %s, ALPN %s, TLS %s, not resumed", ci, p, wantALPN, wantTLS)
				case ci.Requests != 2 || ci.BodyBytes <= m.Objects[0].Size || ci.BytesSent <= ci.BodyBytes:
					t.Errorf("counters %+v", ci)
				case ci.Opened.Before(since) || !ci.Closed.IsZero() || ci.Remote == "":
					t.Errorf("times/remote %+v", ci)
				}
			})
		}
		if _, ok, _ := s.PageConn(time.Now()); ok {
			t.Error("PageConn(now) found a connection")
		}
	}
}

func TestResumptionTCP(t *testing.T) {
	dir, _ := writeTestPage(t, 1, 8)
	s := startServer(t, dir)
	cache := tls.NewLRUClientSessionCache(8)
	for i, wantResumed := range []bool{false, true} {
		cfg := clientTLS(s, "http/1.1")
		cfg.ClientSessionCache = cache
		conn, err := tls.Dial("tcp", s.Info().Addr("h1"), cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = conn.Write([]byte("GET / HTTP/1.1\r\nHost: plt.test\r\n\r\n"))
		_, _ = conn.Read(make([]byte, 1024)) // also takes the TLS 1.3 session ticket
		if err := s.CloseConnections(); err != nil {
			t.Fatal(err)
		}
		conn.Close()
		if got := s.Conns()[i]; got.Resumed != wantResumed || conn.ConnectionState().DidResume != wantResumed {
			t.Errorf("connection %d: server says resumed=%v, client %v; want %v", i, got.Resumed, conn.ConnectionState().DidResume, wantResumed)
		}
	}
}

func TestCloseConnections(t *testing.T) {
	dir, _ := writeTestPage(t, 1, 8)
	s := startServer(t, dir)
	clients := map[string]*testClient{}
	for _, p := range DefaultProtocols {
		clients[p] = newClient(t, s, p)
		clients[p].get(t, http.MethodGet, "/")
	}
	if st := s.Stats(); st.OpenConns != 3 {
		t.Fatalf("%d open connections, want 3", st.OpenConns)
	}
	if err := s.CloseConnections(); err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Conns() {
		if c.Closed.IsZero() {
			t.Errorf("%s connection %d still open", c.Protocol, c.ID)
		}
	}
	if st := s.Stats(); st.OpenConns != 0 {
		t.Errorf("%d open connections after CloseConnections", st.OpenConns)
	}
	for _, p := range DefaultProtocols {
		since := time.Now()
		var err error
		for range 2 { // a client may notice the close only on its first try
			var resp *http.Response
			if resp, err = clients[p].Get(clients[p].base + "/"); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body) // an unread body would close the h1 connection
				resp.Body.Close()
				break
			}
		}
		if err != nil {
			t.Fatalf("%s after close: %v", p, err)
		}
		if ci, ok, _ := s.PageConn(since); !ok || ci.Protocol != p || ci.Requests != 1 {
			t.Errorf("%s: page served by %+v, want a new connection", p, ci)
		}
	}
	if st := s.Stats(); st.Conns != 6 || st.OpenConns != 3 {
		t.Errorf("stats %+v, want 6 connections, 3 open: %+v", st, s.Conns())
	}
}

func TestCloseAndContext(t *testing.T) {
	dir, _ := writeTestPage(t, 1, 8)
	s, err := New(dir, WithAddr("127.0.0.1:0"), WithLogger(nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range DefaultProtocols {
		newClient(t, s, p).get(t, http.MethodGet, "/") // leave idle connections open
	}
	start := time.Now()
	cancel()
	_ = s.Close() // waits for the shutdown the cancel started
	t.Logf("shutdown with 3 idle connections took %v", time.Since(start))
	for _, c := range s.Conns() {
		if c.Closed.IsZero() {
			t.Errorf("%s connection still open after Close", c.Protocol)
		}
	}
	for _, a := range []string{s.Info().Addr("h1"), s.Info().Addr("h2")} {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts after Close", a)
		}
	}
	if err := s.Start(context.Background()); err == nil {
		t.Error("Start after Close succeeded")
	}
}

// fakeConn is a net.Conn that only remembers whether it was closed.
type fakeConn struct {
	net.Conn
	closed atomic.Bool
}

func (c *fakeConn) Close() error                { c.closed.Store(true); return nil }
func (c *fakeConn) RemoteAddr() net.Addr        { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9} }
func (c *fakeConn) Write(b []byte) (int, error) { return len(b), nil }

// fakeListener hands out n fakeConns, then fails.
type fakeListener struct {
	net.Listener
	conns chan *fakeConn
}

func (l *fakeListener) Accept() (net.Conn, error) {
	c, ok := <-l.conns
	if !ok {
		return nil, net.ErrClosed
	}
	return c, nil
}

// TestRegistryAcceptRacesCloseAll proves that a CloseConnections running right after a
// connection was registered closes its socket: the registry attaches the socket in the same
// locked step that registers it, so no entry can be marked closed with its socket left open.
func TestRegistryAcceptRacesCloseAll(t *testing.T) {
	reg := newRegistry()
	reg.afterAdd = func() { _ = reg.closeAll() }
	fc := &fakeConn{}
	fl := &fakeListener{conns: make(chan *fakeConn, 1)}
	fl.conns <- fc
	tl := &tcpListener{Listener: fl, protocol: "h1", reg: reg, log: slog.New(slog.DiscardHandler)}
	if _, err := tl.Accept(); err != nil {
		t.Fatal(err)
	}
	if !fc.closed.Load() {
		t.Fatal("CloseConnections between registration and use left the socket open")
	}
	if st := reg.stats(); st.OpenConns != 0 {
		t.Errorf("open connections = %d, want 0", st.OpenConns)
	}
}

// TestRegistryConcurrentAcceptCloseAll runs accepts and CloseConnections concurrently under
// -race: afterwards no connection is closed in the registry with its socket open.
func TestRegistryConcurrentAcceptCloseAll(t *testing.T) {
	const n = 500
	reg := newRegistry()
	fl := &fakeListener{conns: make(chan *fakeConn, n)}
	all := make([]*fakeConn, n)
	for i := range all {
		all[i] = &fakeConn{}
		fl.conns <- all[i]
	}
	close(fl.conns)
	tl := &tcpListener{Listener: fl, protocol: "h1", reg: reg, log: slog.New(slog.DiscardHandler)}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		defer close(stop)
		for {
			if _, err := tl.Accept(); err != nil {
				return
			}
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = reg.closeAll()
			}
		}
	})
	wg.Wait()
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for i, e := range reg.all {
		if !e.info.Closed.IsZero() && !all[i].closed.Load() {
			t.Errorf("connection %d is closed in the registry but its socket is open", e.info.ID)
		}
	}
}
