package pages

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// testHAREntry is one entry of a HAR written by writeTestHAR.
type testHAREntry struct {
	method, url string
	status      int
	mime        string
	body        []byte // nil: no content.text
	size        int64  // content.size (len(body) when body is set)
	headers     map[string]string
}

// writeTestHAR writes a HAR 1.2 of entries (the first a document) and returns its path.
func writeTestHAR(t *testing.T, entries []testHAREntry) string {
	t.Helper()
	var es []map[string]any
	for i, e := range entries {
		content := map[string]any{"size": e.size, "mimeType": e.mime}
		if e.body != nil {
			content["size"] = len(e.body)
			content["text"] = base64.StdEncoding.EncodeToString(e.body)
			content["encoding"] = "base64"
			if utf8.Valid(e.body) && i != 1 { // text, as DevTools writes UTF-8; entry 1 and binary bodies base64
				content["text"], content["encoding"] = string(e.body), nil
			}
		}
		var hs []map[string]string
		for k, v := range e.headers {
			hs = append(hs, map[string]string{"name": k, "value": v})
		}
		rt := "other"
		if i == 0 {
			rt = "document"
		}
		es = append(es, map[string]any{"pageref": "page_1", "_resourceType": rt,
			"request":  map[string]any{"method": e.method, "url": e.url, "headers": []any{}},
			"response": map[string]any{"status": e.status, "headers": hs, "content": content, "bodySize": len(e.body)}})
	}
	b, err := json.Marshal(map[string]any{"log": map[string]any{"version": "1.2", "entries": es}})
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "t.har")
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

var replayEntries = []testHAREntry{
	{method: "GET", url: "https://plt.test:44481/index.html", status: 200, mime: "text/html", body: []byte("<!DOCTYPE html><p>hi")},
	{method: "GET", url: "https://plt.test:44481/app.js?v=1&lang=en", status: 200, mime: "text/javascript", body: []byte("self.a=1"),
		headers: map[string]string{"Content-Encoding": "br", "Content-Length": "3", "Connection": "keep-alive", "Alt-Svc": `h3=":44481"`, "X-Kept": "yes"}},
	{method: "GET", url: "https://cdn.example.test/api?id=1&t=100", status: 200, mime: "application/json", body: []byte(`{"id":1}`)},
	{method: "GET", url: "https://cdn.example.test/api?id=2&t=100", status: 200, mime: "application/json", body: []byte(`{"id":2}`)},
	{method: "GET", url: "https://cdn.example.test/img.jpg", status: 200, mime: "image/jpeg", body: []byte{0xff, 0xd8, 0xff, 0x00, 0x80}},
	{method: "POST", url: "https://cdn.example.test/log", status: 204, mime: "", body: []byte{}},
	{method: "GET", url: "https://cdn.example.test/lost.css", status: 200, mime: "text/css", size: 4000}, // body not recorded
}

// TestArchiveMatch checks the matching rules on real values: exact (query parameters in any
// order, host case and port ignored), query-tolerant (most shared parameters), HEAD from GET,
// and misses (another method, path or host).
func TestArchiveMatch(t *testing.T) {
	a, err := ReadArchive(writeTestHAR(t, replayEntries))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                      string
		method, host, path, query string
		wantURL                   string
		wantKind                  MatchKind
	}{
		{"exact", "GET", "plt.test", "/app.js", "v=1&lang=en", "https://plt.test:44481/app.js?v=1&lang=en", MatchExact},
		{"exact, parameters reordered", "GET", "plt.test", "/app.js", "lang=en&v=1", "https://plt.test:44481/app.js?v=1&lang=en", MatchExact},
		{"exact, host case and port ignored", "GET", "PLT.test:8443", "/index.html", "", "https://plt.test:44481/index.html", MatchExact},
		{"query differs: most shared parameters", "GET", "cdn.example.test", "/api", "id=2&t=999", "https://cdn.example.test/api?id=2&t=100", MatchQuery},
		{"query differs: tie gives the first recorded", "GET", "cdn.example.test", "/api", "t=5", "https://cdn.example.test/api?id=1&t=100", MatchQuery},
		{"query added", "GET", "cdn.example.test", "/img.jpg", "cb=123", "https://cdn.example.test/img.jpg", MatchQuery},
		{"HEAD from GET", "HEAD", "cdn.example.test", "/img.jpg", "", "https://cdn.example.test/img.jpg", MatchExact},
		{"POST recorded", "POST", "cdn.example.test", "/log", "", "https://cdn.example.test/log", MatchExact},
		{"method mismatch", "POST", "plt.test", "/index.html", "", "", MatchMiss},
		{"other path", "GET", "plt.test", "/missing.js", "", "", MatchMiss},
		{"other host", "GET", "other.test", "/index.html", "", "", MatchMiss},
		{"body not recorded", "GET", "cdn.example.test", "/lost.css", "", "", MatchMiss},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, kind := a.Match(tt.method, tt.host, tt.path, tt.query)
			got := ""
			if e != nil {
				got = e.URL
			}
			if got != tt.wantURL || kind != tt.wantKind {
				t.Errorf("Match(%s %s %s ?%s) = %q, %q; want %q, %q", tt.method, tt.host, tt.path, tt.query, got, kind, tt.wantURL, tt.wantKind)
			}
		})
	}
}

// TestReadArchive checks what an archive holds: hosts, bodies (text and base64), the headers
// replayed, the entries left out, and the manifest a replayed load is verified against.
func TestReadArchive(t *testing.T) {
	a, err := ReadArchive(writeTestHAR(t, replayEntries))
	if err != nil {
		t.Fatal(err)
	}
	if a.DocHost != "plt.test" || a.DocPath != "/index.html" || len(a.Hosts) != 2 || a.Hosts[1] != "cdn.example.test" || a.NoBody != 1 || len(a.Entries) != 6 {
		t.Errorf("doc %s%s, hosts %v, %d without body, %d entries; want plt.test/index.html, [plt.test cdn.example.test], 1, 6",
			a.DocHost, a.DocPath, a.Hosts, a.NoBody, len(a.Entries))
	}
	js, _ := a.Match("GET", "plt.test", "/app.js", "v=1&lang=en")
	if string(js.Body) != "self.a=1" || js.Header.Get("Content-Encoding") != "" || js.Header.Get("Content-Length") != "" ||
		js.Header.Get("Connection") != "" || js.Header.Get("Alt-Svc") != "" || js.Header.Get("X-Kept") != "yes" || js.Header.Get("Content-Type") != "text/javascript" {
		t.Errorf("app.js: body %q, headers %v; want self.a=1 with X-Kept and Content-Type only", js.Body, js.Header)
	}
	img, _ := a.Match("GET", "cdn.example.test", "/img.jpg", "")
	if string(img.Body) != "\xff\xd8\xff\x00\x80" {
		t.Errorf("img.jpg body %x, want ffd8ff0080 (base64 decoded)", img.Body)
	}
	m := a.Manifest()
	// Objects: app.js (own origin), /api (first of its two), img.jpg; not the POST, not lost.css.
	if len(m.Objects) != 3 || m.Index != "/index.html" || m.TotalBytes != 8+8+5 ||
		m.Objects[0].Origin != "" || m.Objects[1].Origin != "cdn.example.test" || m.Objects[1].Size != 8 {
		t.Errorf("manifest: index %s, %d bytes, objects %+v", m.Index, m.TotalBytes, m.Objects)
	}
	if got := m.OriginHosts(); len(got) != 1 || got[0] != "cdn.example.test" {
		t.Errorf("origin hosts %v, want [cdn.example.test]", got)
	}
}

// TestReadArchiveRefuses checks the inputs replay refuses, each with ErrNotHAR.
func TestReadArchiveRefuses(t *testing.T) {
	noBody := writeTestHAR(t, []testHAREntry{{method: "GET", url: "https://a.test/", status: 200, mime: "text/html", size: 100}})
	notJSON := filepath.Join(t.TempDir(), "x.har")
	if err := os.WriteFile(notJSON, []byte("<html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	ipHost := writeTestHAR(t, []testHAREntry{{method: "GET", url: "http://127.0.0.1:8080/", status: 200, mime: "text/html", body: []byte("<p>")}})
	files := map[string]string{"main document without body": noBody, "not JSON": notJSON, "IP address host": ipHost}
	// hosts a browser reads as IPv4 addresses (WHATWG URL Standard's IPv4 parser), accepted on 3e73eb5
	for _, h := range []string{"127.1", "2130706433", "0x7f000001", "a.1", "a.b.0x", "x.017", "a.1."} {
		files["IPv4 number host "+h] = writeTestHAR(t, []testHAREntry{{method: "GET", url: "https://" + h + "/", status: 200, mime: "text/html", body: []byte("<p>")}})
	}
	for name, file := range files {
		t.Run(name, func(t *testing.T) {
			if _, err := ReadArchive(file); !errors.Is(err, ErrNotHAR) {
				t.Errorf("ReadArchive: %v, want ErrNotHAR", err)
			}
		})
	}
	if _, err := ReadArchive(filepath.Join(t.TempDir(), "missing.har")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
}

// TestEndsInNumber checks the WHATWG URL Standard's "ends in a number" rule on hosts that are
// and are not IPv4 numbers to a browser.
func TestEndsInNumber(t *testing.T) {
	for h, want := range map[string]bool{"127.1": true, "2130706433": true, "0x7f000001": true, "a.1": true, "a.0x": true,
		"a.017": true, "a.1.": true, "a.09": true, "a.0xg": false, "plt.test": false, "1a.test": false, "a.b1": false, "x": false} {
		if got := endsInNumber(h); got != want {
			t.Errorf("endsInNumber(%q) = %v, want %v", h, got, want)
		}
	}
}

// FuzzReadArchive feeds arbitrary bytes to ReadArchive: it never panics, and every entry of an
// archive it accepts answers its own request.
func FuzzReadArchive(f *testing.F) {
	f.Add([]byte(`{"log":{"entries":[{"_resourceType":"document","request":{"method":"GET","url":"https://a.test/?q=1"},"response":{"status":200,"content":{"size":1,"text":"x"}}}]}}`))
	f.Add([]byte(`{"log":{"entries":[{"request":{"url":"https://a.test/"},"response":{"status":200,"content":{"mimeType":"text/html","text":"eA==","encoding":"base64"}}},{"request":{"method":"head","url":"http://B.test:80/x?a&a=1"},"response":{"status":304,"content":{}}}]}}`))
	f.Add([]byte(`{"log":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		name := filepath.Join(t.TempDir(), "f.har")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		a, err := ReadArchive(name)
		if err != nil {
			return
		}
		for _, e := range a.Entries {
			got, kind := a.Match(e.Method, e.Host, e.Path, e.Query)
			if got == nil || kind != MatchExact {
				t.Errorf("entry %s %s%s?%s: Match gives %v, %q; want an exact match", e.Method, e.Host, e.Path, e.Query, got, kind)
			}
		}
		_ = a.Manifest()
		_ = a.ReplaySpec()
	})
}
