package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

// webFontURL is the web font of webFontHAR: on the stylesheet's host, not the page's.
const webFontURL = "https://static.example.test/f/site.ttf"

// webFontSize is its size in bytes (a TrueType font of pltlab's generator, padded to this size).
const webFontSize = 2468

// webFontPage is the document of webFontHAR: a plain <link rel=stylesheet> to another host
// (no crossorigin attribute, so Chromium fetches it in no-cors mode, as most pages load a CDN's
// stylesheet) whose @font-face the page's text uses.
const webFontPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Web font</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="https://static.example.test/css/site.css">
</head>
<body>
<h1 class="brand">A page set in a web font</h1>
<p>Its stylesheet and font come from another host.</p>
</body>
</html>
`

// webFontCSS is the stylesheet: the font's URL is relative, so it is on the stylesheet's host.
const webFontCSS = `@font-face{font-family:"Site Sans";src:url("/f/site.ttf") format("truetype");font-display:swap}
.brand{font-family:"Site Sans",sans-serif;font-size:2em}
`

// webFontHAR writes, into dir, a HAR shaped as Chrome DevTools' "Save all as HAR with content"
// writes one (not by pltlab: no creator "pltlab", DevTools' field names and forms, httpVersion
// "http/2.0", lower-case h2 headers with pseudo-headers, the _initiator, _priority and
// _resourceType fields, a brotli-encoded stylesheet whose content.text is the decoded text, the
// font base64-encoded with access-control-allow-origin: *), of a page whose text uses a web font
// declared by a stylesheet on another origin: the font starts at 263 ms and the load ends at
// 406 ms, as in the load of issue 50 item 4. extra entries are added after the font's. The font
// is a valid TrueType font made by pltlab's page generator (pages.Generate, spec
// "1x2468B:font"), the rest is written here.
func webFontHAR(t *testing.T, dir, name string, extra ...map[string]any) string {
	t.Helper()
	spec, err := pages.ParseSpec(fmt.Sprintf("1x%dB:font", webFontSize))
	if err != nil {
		t.Fatal(err)
	}
	gen := filepath.Join(dir, "font-gen")
	m, err := pages.Generate(gen, spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	font, err := os.ReadFile(filepath.Join(gen, filepath.FromSlash(m.Objects[0].Path)))
	if err != nil || len(font) != webFontSize {
		t.Fatalf("generated font: %d bytes, %v", len(font), err)
	}
	start := time.Date(2026, 12, 6, 9, 30, 0, 0, time.UTC)
	entries := []any{
		devtoolsEntry(start, 0, "document", "https://www.example.test/", nil, "text/html", webFontPage, "",
			[][2]string{{"content-type", "text/html; charset=utf-8"}, {"server", "nginx"}, {"vary", "Accept-Encoding"}}),
		devtoolsEntry(start, 131, "stylesheet", "https://static.example.test/css/site.css",
			map[string]any{"type": "parser", "url": "https://www.example.test/", "lineNumber": 6}, "text/css", webFontCSS, "",
			[][2]string{{"content-type", "text/css"}, {"content-encoding", "br"}, {"access-control-allow-origin", "*"},
				{"cache-control", "public, max-age=31536000, immutable"}, {"age", "5120"}}),
		devtoolsEntry(start, 263, "font", webFontURL,
			map[string]any{"type": "parser", "url": "https://static.example.test/css/site.css"}, "font/ttf",
			base64.StdEncoding.EncodeToString(font), "base64",
			[][2]string{{"content-type", "font/ttf"}, {"content-length", fmt.Sprint(len(font))}, {"access-control-allow-origin", "*"},
				{"cache-control", "public, max-age=31536000, immutable"}}),
	}
	for _, e := range extra {
		entries = append(entries, e)
	}
	har := map[string]any{"log": map[string]any{
		"version": "1.2", "creator": map[string]any{"name": "WebInspector", "version": "537.36"},
		"pages": []any{map[string]any{"startedDateTime": start.Format("2006-01-02T15:04:05.000Z"), "id": "page_1",
			"title": "https://www.example.test/", "pageTimings": map[string]any{"onContentLoad": 251.3, "onLoad": 406.2}}},
		"entries": entries,
	}}
	b, err := json.MarshalIndent(har, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, name)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// devtoolsEntry is one HAR entry as DevTools exports it, at offset ms after start: body is the
// decoded text (encoding "base64" for a binary body), headers the response's.
func devtoolsEntry(start time.Time, offset float64, rtype, u string, initiator map[string]any, mime, body, encoding string, headers [][2]string) map[string]any {
	if initiator == nil {
		initiator = map[string]any{"type": "other"}
	}
	size := len(body)
	if encoding == "base64" {
		size = base64.StdEncoding.DecodedLen(len(body)) - strings.Count(body, "=")
	}
	hs := []any{}
	for _, h := range headers {
		hs = append(hs, map[string]string{"name": h[0], "value": h[1]})
	}
	host := strings.SplitN(strings.TrimPrefix(u, "https://"), "/", 2)[0]
	path := strings.TrimPrefix(u, "https://"+host)
	content := map[string]any{"size": size, "mimeType": mime, "text": body}
	if encoding != "" {
		content["encoding"] = encoding
	}
	return map[string]any{
		"_initiator": initiator, "_priority": "VeryHigh", "_resourceType": rtype, "cache": map[string]any{},
		"connection": "412", "pageref": "page_1", "serverIPAddress": "192.0.2.10",
		"startedDateTime": start.Add(time.Duration(offset * float64(time.Millisecond))).Format("2006-01-02T15:04:05.000Z"),
		"time":            120.4,
		"request": map[string]any{"method": "GET", "url": u, "httpVersion": "http/2.0", "headersSize": -1, "bodySize": 0,
			"cookies": []any{}, "queryString": []any{}, "headers": []any{
				map[string]string{"name": ":authority", "value": host}, map[string]string{"name": ":method", "value": "GET"},
				map[string]string{"name": ":path", "value": path}, map[string]string{"name": ":scheme", "value": "https"},
				map[string]string{"name": "accept", "value": "*/*"}}},
		"response": map[string]any{"status": 200, "statusText": "", "httpVersion": "http/2.0", "headers": hs, "cookies": []any{},
			"content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1, "_transferSize": size + 180,
			"_error": nil, "_fetchedViaServiceWorker": false},
		"timings": map[string]any{"blocked": 1.2, "dns": -1, "ssl": -1, "connect": -1, "send": 0.2, "wait": 80.1,
			"receive": 38.9, "_blocked_queueing": 0.8},
	}
}

// TestIntegrationReplayWebFont replays webFontHAR (written here, shaped as DevTools writes one)
// over h1, h2 and h3: every load is valid, with no miss, and records the font whole over the
// requested protocol. The link is none: the fault does not depend on the link (every load was
// invalid over none as over rate=10mbit,rtt=40ms), and an emulated link on a busy machine loses
// loads to host stalls (3 of 6 on 2026-12-06, the machine 89-91 % busy). Chromium 156 gives the font no Resource Timing
// entry (a subresource of a no-cors stylesheet of another origin): until the load check took
// such objects from the Network events, every load was invalid with "object /f/site.ttf:
// missing (not fetched or not finished)" (issue 50 item 4). The check stays strict: the same
// page with one more font in the archive that nothing uses is invalid, that font missing.
func TestIntegrationReplayWebFont(t *testing.T) {
	needRootAndChromium(t)
	dir := t.TempDir()
	har := webFontHAR(t, dir, "webfont.har")
	const runs = 2
	out := filepath.Join(dir, "webfont.jsonl")
	code, so, se := runCLI(t, "run", "--page", "har:"+har, "--link", "none", "--runs", fmt.Sprint(runs), "--warmup", "0",
		"--protocols", "h1,h2,h3", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
	}
	var lost testenv.Lost
	loads := map[string]int{}
	for _, r := range readAll(t, out) {
		if !r.IsLoad() || lost.Excused(t, r) {
			continue
		}
		loads[r.Protocol]++
		if !r.Valid || r.Replay == nil || r.Replay.Misses != 0 || r.Replay.Hits != 3 || r.Page.Objects != 2 {
			t.Errorf("%s load %d: valid %v (%s), replay %+v, %d objects; want valid, 3 hits, no miss, 2 objects",
				r.Protocol, r.Run, r.Valid, r.InvalidReason, r.Replay, r.Page.Objects)
		}
		font := findURL(r.Resources, webFontURL)
		if font == nil {
			t.Errorf("%s load %d: the font is not among the resources %v", r.Protocol, r.Run, r.Resources)
			continue
		}
		if font.EncodedBodySize != webFontSize || font.Protocol != r.Protocol || (font.Status != 0 && font.Status != 200) ||
			font.EndMs <= font.StartMs || font.StartMs <= 0 {
			t.Errorf("%s load %d: font %+v; want %d bytes over %s, status 200, a start and an end", r.Protocol, r.Run, *font, webFontSize, r.Protocol)
		}
		t.Logf("%s load %d: PLT %.1f ms, font %.1f-%.1f ms (source %q)", r.Protocol, r.Run, r.PLTMs, font.StartMs, font.EndMs, font.Source)
	}
	lost.Check(t, runs*len(protocol.Table))
	for _, p := range protocol.Table {
		if loads[p.Name]+lost.N() < runs || loads[p.Name] == 0 {
			t.Errorf("%s: %d loads (%d lost in all), want %d", p.Name, loads[p.Name], lost.N(), runs)
		}
	}

	unused := devtoolsEntry(time.Date(2026, 12, 6, 9, 30, 0, 0, time.UTC), 270, "font", "https://static.example.test/f/unused.ttf",
		nil, "font/ttf", base64.StdEncoding.EncodeToString([]byte("never requested")), "base64",
		[][2]string{{"content-type", "font/ttf"}, {"access-control-allow-origin", "*"}})
	strict := webFontHAR(t, dir, "webfont-unused.har", unused)
	out = filepath.Join(dir, "webfont-unused.jsonl")
	if code, so, se := runCLI(t, "run", "--page", "har:"+strict, "--link", "none", "--runs", "1", "--warmup", "0",
		"--protocols", "h2", "--out", out); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, so, se)
	}
	for _, r := range readAll(t, out) {
		if !r.IsLoad() {
			continue
		}
		const want = "object /f/unused.ttf: missing (not fetched or not finished)"
		if r.Valid || r.InvalidReason != want || findURL(r.Resources, webFontURL) == nil {
			t.Errorf("a page with a font it never requests: valid %v (%q); want invalid, only %q, the used font recorded", r.Valid, r.InvalidReason, want)
		}
	}
}

// findURL returns the first resource whose URL is u, or nil.
func findURL(res []result.Resource, u string) *result.Resource {
	for i := range res {
		if res[i].URL == u {
			return &res[i]
		}
	}
	return nil
}
