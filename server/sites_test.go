package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pltlab/pltlab/pages"
)

// TestSites: one server serves two page sets under their own hostnames, chosen by the request's
// Host, with a certificate naming both; another host is 421 (Misdirected Request); an object
// over MemObjectMax is served from its file, whole, with its exact Content-Length.
func TestSites(t *testing.T) {
	a, ma := writeTestPage(t, 2, 16)
	b, mb := writeTestPage(t, 3, 24)
	big := filepath.Join(b, "img", "big.jpg")
	payload := make([]byte, MemObjectMax+12345)
	copy(payload, []byte{0xff, 0xd8})
	if err := os.WriteFile(big, payload, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := NewSites([]Site{{Host: "plt.test", Dir: a}, {Host: "p1.plt.test", Dir: b}})
	if err != nil {
		t.Fatal(err)
	}
	s.sites["p1.plt.test"].objects["/img/big.jpg"] = object{file: big, size: int64(len(payload)), contentType: "image/jpeg"}
	if got := s.cert.leaf.DNSNames; len(got) != 2 || got[0] != "plt.test" || got[1] != "p1.plt.test" {
		t.Errorf("certificate names %v", got)
	}
	get := func(host, path string) (int, []byte, string) {
		req := httptest.NewRequest(http.MethodGet, "https://"+host+":8443"+path, nil)
		rr := httptest.NewRecorder()
		s.handler.ServeHTTP(rr, req)
		body, _ := io.ReadAll(rr.Result().Body)
		return rr.Code, body, rr.Header().Get("Content-Length")
	}
	for _, tc := range []struct {
		host string
		m    *pages.Manifest
	}{{"plt.test", ma}, {"p1.plt.test", mb}} {
		for _, o := range tc.m.Objects {
			code, body, _ := get(tc.host, o.Path)
			if code != 200 || int64(len(body)) != o.Size {
				t.Errorf("%s%s: %d, %d bytes, want 200 and %d", tc.host, o.Path, code, len(body), o.Size)
			}
		}
	}
	if code, _, _ := get("plt.test", "/img/0003.jpg"); code != 404 {
		t.Errorf("page a's missing object: %d, want 404", code)
	}
	if code, _, _ := get("other.test", "/index.html"); code != http.StatusMisdirectedRequest {
		t.Errorf("another host: %d, want 421", code)
	}
	code, body, cl := get("p1.plt.test", "/img/big.jpg")
	if code != 200 || len(body) != len(payload) || cl != itoa(len(payload)) {
		t.Errorf("a large object from its file: %d, %d bytes, Content-Length %s", code, len(body), cl)
	}
	if info := s.Info(); len(info.Sites) != 2 || info.Sites[1].Host != "p1.plt.test" || info.Sites[1].Manifest != mbFrom(s) {
		t.Errorf("info sites %+v", info.Sites)
	}
}

func mbFrom(s *Server) *pages.Manifest { return s.sites["p1.plt.test"].manifest }

func itoa(n int) string { return strconv.Itoa(n) }
