package pages

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chromeHARSpec and chromeHARSeed are the page pages/testdata/chrome-har.har recorded.
const (
	chromeHARSpec = "1x20KB:css,2x30KB@o1,1x10KB:js"
	chromeHARSeed = 1
)

// TestReadArchiveChromeHAR checks that replay reads a HAR written by another tool than pltlab and
// DevTools: the npm package chrome-har (1.3.1), which sitespeed.io and browsertime use to build
// HARs from Chrome DevTools Protocol events. Its "_initiator" is a string (the initiating
// document's or script's URL), not DevTools' object; ReadArchive refused such HARs as "not JSON
// of a HAR" until harInitiator read both forms.
//
// The fixture pages/testdata/chrome-har.har is one load of pltlab's own page chromeHARSpec
// (seed 1) by headless Chromium 156 over h2 on loopback, recorded by
// pages/testdata/chrome-har.js (how to run it is in its header comment): `pltlab serve --spec
// '1x20KB:css,2x30KB@o1,1x10KB:js' --addr 127.0.0.1:0`, then the script (chrome-remote-interface
// 0.34) enables Network and Page, loads https://plt.test/index.html, builds the HAR with
// harFromMessages and writes each body from Network.getResponseBody into response.content.text
// (content.encoding "base64" for the images), as browsertime does. The test checks that the
// archive's manifest lists exactly the generated page's objects (path, size, SHA-256, type,
// host), that the recorded document is the generated index.html, and that Match answers every
// entry's request exactly. Replayed with `pltlab run --page har:pages/testdata/chrome-har.har
// --link rate=10mbit,rtt=40ms --protocols h1,h2,h3 --runs 3` (2026-12-04): 9 of 9 loads valid,
// 5 hits and no miss each.
func TestReadArchiveChromeHAR(t *testing.T) {
	const file = "testdata/chrome-har.har"
	a, err := ReadArchive(file)
	if err != nil {
		t.Fatalf("ReadArchive(%s): %v", file, err)
	}
	spec, err := ParseSpec(chromeHARSpec)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	want, err := Generate(dir, spec, chromeHARSeed)
	if err != nil {
		t.Fatal(err)
	}
	o1 := OriginHost("o1", PageID(spec.String(), chromeHARSeed))
	if a.DocHost != "plt.test" || a.DocPath != "/index.html" || a.Document != "https://plt.test/index.html" ||
		len(a.Hosts) != 2 || a.Hosts[0] != "plt.test" || a.Hosts[1] != o1 || a.NoBody != 0 || len(a.Entries) != 5 {
		t.Errorf("document %s (%s%s), hosts %v, %d without body, %d entries; want https://plt.test/index.html, [plt.test %s], 0, 5",
			a.Document, a.DocHost, a.DocPath, a.Hosts, a.NoBody, len(a.Entries), o1)
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if doc, kind := a.Match("GET", "plt.test", "/index.html", ""); doc == nil || kind != MatchExact || !bytes.Equal(doc.Body, index) {
		t.Errorf("recorded index.html (%v) is not the generated one", kind)
	}

	m := a.Manifest()
	if len(m.Objects) != len(want.Objects) || m.TotalBytes != want.TotalBytes || m.TotalBytes != 90000 {
		t.Fatalf("manifest: %d objects, %d bytes; want %d objects, %d bytes (90000)", len(m.Objects), m.TotalBytes, len(want.Objects), want.TotalBytes)
	}
	got := map[string]Object{}
	for _, o := range m.Objects {
		got[o.Path] = o
	}
	for _, w := range want.Objects {
		g, ok := got[w.Path]
		if !ok {
			t.Errorf("%s: not in the archive's manifest", w.Path)
			continue
		}
		if g.Size != w.Size || g.SHA256 != w.SHA256 || g.Type.canonical() != w.Type.canonical() || g.Origin != w.Origin {
			t.Errorf("%s: size %d, type %q, origin %q, sha256 %.12s; want %d, %q, %q, %.12s",
				w.Path, g.Size, g.Type, g.Origin, g.SHA256, w.Size, w.Type, w.Origin, w.SHA256)
		}
	}
	if hosts := m.OriginHosts(); len(hosts) != 1 || hosts[0] != o1 {
		t.Errorf("origin hosts %v, want [%s]", hosts, o1)
	}

	if a.Shape == nil || a.Shape.Objects != 4 {
		t.Errorf("FromHAR shape %+v, want 4 objects", a.Shape)
	}

	for _, e := range a.Entries {
		query := ""
		if i := strings.IndexByte(e.URL, '?'); i >= 0 {
			query = e.URL[i+1:]
		}
		r, kind := a.Match(e.Method, e.Host, e.Path, query)
		if r == nil || kind != MatchExact || r.URL != e.URL {
			t.Errorf("%s %s: Match gives %v, %q; want itself, exact", e.Method, e.URL, r, kind)
			continue
		}
		sum := sha256.Sum256(r.Body)
		if e.URL != a.Document {
			if o := got[e.Path]; o.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("%s: body's sha256 differs from its manifest object's", e.URL)
			}
		}
	}
}

// TestHARInitiatorForms checks that "_initiator" reads in every form HAR writers use: DevTools'
// object (url, or the stack's first script), chrome-har's string, and values that say nothing
// (null, a number, an object of another shape) as no initiator, none of them an error.
func TestHARInitiatorForms(t *testing.T) {
	tests := []struct{ json, wantURL string }{
		{`{"type":"parser","url":"https://a.test/"}`, "https://a.test/"},
		{`{"type":"script","stack":{"callFrames":[],"parent":{"callFrames":[{"url":"https://a.test/x.js"}]}}}`, "https://a.test/x.js"},
		{`"https://a.test/y.js"`, "https://a.test/y.js"},
		{`""`, ""},
		{`null`, ""},
		{`7`, ""},
		{`{"url":3}`, ""},
		{`["https://a.test/"]`, ""},
	}
	for _, tt := range tests {
		har := `{"log":{"entries":[{"_resourceType":"document","_initiator":` + tt.json +
			`,"request":{"method":"GET","url":"https://a.test/"},"response":{"status":200,"content":{"mimeType":"text/html","size":3,"text":"<p>"}}}]}}`
		var f HARFile
		if err := json.Unmarshal([]byte(har), &f); err != nil {
			t.Errorf("_initiator %s: %v", tt.json, err)
			continue
		}
		if got := f.Log.Entries[0].Initiator.url(); got != tt.wantURL {
			t.Errorf("_initiator %s: url %q, want %q", tt.json, got, tt.wantURL)
		}
		name := filepath.Join(t.TempDir(), "i.har")
		if err := os.WriteFile(name, []byte(har), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadArchive(name); err != nil {
			t.Errorf("_initiator %s: ReadArchive: %v", tt.json, err)
		}
	}
}
