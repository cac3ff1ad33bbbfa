package server

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/pages"
)

// genPage generates the page of spec into a temporary directory.
func genPage(t *testing.T, spec string, seed int64) (string, *pages.Manifest) {
	t.Helper()
	sp, err := pages.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "page")
	m, err := pages.Generate(dir, sp, seed)
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// TestSitesTypedOrigins: a page of typed objects on two other origins is served with one
// certificate naming the sites and every origin host; each object is served on its origin (and
// the page's own objects on the page's host) with its type's Content-Type and exact length, and
// cross-origin objects only carry CORSHeaders.
func TestSitesTypedOrigins(t *testing.T) {
	dir, m := genPage(t, "1x2KB:css,1x1KB:js@o1,1x700B:font@o1,1x2KB:fetch,2x300B:fetch-chain@cdn,1x1KB:iframe@cdn,2x1KB", 4)
	plain, _ := genPage(t, "2x1KB", 4)
	s, err := NewSites([]Site{{Host: "plt.test", Dir: dir}, {Host: "p1.plt.test", Dir: plain}})
	if err != nil {
		t.Fatal(err)
	}
	origins := m.OriginHosts()
	want := append([]string{"plt.test", "p1.plt.test"}, origins...)
	if got := s.cert.leaf.DNSNames; !slices.Equal(got, want) || len(origins) != 2 {
		t.Errorf("certificate names %v, want %v", got, want)
	}
	if info := s.Info(); !slices.Equal(info.Sites[0].Origins, origins) || info.Sites[1].Origins != nil {
		t.Errorf("site origins %+v", info.Sites)
	}
	get := func(host, path string) *http.Response {
		req := httptest.NewRequest(http.MethodGet, "https://"+host+path, nil)
		rr := httptest.NewRecorder()
		s.handler.ServeHTTP(rr, req)
		return rr.Result()
	}
	ctypes := map[pages.ObjectType]string{"": "image/jpeg", pages.TypeCSS: "text/css; charset=utf-8",
		pages.TypeJS: "text/javascript; charset=utf-8", pages.TypeFont: "font/ttf", pages.TypeFetch: "application/json",
		pages.TypeFetchChain: "application/json", pages.TypeIframe: "text/html; charset=utf-8"}
	for _, o := range m.Objects {
		host := o.Origin
		if host == "" {
			host = "plt.test"
		}
		r := get(host, o.Path)
		body, _ := io.ReadAll(r.Body)
		if r.StatusCode != 200 || int64(len(body)) != o.Size || r.Header.Get("Content-Type") != ctypes[o.Type] {
			t.Errorf("%s%s: %d, %d bytes, %q; want 200, %d, %q", host, o.Path, r.StatusCode, len(body), r.Header.Get("Content-Type"), o.Size, ctypes[o.Type])
		}
		for k, v := range CORSHeaders {
			if got := r.Header.Get(k); (o.Origin != "") != (got == v) {
				t.Errorf("%s%s: %s %q (cross-origin %t)", host, o.Path, k, got, o.Origin != "")
			}
		}
	}
	if r := get("p1.plt.test", "/img/0001.jpg"); r.StatusCode != 200 || r.Header.Get("Timing-Allow-Origin") != "" {
		t.Errorf("image page object: %d, Timing-Allow-Origin %q", r.StatusCode, r.Header.Get("Timing-Allow-Origin"))
	}
	if r := get("o9."+pages.PageID(m.Items, 4)+".plt.test", "/index.html"); r.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("an origin the page does not use: %d, want 421", r.StatusCode)
	}
}

// TestOriginsRefused: an origin host that collides with a site's host is refused, as are other
// origins on the ngtcp2 stack (one host per gtlsserver).
func TestOriginsRefused(t *testing.T) {
	dir, m := genPage(t, "1x1KB@o1", 1)
	if _, err := NewSites([]Site{{Host: "plt.test", Dir: dir}, {Host: m.OriginHosts()[0], Dir: dir}}); !errors.Is(err, ErrBadOption) {
		t.Errorf("origin host as a site host: %v", err)
	}
	if _, err := New(dir, WithH3Stack(StackNgtcp2, "")); !errors.Is(err, ErrBadOption) {
		t.Errorf("origins on ngtcp2: %v", err)
	}
}

// TestHostConns: a connection records every host its requests were for, and HostConns counts
// connections per host, those that served several as shared (coalesced).
func TestHostConns(t *testing.T) {
	dir, m := genPage(t, "1x1KB,1x1KB@o1", 1)
	s := startServer(t, dir)
	since := time.Now()
	c := newClient(t, s, "h2")
	c.get(t, http.MethodGet, "/img/0001.jpg")
	origin := m.OriginHosts()[0]
	req, err := http.NewRequest(http.MethodGet, c.base+"/img/0002.jpg", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = strings.ToUpper(origin) + ":443"
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(body) != 1000 || resp.Header.Get("Timing-Allow-Origin") != "*" {
		t.Fatalf("origin object: %d, %d bytes, %v", resp.StatusCode, len(body), resp.Header)
	}
	want := []HostConns{{Host: "plt.test", Conns: 1, Shared: 1}, {Host: origin, Conns: 1, Shared: 1}}
	if got := s.HostConns(since); !slices.Equal(got, want) {
		t.Errorf("HostConns = %+v, want %+v", got, want)
	}
	if got := s.HostConns(time.Now()); len(got) != 0 {
		t.Errorf("HostConns after the connection opened = %+v", got)
	}
	if conns := s.Conns(); len(conns) != 1 || !slices.Equal(conns[0].Hosts, []string{"plt.test", origin}) {
		t.Errorf("conns %+v", conns)
	}
}
