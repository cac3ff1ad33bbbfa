package pages

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFromHARFixtures derives the pages of the HARs pltlab itself recorded (browser/testdata/har:
// the 8x20KB image page loaded over h1, h2 and h3).
func TestFromHARFixtures(t *testing.T) {
	tests := []struct {
		file, spec string
		sources    map[string]int
	}{
		{"h1.har", "8x20KB", map[string]int{"bodySize": 8}},
		{"h3.har", "8x20KB", map[string]int{"bodySize": 8}},
		// Chromium's h2 bodySize is 0 for five images and counts some frame bytes for three.
		{"h2.har", "1x20027B,5x20KB,1x19166B,1x20027B", map[string]int{"bodySize": 3, "content.size": 5}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("..", "browser", "testdata", "har", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			h, err := FromHAR(f)
			if err != nil {
				t.Fatal(err)
			}
			if h.Spec != tt.spec || h.Objects != 8 || h.Entries != 9 || !reflect.DeepEqual(h.Types, map[string]int{"img": 8}) ||
				len(h.Origins) != 0 || !reflect.DeepEqual(h.SizeSource, tt.sources) {
				t.Errorf("got spec %s, %d objects of %d entries, types %v, origins %v, sizes from %v; want %s, 8 of 9, 8 img, none, %v",
					h.Spec, h.Objects, h.Entries, h.Types, h.Origins, h.SizeSource, tt.spec, tt.sources)
			}
			if !strings.HasPrefix(h.Document, "https://plt.test:") || !strings.HasSuffix(h.Document, "/index.html") {
				t.Errorf("document %s", h.Document)
			}
			if len(h.NotReproduced) != 1 || h.NotReproduced[0].What != "main document" {
				t.Errorf("not reproduced: %v; want only the main document", h.NotReproduced)
			}
			if got := h.PageSpec().String(); got != tt.spec {
				t.Errorf("PageSpec %s", got)
			}
			if got := (&HARShape{Spec: h.Spec}).PageSpec().String(); got != tt.spec {
				t.Errorf("PageSpec of a decoded shape %s", got)
			}
		})
	}
}

// synthEntry builds one synthetic HAR entry; init is the initiator's URL ("" for none), stack
// puts it on a script stack instead of in "url".
func synthEntry(u, rt, mime string, status, body, content int64, init string, stack bool) map[string]any {
	e := map[string]any{
		"request":  map[string]any{"url": u, "cookies": []any{}, "headers": []any{}},
		"response": map[string]any{"status": status, "bodySize": body, "content": map[string]any{"size": content, "mimeType": mime}},
	}
	if rt != "" {
		e["_resourceType"] = rt
	}
	switch {
	case init != "" && stack:
		e["_initiator"] = map[string]any{"type": "script", "stack": map[string]any{"callFrames": []any{map[string]any{"url": init}}}}
	case init != "":
		e["_initiator"] = map[string]any{"type": "parser", "url": init}
	}
	return e
}

func synthHAR(t *testing.T, entries ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"log": map[string]any{"version": "1.2", "entries": entries}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFromHARMixed derives a page from a synthetic HAR with every kind of entry: a redirect,
// several hosts, initiator chains, a fetch chain, failed and unknown entries, bodySize -1,
// clamped sizes, cookies, compression, an iframe and what it loaded.
func TestFromHARMixed(t *testing.T) {
	const w, cdn = "https://www.example.com/", "https://cdn.example.net/"
	doc := synthEntry(w, "document", "text/html", 200, 5000, 5000, "", false)
	doc["response"].(map[string]any)["cookies"] = []any{map[string]any{"name": "sid", "value": "1"}}
	css := synthEntry(w+"style.css", "stylesheet", "text/css", 200, 20000, 80000, w, false)
	css["response"].(map[string]any)["headers"] = []any{map[string]any{"name": "Content-Encoding", "value": "br"}}
	har := synthHAR(t,
		synthEntry("http://example.com/", "document", "text/html", 301, 0, 0, "", false),
		doc,
		css,
		synthEntry(cdn+"app.js", "script", "application/javascript", 200, -1, 50000, w, false),
		synthEntry("https://fonts.example.org/f.woff2", "font", "font/woff2", 200, 30000, 30000, w+"style.css", false),
		synthEntry(cdn+"logo.png", "image", "image/png", 200, 100, 100, w, false),
		synthEntry(cdn+"a.png", "image", "image/png", 200, 100, 100, w, false),
		synthEntry(w+"api/a", "fetch", "application/json", 200, 1000, 1000, cdn+"app.js", true),
		synthEntry(w+"api/b", "fetch", "application/json", 200, 1000, 1000, w+"api/a", true),
		synthEntry(w+"api/c", "xhr", "application/json", 200, 2000, 2000, cdn+"app.js", true),
		synthEntry(w+"missing.js", "script", "text/javascript", 404, 100, 100, w, false),
		synthEntry("https://tracker.example/p", "ping", "", 0, 0, 0, w, false),
		synthEntry(w+"v.mp4", "media", "video/mp4", 206, 500000, 500000, w, false),
		synthEntry("wss://www.example.com/ws", "websocket", "", 101, 0, 0, cdn+"app.js", true),
		synthEntry("https://ads.example.com/frame.html", "document", "text/html", 200, 4000, 4000, w, false),
		synthEntry("https://ads.example.com/ad.jpg", "image", "image/jpeg", 200, 10000, 10000, "https://ads.example.com/frame.html", false),
		synthEntry("data:image/png;base64,iVBORw0KGgo=", "image", "image/png", 200, 0, 8, w, false),
		synthEntry(w+"x.bin", "", "application/octet-stream", 200, 700, 700, w, false),
	)
	h, err := FromHAR(strings.NewReader(har))
	if err != nil {
		t.Fatal(err)
	}
	const want = "1x20KB:css,1x50KB:js@o1,1x30KB:font@o2,2x398B@o1,2x1KB:fetch-chain,1x2KB:fetch,1x4KB:iframe@o3(1x10KB)"
	if h.Spec != want {
		t.Errorf("spec\n %s, want\n %s", h.Spec, want)
	}
	if h.Document != w || h.Entries != 18 || h.Objects != 10 || h.TotalBytes != 20000+50000+30000+796+2000+2000+4000+10000 {
		t.Errorf("document %s, %d entries, %d objects, %d B", h.Document, h.Entries, h.Objects, h.TotalBytes)
	}
	if want := map[string]int{"css": 1, "js": 1, "font": 1, "img": 3, "fetch-chain": 2, "fetch": 1, "iframe": 1}; !reflect.DeepEqual(h.Types, want) {
		t.Errorf("types %v, want %v", h.Types, want)
	}
	wantOrigins := []HAROrigin{{"o1", "cdn.example.net", 3, 50796}, {"o2", "fonts.example.org", 1, 30000}, {"o3", "ads.example.com", 2, 14000}}
	if !reflect.DeepEqual(h.Origins, wantOrigins) {
		t.Errorf("origins %v, want %v", h.Origins, wantOrigins)
	}
	if want := map[string]int{"bodySize": 9, "content.size": 1}; !reflect.DeepEqual(h.SizeSource, want) {
		t.Errorf("size sources %v, want %v", h.SizeSource, want)
	}
	gaps := map[string]int{}
	left := map[string]bool{}
	for _, g := range h.NotReproduced {
		gaps[g.What], left[g.What] = g.Count, g.LeftOut
	}
	wantGaps := map[string]int{"main document": 1, "redirects": 1, "failed or blocked entries": 2, "non-HTTP entries": 2,
		"entries of unknown type media": 1, "entries of unknown type mime application/octet-stream": 1,
		"sizes clamped (img)": 2, "dependency depth": 4, "async/defer": 1, "script behaviour": 1,
		"iframe contents": 1, "cookies": 1, "compression": 1, "image formats": 2}
	if !reflect.DeepEqual(gaps, wantGaps) {
		t.Errorf("not reproduced %v,\nwant %v", gaps, wantGaps)
	}
	if !left["redirects"] || !left["failed or blocked entries"] || left["dependency depth"] || left["sizes clamped (img)"] {
		t.Errorf("left_out flags %v", left)
	}
	for _, g := range h.NotReproduced {
		if g.What == "script behaviour" && !strings.Contains(g.Reason, "third-party, on other origins: 1") {
			t.Errorf("script behaviour: %s", g.Reason)
		}
		if g.What == "dependency depth" && !strings.Contains(g.Reason, "depth lost: at most 1") {
			t.Errorf("dependency depth: %s", g.Reason)
		}
	}
	var report strings.Builder
	if err := h.Report(&report, "x.har"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(report.String(), "page shape of x.har: "+want+" (10 objects, 119 KB)\nnot reproduced:\n  - main document: 1 (kept, approximated): ") ||
		!strings.Contains(report.String(), "\n  - redirects: 1 (left out): 3xx entries") {
		t.Errorf("report:\n%s", report.String())
	}
	if _, err := ParseSpec(h.Spec); err != nil {
		t.Errorf("spec does not parse: %v", err)
	}
}

// TestFromHARChains covers fetch dependencies that do and do not fit a fetch-chain item.
func TestFromHARChains(t *testing.T) {
	const w = "https://www.example.com/"
	doc := synthEntry(w, "", "text/html; charset=utf-8", 200, 3000, 3000, "", false)
	fetch := func(name string, size int64, init string) map[string]any {
		return synthEntry(w+name, "fetch", "application/json", 200, size, size, init, true)
	}
	tests := []struct {
		name    string
		entries []map[string]any
		spec    string
		lost    int
	}{
		{"chain of three", []map[string]any{doc, fetch("a", 1000, ""), fetch("b", 1000, w+"a"), fetch("c", 1000, w+"b")}, "3x1KB:fetch-chain", 0},
		{"sizes differ", []map[string]any{doc, fetch("a", 1000, ""), fetch("b", 2000, w+"a")}, "1x1KB:fetch,1x2KB:fetch", 1},
		{"branches", []map[string]any{doc, fetch("a", 1000, ""), fetch("b", 1000, w+"a"), fetch("c", 1000, w+"a")}, "3x1KB:fetch", 2},
		{"two chains", []map[string]any{doc, fetch("a", 1000, ""), fetch("b", 1000, w+"a"), fetch("c", 1000, ""), fetch("d", 1000, w+"c")}, "2x1KB:fetch-chain,2x1KB:fetch-chain", 0},
		{"cycle", []map[string]any{doc, fetch("a", 1000, w+"b"), fetch("b", 1000, w+"a")}, "2x1KB:fetch", 2},
		{"mime types", []map[string]any{doc,
			synthEntry(w+"s.css", "", "text/css", 200, 500, 500, "", false),
			synthEntry(w+"s.js", "", "text/javascript", 200, 500, 500, "", false),
			synthEntry(w+"f.woff", "", "application/font-woff", 200, 5000, 5000, "", false),
			synthEntry(w+"i.gif", "", "image/gif", 200, 5000, 5000, "", false),
			synthEntry(w+"d.json", "", "application/ld+json", 200, 500, 500, "", false),
			synthEntry(w+"f.html", "", "text/html", 200, 500, 500, "", false),
		}, "1x500B:css,1x500B:js,1x5KB:font,1x5KB,1x500B:fetch,1x500B:iframe", 0},
		{"iframe holds objects", []map[string]any{doc,
			synthEntry(w+"f.html", "document", "text/html", 200, 300, 300, w, false),
			synthEntry(w+"in.jpg", "image", "image/jpeg", 200, 1000, 1000, w+"f.html", false),
			synthEntry(w+"in.css", "stylesheet", "text/css", 200, 500, 500, w+"f.html", false),
			synthEntry(w+"in2.jpg", "image", "image/jpeg", 200, 1000, 1000, w+"f.html", false),
			synthEntry("https://cdn.example.net/out.jpg", "image", "image/jpeg", 200, 1000, 1000, w+"f.html", false),
			synthEntry(w+"in.json", "fetch", "application/json", 200, 500, 500, w+"f.html", true),
			synthEntry(w+"f.html", "document", "text/html", 200, 300, 300, w, false),
		}, "1x1184B:iframe(1x1KB,1x500B:css,1x1KB),1x1KB@o1,1x500B:fetch,1x300B:iframe", 2},
	}
	second := synthEntry(w+"p2.jpg", "image", "image/jpeg", 200, 5000, 5000, "", false)
	second["pageref"] = "page_2"
	tests = append(tests, struct {
		name    string
		entries []map[string]any
		spec    string
		lost    int
	}{"other page", []map[string]any{doc, fetch("a", 1000, ""), second}, "1x1KB:fetch", 0})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := FromHAR(strings.NewReader(synthHAR(t, tt.entries...)))
			if err != nil {
				t.Fatal(err)
			}
			lost := 0
			for _, g := range h.NotReproduced {
				if g.What == "dependency depth" {
					lost = g.Count
				}
			}
			if h.Spec != tt.spec || lost != tt.lost {
				t.Errorf("spec %s, depth lost by %d; want %s, %d", h.Spec, lost, tt.spec, tt.lost)
			}
		})
	}
}

func TestFromHARErrors(t *testing.T) {
	img := synthEntry("https://www.example.com/a.jpg", "image", "image/jpeg", 200, 1000, 1000, "", false)
	doc := synthEntry("https://www.example.com/", "document", "text/html", 200, 1000, 1000, "", false)
	failedDoc := synthEntry("https://www.example.com/", "document", "text/html", 500, 1000, 1000, "", false)
	tests := []struct{ name, in, want string }{
		{"empty", "", "not JSON of a HAR (EOF)"},
		{"not JSON", "hello", "not JSON of a HAR (invalid character 'h'"},
		{"JSON array", "[1,2]", "not JSON of a HAR (json: cannot unmarshal array"},
		{"no log", `{"entries":[]}`, `no "log" object: not a HAR`},
		{"no entries", `{"log":{"entries":[]}}`, `no entries in "log.entries"`},
		{"no document", synthHAR(t, img), "no document entry with a 2xx status among its 1 entries"},
		{"failed document", synthHAR(t, failedDoc, img), "no document entry with a 2xx status among its 2 entries"},
		{"document only", synthHAR(t, doc), "no entry of the HAR besides the main document https://www.example.com/ becomes an object (1 entries)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromHAR(strings.NewReader(tt.in))
			if !errors.Is(err, ErrNotHAR) || !strings.Contains(err.Error(), tt.want) ||
				!strings.HasSuffix(err.Error(), acceptedHAR) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v; want ErrNotHAR, one line with %q and what is accepted", err, tt.want)
			}
		})
	}
}

// FuzzFromHAR: any input gives either ErrNotHAR (or a read error) or a spec that ParseSpec
// reads back to the same canonical form, within the page limits.
func FuzzFromHAR(f *testing.F) {
	for _, name := range []string{"h1.har", "h2.har"} {
		b, err := os.ReadFile(filepath.Join("..", "browser", "testdata", "har", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`{"log":{"entries":[{"request":{"url":"https://a/"},"response":{"status":200,"content":{"mimeType":"text/html"}}},` +
		`{"request":{"url":"https://b/x"},"response":{"status":200,"bodySize":-1,"content":{"size":9,"mimeType":"font/woff2"}},"_initiator":{"url":"https://a/"}}]}}`)
	f.Fuzz(func(t *testing.T, in string) {
		h, err := FromHAR(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrNotHAR) {
				t.Fatalf("error %v does not match ErrNotHAR", err)
			}
			return
		}
		s, err := ParseSpec(h.Spec)
		if err != nil || s.String() != h.Spec || s.Objects() != h.Objects || s.TotalBytes() != h.TotalBytes {
			t.Fatalf("spec %s: %v, %d objects %d B; shape says %d, %d", h.Spec, err, s.Objects(), s.TotalBytes(), h.Objects, h.TotalBytes)
		}
	})
}

// TestParseHARInput: a UTF-8 byte order mark is skipped (on 3e73eb5 FromHAR refused it with
// "invalid character 'ï'" while report accepts one), anything after the HAR's object is refused
// (ignored on 3e73eb5), and endless input is refused at the cap (MaxHARBytes for FromHAR).
func TestParseHARInput(t *testing.T) {
	const har = `{"log":{"entries":[{"request":{"url":"https://a.test/"},"response":{"status":200,"content":{"mimeType":"text/html","text":"<p>"}}}]}}`
	if h, err := ParseHAR([]byte("\xef\xbb\xbf" + har)); err != nil || len(h.entries) != 1 {
		t.Errorf("HAR with a BOM: %v", err)
	}
	for name, in := range map[string]string{"second HAR": har + "\n" + har, "junk": har + " x", "second value": har + ` {}`} {
		if _, err := ParseHAR([]byte(in)); !errors.Is(err, ErrNotHAR) || !strings.Contains(err.Error(), "more after the HAR's JSON object") {
			t.Errorf("%s: %v, want ErrNotHAR on what follows the HAR", name, err)
		}
	}
	if _, err := ParseHAR([]byte(har + "\n\t ")); err != nil {
		t.Errorf("trailing white space: %v", err)
	}
	if _, err := readCapped(zeros{}, 1<<20); !errors.Is(err, ErrNotHAR) || !strings.Contains(err.Error(), "over the limit") {
		t.Errorf("endless input: %v, want ErrNotHAR over the limit", err)
	}
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestFromHARNoPageref: an entry without pageref in a HAR whose main document has one is left
// out with a reason of its own (on 3e73eb5 it was counted as "entries of other pages", a
// pageref it does not have, while replay answers it).
func TestFromHARNoPageref(t *testing.T) {
	const har = `{"log":{"entries":[
{"pageref":"page_1","_resourceType":"document","request":{"url":"https://a.test/"},"response":{"status":200,"content":{"mimeType":"text/html"}}},
{"pageref":"page_1","_resourceType":"image","request":{"url":"https://a.test/1.jpg"},"response":{"status":200,"bodySize":2000,"content":{"mimeType":"image/jpeg"}}},
{"_resourceType":"image","request":{"url":"https://a.test/2.jpg"},"response":{"status":200,"bodySize":2000,"content":{"mimeType":"image/jpeg"}}},
{"pageref":"page_2","_resourceType":"image","request":{"url":"https://a.test/3.jpg"},"response":{"status":200,"bodySize":2000,"content":{"mimeType":"image/jpeg"}}}]}}`
	sh, err := FromHAR(strings.NewReader(har))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, g := range sh.NotReproduced {
		got[g.What] = g.Count
		if g.What == "entries without pageref" && !strings.Contains(g.Reason, "no pageref") {
			t.Errorf("reason %q", g.Reason)
		}
	}
	if got["entries without pageref"] != 1 || got["entries of other pages"] != 1 || sh.Objects != 1 {
		t.Errorf("gaps %v, %d objects; want 1 without pageref, 1 of another page, 1 object", got, sh.Objects)
	}
}
