package analysis

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// waterfallRecord is an h1 load: the document, then three images over two connections, one of
// them new (connect and TLS phases), and one resource from an old record without phases.
func waterfallRecord() *result.Record {
	return &result.Record{V: 1, Run: 3, Protocol: "h1", Mode: result.Cold, Valid: true,
		Page: result.Page{Spec: "3x1KB"}, Link: result.Link{Spec: "none"},
		PLTMs: 400, TTFBMs: 120, DCLMs: 150, FCPMs: 160,
		Document: &result.Resource{URL: "https://plt.test/index.html", StartMs: 0, ConnectStartMs: 5, TLSStartMs: 30,
			ConnectEndMs: 80, RequestStartMs: 80, ResponseStartMs: 120, EndMs: 125, ConnectionID: "41"},
		Resources: []result.Resource{
			{URL: "https://plt.test/img/b.jpg", StartMs: 130, ConnectStartMs: 131, TLSStartMs: 150, ConnectEndMs: 200,
				RequestStartMs: 200, ResponseStartMs: 260, EndMs: 390, ConnectionID: "57"},
			{URL: "https://plt.test/img/a.jpg", StartMs: 128, ConnectStartMs: 128, ConnectEndMs: 128,
				RequestStartMs: 129, ResponseStartMs: 180, EndMs: 300, ConnectionID: "41"},
			{URL: "https://plt.test/img/old.jpg", StartMs: 140, EndMs: 350},
		}}
}

func TestWaterfall(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteWaterfall(&buf, waterfallRecord()); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if err := xml.Unmarshal(buf.Bytes(), new(struct{})); err != nil {
		t.Fatalf("not well-formed XML: %v", err)
	}
	for _, want := range []string{
		// rows in order: document, then by start time
		">/index.html<", ">/img/a.jpg<", ">/img/b.jpg<", ">/img/old.jpg<",
		// connections numbered in order of first use
		"connection c1 (Chromium id 41)", "connection c2 (Chromium id 57)",
		// phases
		"/index.html connect: 5.0-30.0 ms", "/index.html TLS: 30.0-80.0 ms", "/index.html wait (request to first byte): 80.0-120.0 ms",
		"/img/a.jpg queued/blocked: 128.0-129.0 ms", "/img/a.jpg receive: 180.0-300.0 ms",
		"/img/b.jpg TLS: 150.0-200.0 ms", "/img/old.jpg queued/blocked: 140.0-350.0 ms",
		// milestones
		"TTFB 120.0 ms", "FCP 160.0 ms", "DCL 150.0 ms", "load 400.0 ms",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("waterfall lacks %q", want)
		}
	}
	if i, j := strings.Index(svg, ">/img/a.jpg<"), strings.Index(svg, ">/img/b.jpg<"); i > j {
		t.Error("rows not sorted by start time")
	}
	if strings.Contains(svg, "/img/a.jpg connect") {
		t.Error("a fetch on a reused connection got a connect phase")
	}
}

func TestWaterfallErrors(t *testing.T) {
	if err := WriteWaterfall(new(bytes.Buffer), &result.Record{}); err == nil {
		t.Error("a record without fetches gave a waterfall")
	}
}

// TestHTMLWaterfall: the HTML report draws the median load of each group.
func TestHTMLWaterfall(t *testing.T) {
	var recs []*result.Record
	for i, plt := range []float64{500, 400, 300} {
		r := waterfallRecord()
		r.Run, r.PLTMs = i, plt
		recs = append(recs, r)
	}
	var buf bytes.Buffer
	if err := Analyze(recs, Options{}).WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `<figure id="waterfall-h1-1" class="waterfall">`) {
		t.Error("no waterfall of the median load (run 1) in the report")
	}
	if !strings.Contains(buf.String(), "4 fetches over 2 connection(s)") {
		t.Error("caption lacks the fetch and connection counts")
	}
}

// TestHTMLFilmstrip: loads with visual metrics get the median load's filmstrip, and SpeedIndex is
// a report metric.
func TestHTMLFilmstrip(t *testing.T) {
	var recs []*result.Record
	for i, si := range []float64{300, 200, 100} {
		r := waterfallRecord()
		r.Run = i
		r.Visual = &result.Visual{SpeedIndexMs: si, VisuallyCompleteMs: si + 50, Frames: 3,
			Progress:  []result.VisualPoint{{Ms: si - 50, Pct: 40}, {Ms: si + 50, Pct: 100}},
			Filmstrip: []result.Thumb{{Ms: si - 50, Pct: 40, JPEG: []byte{0xff, 0xd8}}, {Ms: si + 50, Pct: 100, JPEG: []byte{0xff, 0xd8}}}}
		recs = append(recs, r)
	}
	var buf bytes.Buffer
	if err := Analyze(recs, Options{}).WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{`<figure id="filmstrip-h1-0" class="waterfall">`, "data:image/jpeg;base64,/9g=",
		"group medians over 3 loads: SpeedIndex 200 ms, visually complete 250 ms"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	rep := Analyze(recs, Options{Metric: SpeedIndex})
	if len(rep.Groups) != 1 || rep.Groups[0].Median != 200 || rep.Groups[0].Valid != 3 {
		t.Errorf("SpeedIndex groups: %+v", rep.Groups)
	}
	if m, err := ParseMetric("visually_complete_ms"); err != nil || m != VisuallyComplete {
		t.Errorf("ParseMetric(visually_complete_ms) = %v, %v", m, err)
	}
}

// TestWaterfallOrigins: a fetch from another origin is labelled with its host's first label
// (the full URL in its title), its connection numbered like the page's, so a connection that
// serves two hosts (h2/h3 coalescing) shows as one cN on both; the page's own rows keep their
// bare paths.
func TestWaterfallOrigins(t *testing.T) {
	rec := waterfallRecord()
	rec.Resources = append(rec.Resources,
		result.Resource{URL: "https://o1.p6c6f0276.plt.test/css/0004.css", StartMs: 135, RequestStartMs: 136, ResponseStartMs: 170, EndMs: 175, ConnectionID: "41"},
		result.Resource{URL: "https://cdn.example.test/a/very/long/path/to/some/script.js", StartMs: 136, RequestStartMs: 137, ResponseStartMs: 171, EndMs: 176, ConnectionID: "60"})
	var buf bytes.Buffer
	if err := WriteWaterfall(&buf, rec); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{
		">o1: /css/0004.css<title>https://o1.p6c6f0276.plt.test/css/0004.css</title>",
		"/some/script.js<title>https://cdn.example.test/",
		">/img/a.jpg<title>",
		"o1: /css/0004.css wait (request to first byte): 136.0-170.0 ms",
		"connection c3 (Chromium id 60)",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("waterfall lacks %q", want)
		}
	}
	if !strings.Contains(svg, ">cdn: ...") {
		t.Error("the other host's long label does not keep its host")
	}
	if n := strings.Count(svg, "connection c1 (Chromium id 41)"); n != 3 {
		t.Errorf("connection 41 shown on %d rows, want 3 (document, a.jpg and o1's stylesheet)", n)
	}
}
