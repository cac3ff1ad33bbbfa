package browser

import (
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
)

// fontLoad is a replayed load whose font /f/site.ttf (2000 B on static.example.test, declared by
// that host's stylesheet fetched no-cors) has no Resource Timing entry, and the watch that saw
// its requests: the document (send start 1000.010 s on the monotonic clock, requestStart 10 ms
// on the page's timeline, so the time origin is 1000.000 s), the stylesheet and the font (issued
// at 1000.300 s over a new h2 connection, finished at 1000.390 s).
func fontLoad() (*pages.Manifest, *pageTimings, *watch) {
	m := &pages.Manifest{Index: "/", Objects: []pages.Object{
		{Path: "/css/site.css", Size: 107, Origin: "static.example.test", Type: pages.TypeCSS},
		{Path: "/f/site.ttf", Size: 2000, Origin: "static.example.test", Type: pages.TypeFont},
	}}
	tm := &pageTimings{
		Nav: &navTiming{Name: "https://www.example.test/", NextHopProtocol: "h2", RequestStart: 10,
			ResponseStart: 50, LoadEventEnd: 406, ResponseStatus: 200},
		Resources: []resTiming{{Name: "https://static.example.test/css/site.css", NextHopProtocol: "h2",
			TransferSize: 145, EncodedBodySize: 107, StartTime: 100, ResponseEnd: 250}},
	}
	w := newWatch(false)
	send := func(id network.RequestID, u string, ts float64) {
		w.event(&network.EventRequestWillBeSent{RequestID: id, Request: &network.Request{URL: u}, Timestamp: cdp.MonotonicTime(ts)})
	}
	respond := func(id network.RequestID, u string, tim *network.ResourceTiming) {
		w.event(&network.EventResponseReceived{RequestID: id, Response: &network.Response{URL: u, Status: 200, Protocol: "h2", Timing: tim}})
	}
	send("doc", "https://www.example.test/", 999.995)
	respond("doc", "https://www.example.test/", &network.ResourceTiming{RequestTime: 1000, SendStart: 10, ConnectStart: 1, ConnectEnd: 5, SslStart: 2})
	w.event(&network.EventLoadingFinished{RequestID: "doc", Timestamp: 1000.060, EncodedDataLength: 332})
	send("css", "https://static.example.test/css/site.css", 1000.100)
	respond("css", "https://static.example.test/css/site.css", &network.ResourceTiming{RequestTime: 1000.1, SendStart: 5, ConnectStart: -1, ConnectEnd: -1, SslStart: -1})
	w.event(&network.EventLoadingFinished{RequestID: "css", Timestamp: 1000.250, EncodedDataLength: 145})
	send("font", "https://static.example.test/f/site.ttf", 1000.300)
	respond("font", "https://static.example.test/f/site.ttf", &network.ResourceTiming{RequestTime: 1000.302,
		ConnectStart: 1, ConnectEnd: 40, SslStart: 20, SendStart: 41, ReceiveHeadersStart: 80, ReceiveHeadersEnd: 81})
	w.event(&network.EventDataReceived{RequestID: "font", DataLength: 1500})
	w.event(&network.EventDataReceived{RequestID: "font", DataLength: 500})
	w.event(&network.EventLoadingFinished{RequestID: "font", Timestamp: 1000.390, EncodedDataLength: 2106, EncodedBodyLength: 2000})
	return m, tm, w
}

// near reports whether a and b differ by less than 1 us (float arithmetic on monotonic seconds).
func near(a, b float64) bool { return a-b < 1e-3 && b-a < 1e-3 }

// TestNetResourcesFont: the font Chromium keeps out of Resource Timing is taken from the Network
// events, with its status, protocol, sizes and times on the page's timeline, and the load is
// valid; the stylesheet, which Resource Timing has, is not added twice.
func TestNetResourcesFont(t *testing.T) {
	m, tm, w := fontLoad()
	if probs := verify("h2", tm.Nav, resources(tm), m, nil); len(probs) != 1 || probs[0] != "object /f/site.ttf: missing (not fetched or not finished)" {
		t.Fatalf("before: problems %q, want the font missing", probs)
	}
	add := netResources(tm, m, w.finishedRequests())
	if len(add) != 1 {
		t.Fatalf("netResources gave %d entries, want 1 (the font): %+v", len(add), add)
	}
	e := add[0]
	if e.Name != "https://static.example.test/f/site.ttf" || e.NextHopProtocol != "h2" || e.ResponseStatus != 200 ||
		e.EncodedBodySize != 2000 || e.TransferSize != 2106 || e.Source != result.SourceNetwork {
		t.Errorf("entry %+v", e)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"startTime", e.StartTime, 300}, {"connectStart", e.ConnectStart, 303}, {"secureConnectionStart", e.SecureConnectionStart, 322},
		{"connectEnd", e.ConnectEnd, 342}, {"requestStart", e.RequestStart, 343}, {"responseStart", e.ResponseStart, 382},
		{"responseEnd", e.ResponseEnd, 390}} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %.3f ms, want %.0f", c.name, c.got, c.want)
		}
	}
	tm.Resources = append(tm.Resources, add...)
	if probs := verify("h2", tm.Nav, resources(tm), m, nil); len(probs) != 0 {
		t.Errorf("after: problems %q, want a valid load", probs)
	}
	var rec result.Record
	fill(&rec, tm)
	if got := rec.Resources[1]; got.Source != result.SourceNetwork || got.URL != e.Name || got.EndMs != e.ResponseEnd {
		t.Errorf("record's font %+v", got)
	}
	if rec.Resources[0].Source != "" {
		t.Errorf("the stylesheet's source is %q, want \"\" (Resource Timing)", rec.Resources[0].Source)
	}
}

// TestNetResourcesStrict: the Network events only stand in for an entry Chromium withholds; the
// check stays as strict as with Resource Timing. A font never requested, or requested but not
// finished when the timings were read, is missing; one on the wrong host, over the wrong
// protocol, cut short or answered 404 is a problem; without the document's timing the entry
// has no times but is still checked.
func TestNetResourcesStrict(t *testing.T) {
	tests := []struct {
		name   string
		change func(*pageTimings, *watch)
		want   string // substring of the problems; "" = valid
	}{
		{name: "valid", want: ""},
		{name: "never requested", change: func(_ *pageTimings, w *watch) { delete(w.reqs, "font") },
			want: "object /f/site.ttf: missing (not fetched or not finished)"},
		{name: "not finished", change: func(_ *pageTimings, w *watch) { w.reqs["font"].finished = nil },
			want: "object /f/site.ttf: missing (not fetched or not finished)"},
		{name: "no response", change: func(_ *pageTimings, w *watch) { w.reqs["font"].resp = nil },
			want: "object /f/site.ttf: missing (not fetched or not finished)"},
		{name: "another host", change: func(_ *pageTimings, w *watch) {
			w.reqs["font"].resp.URL = "https://www.example.test/f/site.ttf"
		}, want: "object /f/site.ttf: missing (not fetched or not finished)"},
		{name: "another protocol", change: func(_ *pageTimings, w *watch) { w.reqs["font"].resp.Protocol = "http/1.1" },
			want: `object /f/site.ttf: protocol "h1", requested h2`},
		{name: "cut short", change: func(_ *pageTimings, w *watch) {
			w.reqs["font"].finished.EncodedBodyLength, w.reqs["font"].decoded = 0, 1500
		}, want: "object /f/site.ttf: 1500 of 2000 bytes"},
		{name: "body length from the data events", change: func(_ *pageTimings, w *watch) {
			w.reqs["font"].finished.EncodedBodyLength = 0
		}, want: ""},
		{name: "404", change: func(_ *pageTimings, w *watch) { w.reqs["font"].resp.Status = 404 },
			want: "object /f/site.ttf: HTTP status 404"},
		{name: "no document timing", change: func(tm *pageTimings, _ *watch) { tm.Nav.Name = "https://elsewhere.test/" },
			want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, tm, w := fontLoad()
			if tc.change != nil {
				tc.change(tm, w)
			}
			tm.Resources = append(tm.Resources, netResources(tm, m, w.finishedRequests())...)
			probs := verify("h2", tm.Nav, resources(tm), m, nil)
			got := strings.Join(probs, "; ")
			if tc.want == "" && len(probs) != 0 || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("problems %q, want %q", got, tc.want)
			}
		})
	}
	m, tm, w := fontLoad()
	tm.Nav.Name = "https://elsewhere.test/"
	if add := netResources(tm, m, w.finishedRequests()); len(add) != 1 || add[0].StartTime != 0 || add[0].ResponseEnd != 0 {
		t.Errorf("without the document's timing: %+v, want the font with no times", add)
	}
}

// TestCollectWaitsForFonts: the load's timings are read once no web font is loading.
func TestCollectWaitsForFonts(t *testing.T) {
	if js := collectJS(true); !strings.Contains(js, "document.fonts.status !== 'loading'") || !strings.Contains(js, "fontsSettled()") {
		t.Errorf("collectJS(true) does not wait for document.fonts:\n%s", js)
	}
}
