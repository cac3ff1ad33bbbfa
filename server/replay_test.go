package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/pages"
)

// writeReplayHAR writes a HAR of a page on plt.test with a script on its own host and an image
// on o1.test, bodies recorded, and returns it read as an archive.
func writeReplayHAR(t *testing.T) *pages.Archive {
	t.Helper()
	entry := func(u, rt, mime, text string, hdr ...string) map[string]any {
		hs := []map[string]string{}
		for i := 0; i+1 < len(hdr); i += 2 {
			hs = append(hs, map[string]string{"name": hdr[i], "value": hdr[i+1]})
		}
		return map[string]any{"pageref": "page_1", "_resourceType": rt,
			"request":  map[string]any{"method": "GET", "url": u},
			"response": map[string]any{"status": 200, "headers": hs, "content": map[string]any{"size": len(text), "mimeType": mime, "text": text}}}
	}
	har := map[string]any{"log": map[string]any{"version": "1.2", "entries": []any{
		entry("https://plt.test:41000/index.html", "document", "text/html", "<!DOCTYPE html><script src=/a.js></script>", "Content-Type", "text/html"),
		entry("https://plt.test:41000/a.js?v=3", "script", "text/javascript", "self.x=1", "Content-Encoding", "gzip", "Alt-Svc", `h3=":41000"`),
		entry("https://o1.test/i.txt", "image", "text/plain", "image-bytes", "Access-Control-Allow-Origin", "*"),
	}}}
	b, err := json.Marshal(har)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "r.har")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := pages.ReadArchive(name)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestReplayServe serves an archive over h1, h2 and h3: recorded bodies and headers on every
// recorded host (the site's host standing for the main document's), a query-tolerant match, and
// a miss answered 404 with ReplayMissHeader, all counted by ReplayStats; Chromium's favicon
// request is answered 404 and not counted.
func TestReplayServe(t *testing.T) {
	a := writeReplayHAR(t)
	s, err := NewSites([]Site{{Host: "plt.test", Archive: a}}, WithAddr("127.0.0.1:0"), WithLogger(testLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if o := s.Info().Sites[0].Origins; len(o) != 1 || o[0] != "o1.test" {
		t.Fatalf("origins %v, want [o1.test]", o)
	}
	if dns := s.Certificate().DNSNames; strings.Join(dns, ",") != "plt.test,o1.test" {
		t.Fatalf("certificate names %v, want plt.test and o1.test", dns)
	}
	for _, proto := range []string{"h1", "h2", "h3"} {
		t.Run(proto, func(t *testing.T) {
			since := time.Now()
			c := newClient(t, s, proto)
			get := func(host, path string) (*http.Response, string) {
				req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				if host != "" {
					req.Host = host
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("GET %s%s: %v", host, path, err)
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				return resp, string(b)
			}
			resp, body := get("", "/index.html")
			if resp.StatusCode != 200 || !strings.HasPrefix(body, "<!DOCTYPE html>") || resp.Header.Get("Content-Type") != "text/html" {
				t.Errorf("index: %d %q %v", resp.StatusCode, body, resp.Header)
			}
			resp, body = get("", "/a.js?v=4")
			if resp.StatusCode != 200 || body != "self.x=1" || resp.Header.Get("Content-Encoding") != "" || resp.ContentLength != 8 {
				t.Errorf("a.js (query differs): %d %q, length %d, headers %v", resp.StatusCode, body, resp.ContentLength, resp.Header)
			}
			resp, body = get("o1.test", "/i.txt")
			if resp.StatusCode != 200 || body != "image-bytes" || resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Timing-Allow-Origin") != "*" {
				t.Errorf("o1.test/i.txt: %d %q %v", resp.StatusCode, body, resp.Header)
			}
			resp, _ = get("o1.test", "/nope.js")
			if resp.StatusCode != 404 || resp.Header.Get(ReplayMissHeader) != "miss" {
				t.Errorf("miss: %d %v, want 404 with %s: miss", resp.StatusCode, resp.Header, ReplayMissHeader)
			}
			if resp, _ = get("", FaviconPath); resp.StatusCode != 404 || resp.Header.Get(ReplayMissHeader) != "" {
				t.Errorf("favicon: %d %v, want 404 without %s (Chromium's own request, not a miss)", resp.StatusCode, resp.Header, ReplayMissHeader)
			}
			st := s.ReplayStats(since)
			if st.Hits != 3 || st.QueryMatches != 1 || st.Misses != 1 || len(st.Missed) != 1 || st.Missed[0] != "GET https://o1.test/nope.js" {
				t.Errorf("stats %+v, want 3 hits (1 by query), 1 miss GET https://o1.test/nope.js", st)
			}
		})
	}
}
