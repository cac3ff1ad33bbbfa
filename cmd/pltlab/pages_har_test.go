package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/pages"
)

// mixedHAR is a synthetic HAR of a page on three hosts: a redirect, a stylesheet, a script on
// another host (bodySize -1), a font the stylesheet requested, a fetch chain issued by the
// script, a failed entry and a media entry.
const mixedHAR = `{"log":{"version":"1.2","entries":[
{"request":{"url":"http://example.com/"},"response":{"status":301,"bodySize":0,"content":{"size":0,"mimeType":"text/html"}},"_resourceType":"document"},
{"request":{"url":"https://www.example.com/"},"response":{"status":200,"bodySize":6000,"content":{"size":6000,"mimeType":"text/html"}},"_resourceType":"document"},
{"request":{"url":"https://www.example.com/s.css"},"response":{"status":200,"bodySize":12000,"content":{"size":12000,"mimeType":"text/css"}},"_resourceType":"stylesheet","_initiator":{"type":"parser","url":"https://www.example.com/"}},
{"request":{"url":"https://cdn.example.net/app.js"},"response":{"status":200,"bodySize":-1,"content":{"size":40000,"mimeType":"text/javascript"}},"_resourceType":"script","_initiator":{"type":"parser","url":"https://www.example.com/"}},
{"request":{"url":"https://fonts.example.org/f.woff2"},"response":{"status":200,"bodySize":25000,"content":{"size":25000,"mimeType":"font/woff2"}},"_resourceType":"font","_initiator":{"type":"parser","url":"https://www.example.com/s.css"}},
{"request":{"url":"https://www.example.com/a.jpg"},"response":{"status":200,"bodySize":30000,"content":{"size":30000,"mimeType":"image/jpeg"}},"_resourceType":"image"},
{"request":{"url":"https://www.example.com/b.jpg"},"response":{"status":200,"bodySize":30000,"content":{"size":30000,"mimeType":"image/jpeg"}},"_resourceType":"image"},
{"request":{"url":"https://www.example.com/api/1"},"response":{"status":200,"bodySize":2000,"content":{"size":2000,"mimeType":"application/json"}},"_resourceType":"fetch","_initiator":{"type":"script","stack":{"callFrames":[{"url":"https://cdn.example.net/app.js"}]}}},
{"request":{"url":"https://www.example.com/api/2"},"response":{"status":200,"bodySize":2000,"content":{"size":2000,"mimeType":"application/json"}},"_resourceType":"fetch","_initiator":{"type":"script","url":"https://www.example.com/api/1"}},
{"request":{"url":"https://www.example.com/gone.png"},"response":{"status":404,"bodySize":100,"content":{"size":100,"mimeType":"text/html"}},"_resourceType":"image"},
{"request":{"url":"https://www.example.com/v.mp4"},"response":{"status":206,"bodySize":90000,"content":{"size":90000,"mimeType":"video/mp4"}},"_resourceType":"media"}
]}}`

// frameHAR is a synthetic HAR of a page with an iframe on another host that requested an image
// and a stylesheet there.
const frameHAR = `{"log":{"entries":[
{"request":{"url":"https://www.example.com/"},"response":{"status":200,"bodySize":3000,"content":{"size":3000,"mimeType":"text/html"}}},
{"request":{"url":"https://ads.example.com/f.html"},"response":{"status":200,"bodySize":2000,"content":{"size":2000,"mimeType":"text/html"}},"_resourceType":"document"},
{"request":{"url":"https://ads.example.com/a.jpg"},"response":{"status":200,"bodySize":9000,"content":{"size":9000,"mimeType":"image/jpeg"}},"_resourceType":"image","_initiator":{"type":"parser","url":"https://ads.example.com/f.html"}},
{"request":{"url":"https://ads.example.com/a.css"},"response":{"status":200,"bodySize":700,"content":{"size":700,"mimeType":"text/css"}},"_resourceType":"stylesheet","_initiator":{"type":"parser","url":"https://ads.example.com/f.html"}}
]}}`

const mixedSpec = "1x12KB:css,1x40KB:js@o1,1x25KB:font@o2,2x30KB,2x2KB:fetch-chain"

// TestPagesFromHAR derives pages from pltlab's own h1 HAR and a synthetic mixed HAR; each page
// must be byte for byte the page 'pages --spec' gives for the printed spec.
func TestPagesFromHAR(t *testing.T) {
	base := t.TempDir()
	mixed, frame := filepath.Join(base, "mixed.har"), filepath.Join(base, "frame.har")
	if err := os.WriteFile(mixed, []byte(mixedHAR), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(frame, []byte(frameHAR), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, har, spec string
		gaps            map[string]int
	}{
		{"pltlab h1", filepath.Join("..", "..", "browser", "testdata", "har", "h1.har"), "8x20KB", map[string]int{"main document": 1}},
		{"mixed", mixed, mixedSpec, map[string]int{"main document": 1, "redirects": 1, "failed or blocked entries": 1,
			"entries of unknown type media": 1, "dependency depth": 3, "async/defer": 1, "script behaviour": 1}},
		{"iframe", frame, "1x2KB:iframe@o1(1x9KB,1x700B:css)", map[string]int{"main document": 1, "iframe contents": 1}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(base, "har"+string(rune('a'+i)))
			code, out, errOut := runCLI(t, "pages", "--from-har", tt.har, "--out", dir, "--seed", "3")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != 3 || lines[0] != tt.spec || !strings.HasPrefix(lines[1], "wrote page "+tt.spec+": ") ||
				lines[2] != "wrote "+filepath.Join(dir, "from-har.json") {
				t.Errorf("stdout %q; want the spec %s, then the page and the from-har.json written", out, tt.spec)
			}
			if !strings.HasPrefix(errOut, "page shape of "+tt.har+": "+tt.spec+" (") || !strings.Contains(errOut, "\nnot reproduced:\n  - main document: 1 (kept") {
				t.Errorf("stderr:\n%s", errOut)
			}
			checkFromHARJSON(t, dir, tt.har, tt.spec, tt.gaps)
			same := filepath.Join(base, "spec"+string(rune('a'+i)))
			if code, _, errOut := runCLI(t, "pages", "--spec", tt.spec, "--out", same, "--seed", "3"); code != 0 {
				t.Fatalf("pages --spec %s: exit %d: %s", tt.spec, code, errOut)
			}
			samePages(t, dir, same)
			code, out, errOut = runCLI(t, "pages", "--from-har", tt.har)
			if code != 0 || out != tt.spec+"\n" || !strings.Contains(errOut, "not reproduced:") {
				t.Errorf("without --out: exit %d, stdout %q, stderr %q; want the spec alone on stdout", code, out, errOut)
			}
		})
	}
}

// checkFromHARJSON checks dir's from-har.json: the HAR, seed, spec and what was not reproduced.
func checkFromHARJSON(t *testing.T, dir, har, spec string, gaps map[string]int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "from-har.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		HAR  string `json:"har"`
		Seed int64  `json:"seed"`
		pages.HARShape
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	gotGaps := map[string]int{}
	for _, g := range got.NotReproduced {
		gotGaps[g.What] = g.Count
		if g.Reason == "" {
			t.Errorf("gap %s has no reason", g.What)
		}
	}
	if got.HAR != har || got.Seed != 3 || got.Spec != spec || len(got.Types) == 0 || len(got.SizeSource) == 0 {
		t.Errorf("from-har.json: har %s, seed %d, spec %s, types %v, sizes %v", got.HAR, got.Seed, got.Spec, got.Types, got.SizeSource)
	}
	if len(gotGaps) != len(gaps) {
		t.Errorf("not reproduced %v, want %v", gotGaps, gaps)
	}
	for k, v := range gaps {
		if gotGaps[k] != v {
			t.Errorf("not reproduced %v, want %v", gotGaps, gaps)
			break
		}
	}
}

// samePages fails unless the page directories a (less its from-har.json) and b hold the same
// files with the same bytes.
func samePages(t *testing.T, a, b string) {
	t.Helper()
	files := func(dir string) map[string][]byte {
		m := map[string][]byte{}
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			if rel != "from-har.json" {
				m[rel], err = os.ReadFile(p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	fa, fb := files(a), files(b)
	if len(fa) != len(fb) || len(fa) < 3 {
		t.Fatalf("%s has %d files, %s %d", a, len(fa), b, len(fb))
	}
	for name, data := range fa {
		if !bytes.Equal(data, fb[name]) {
			t.Errorf("%s differs from the page of --spec", name)
		}
	}
}

func TestPagesFromHARUsageErrors(t *testing.T) {
	base := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(base, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	notJSON := write("notjson.har", "GET / HTTP/1.1\n")
	notHAR := write("nothar.har", `{"name":"x"}`)
	empty := write("empty.har", `{"log":{"entries":[]}}`)
	noDoc := write("nodoc.har", `{"log":{"entries":[{"request":{"url":"https://a/x.jpg"},"response":{"status":200,"bodySize":900,"content":{"mimeType":"image/jpeg"}},"_resourceType":"image"}]}}`)
	good := write("good.har", mixedHAR)
	junk := filepath.Join(base, "junk")
	if err := os.MkdirAll(junk, 0o755); err != nil {
		t.Fatal(err)
	}
	write("junk/keep", "")
	out := filepath.Join(base, "out")
	missing := filepath.Join(base, "missing.har")
	tests := []pagesUsage{
		{"missing file", []string{"--from-har", missing, "--out", out}, "bad --from-har " + missing + ": stat " + missing + ": no such file or directory; accepted: a HAR 1.2 file"},
		{"a directory", []string{"--from-har", junk, "--out", out}, "bad --from-har " + junk + ": " + junk + " is not a regular file but a directory; accepted: a HAR 1.2 file"},
		{"not JSON", []string{"--from-har", notJSON, "--out", out}, "bad --from-har " + notJSON + ": not JSON of a HAR (invalid character 'G'"},
		{"not a HAR", []string{"--from-har", notHAR, "--out", out}, `bad --from-har ` + notHAR + `: no "log" object: not a HAR; accepted: a HAR 1.2 file`},
		{"no entries", []string{"--from-har", empty, "--out", out}, `no entries in "log.entries"; accepted:`},
		{"no document", []string{"--from-har", noDoc, "--out", out}, "no document entry with a 2xx status among its 1 entries; accepted:"},
		{"spec and har", []string{"--from-har", good, "--spec", "1x1KB", "--out", out}, "--spec and --from-har given"},
		{"dir not empty", []string{"--from-har", good, "--out", junk}, "bad --out: output directory " + junk + " is not empty"},
	}
	checkPagesUsage(t, tests, out, junk)
	if entries, _ := os.ReadDir(base); len(entries) != 6 {
		t.Errorf("leftovers in %s: %v", base, entries)
	}
}

// TestFromHARWithBOM: pages --from-har reads a HAR that starts with a UTF-8 byte order mark, as
// report reads a result file with one (on 3e73eb5: "invalid character 'ï'").
func TestFromHARWithBOM(t *testing.T) {
	har := filepath.Join(t.TempDir(), "bom.har")
	if err := os.WriteFile(har, append([]byte("\xef\xbb\xbf"), mixedHAR...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "pages", "--from-har", har)
	if code != 0 || out == "" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
