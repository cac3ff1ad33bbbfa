package browser

import (
	"strings"
	"testing"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
)

// synthetic builds a page load of two objects over proto where every check passes.
func synthetic(proto string) (*pages.Manifest, *pageTimings) {
	m := &pages.Manifest{Index: "/index.html", Objects: []pages.Object{
		{Path: "/img/0001.jpg", Size: 30000}, {Path: "/img/0002.jpg", Size: 1000},
	}}
	tm := &pageTimings{
		Nav: &navTiming{Name: "https://plt.test:8443/index.html", NextHopProtocol: proto,
			ConnectStart: 1, SecureConnectionStart: 2, ConnectEnd: 5, ResponseStart: 8,
			DOMContentLoadedEventEnd: 20, LoadEventEnd: 120.5, ResponseStatus: 200},
		Resources: []resTiming{
			{Name: "https://plt.test:8443/img/0001.jpg", NextHopProtocol: proto, TransferSize: 30300,
				EncodedBodySize: 30000, StartTime: 21, ResponseEnd: 100, ResponseStatus: 200},
			{Name: "https://plt.test:8443/img/0002.jpg", NextHopProtocol: proto, TransferSize: 1300,
				EncodedBodySize: 1000, StartTime: 21, ResponseEnd: 60},
		},
		Paint: []paintTiming{{Name: "first-paint", StartTime: 30}, {Name: "first-contentful-paint", StartTime: 31}},
	}
	return m, tm
}

func TestFill(t *testing.T) {
	_, tm := synthetic("http/1.1")
	var rec result.Record
	fill(&rec, tm)
	want := result.Record{ObservedProtocol: "h1", PLTMs: 120.5, TTFBMs: 8, DCLMs: 20, FCPMs: 31, ConnectMs: 4, TLSMs: 3}
	if rec.ObservedProtocol != want.ObservedProtocol || rec.PLTMs != want.PLTMs || rec.TTFBMs != want.TTFBMs ||
		rec.DCLMs != want.DCLMs || rec.FCPMs != want.FCPMs || rec.ConnectMs != want.ConnectMs || rec.TLSMs != want.TLSMs {
		t.Errorf("fill = %+v, want %+v", rec, want)
	}
	if len(rec.Resources) != 2 || rec.Resources[0] != (result.Resource{URL: "https://plt.test:8443/img/0001.jpg",
		Protocol: "h1", TransferSize: 30300, EncodedBodySize: 30000, StartMs: 21, EndMs: 100, Status: 200}) {
		t.Errorf("resources = %+v", rec.Resources)
	}
}

func TestVerify(t *testing.T) {
	tests := []struct {
		name      string
		requested string
		proto     string // nextHopProtocol of everything
		change    func(*pages.Manifest, *pageTimings)
		failed    map[string]string
		want      []string // substrings of the reason, in order; none = valid
	}{
		{name: "valid h3", requested: "h3", proto: "h3"},
		{name: "valid h1", requested: "h1", proto: "http/1.1"},
		{name: "draft is not h3", requested: "h3", proto: "h3-29",
			want: []string{`page /index.html: protocol "h3-29", requested h3`, `object /img/0001.jpg: protocol "h3-29"`}},
		{name: "gquic is not h3", requested: "h3", proto: "http/2+quic/46", want: []string{`protocol "http/2+quic/46"`}},
		{name: "hq is not h3", requested: "h3", proto: "hq", want: []string{`protocol "hq"`}},
		{name: "h2 fallback", requested: "h3", proto: "h2", want: []string{`page /index.html: protocol "h2", requested h3`}},
		{name: "unknown protocol", requested: "h2", proto: "",
			want: []string{"page /index.html: protocol unknown (empty nextHopProtocol), requested h2"}},
		{name: "one object on another protocol", requested: "h3", proto: "h3",
			change: func(_ *pages.Manifest, tm *pageTimings) { tm.Resources[1].NextHopProtocol = "h2" },
			want:   []string{`object /img/0002.jpg: protocol "h2", requested h3`}},
		{name: "short object", requested: "h2", proto: "h2",
			change: func(_ *pages.Manifest, tm *pageTimings) { tm.Resources[0].EncodedBodySize = 15500 },
			want:   []string{"object /img/0001.jpg: 15500 of 30000 bytes"}},
		{name: "short object with error", requested: "h2", proto: "h2",
			change: func(_ *pages.Manifest, tm *pageTimings) { tm.Resources[0].EncodedBodySize = 0 },
			failed: map[string]string{"/img/0001.jpg": "net::ERR_HTTP2_PROTOCOL_ERROR"},
			want:   []string{"object /img/0001.jpg: 0 of 30000 bytes (failed: net::ERR_HTTP2_PROTOCOL_ERROR)"}},
		{name: "404", requested: "h2", proto: "h2",
			change: func(_ *pages.Manifest, tm *pageTimings) {
				tm.Resources[1].ResponseStatus, tm.Resources[1].EncodedBodySize = 404, 19
			},
			want: []string{"object /img/0002.jpg: HTTP status 404", "object /img/0002.jpg: 19 of 1000 bytes"}},
		{name: "missing object", requested: "h2", proto: "h2",
			change: func(_ *pages.Manifest, tm *pageTimings) { tm.Resources = tm.Resources[:1] },
			want:   []string{"object /img/0002.jpg: missing"}},
		{name: "failed object", requested: "h2", proto: "h2",
			change: func(_ *pages.Manifest, tm *pageTimings) { tm.Resources = tm.Resources[:1] },
			failed: map[string]string{"/img/0002.jpg": "net::ERR_NETWORK_CHANGED"},
			want:   []string{"object /img/0002.jpg: failed: net::ERR_NETWORK_CHANGED"}},
		{name: "page status", requested: "h2", proto: "h2",
			change: func(_ *pages.Manifest, tm *pageTimings) { tm.Nav.ResponseStatus = 500 },
			want:   []string{"page /index.html: HTTP status 500"}},
		{name: "no navigation entry", requested: "h2", proto: "h2",
			change: func(_ *pages.Manifest, tm *pageTimings) { tm.Nav = nil },
			want:   []string{"page /index.html: no navigation timing"}},
		{name: "extra resource on another protocol", requested: "h2", proto: "h2",
			change: func(_ *pages.Manifest, tm *pageTimings) {
				tm.Resources = append(tm.Resources, resTiming{Name: "https://plt.test:8443/x.css", NextHopProtocol: "http/1.1"})
			},
			want: []string{`resource https://plt.test:8443/x.css: protocol "h1", requested h2`}},
		{name: "many problems are cut", requested: "h3", proto: "h2",
			change: func(m *pages.Manifest, tm *pageTimings) { tm.Resources = nil },
			want:   []string{"page /index.html", "object /img/0001.jpg: missing", "object /img/0002.jpg: missing"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, tm := synthetic(tc.proto)
			if tc.change != nil {
				tc.change(m, tm)
			}
			got := reason(verify(tc.requested, tm.Nav, resources(tm), m, tc.failed))
			if len(tc.want) == 0 {
				if got != "" {
					t.Fatalf("reason %q, want a valid load", got)
				}
				return
			}
			rest := got
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("reason %q lacks %q (in order)", got, w)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

func TestReasonCut(t *testing.T) {
	got := reason([]string{"a", "b", "c", "d", "e"})
	if want := "a; b; c; and 2 more"; got != want {
		t.Errorf("reason = %q, want %q", got, want)
	}
	if got := reason(nil); got != "" {
		t.Errorf("reason(nil) = %q, want empty", got)
	}
}
