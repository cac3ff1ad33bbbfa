package browser

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

// navTiming is the part of the page's PerformanceNavigationTiming entry (W3C Navigation Timing
// Level 2, read with toJSON()) that a record needs. Times are ms from the navigation's start.
type navTiming struct {
	Name                     string  `json:"name"`
	NextHopProtocol          string  `json:"nextHopProtocol"`
	StartTime                float64 `json:"startTime"`
	ConnectStart             float64 `json:"connectStart"`
	SecureConnectionStart    float64 `json:"secureConnectionStart"`
	ConnectEnd               float64 `json:"connectEnd"`
	RequestStart             float64 `json:"requestStart"`
	ResponseStart            float64 `json:"responseStart"`
	ResponseEnd              float64 `json:"responseEnd"`
	DOMContentLoadedEventEnd float64 `json:"domContentLoadedEventEnd"`
	LoadEventEnd             float64 `json:"loadEventEnd"`
	TransferSize             int64   `json:"transferSize"`
	EncodedBodySize          int64   `json:"encodedBodySize"`
	ResponseStatus           int     `json:"responseStatus"`
}

// resTiming is one PerformanceResourceTiming entry (W3C Resource Timing Level 2).
type resTiming struct {
	Name                  string  `json:"name"`
	NextHopProtocol       string  `json:"nextHopProtocol"`
	TransferSize          int64   `json:"transferSize"`
	EncodedBodySize       int64   `json:"encodedBodySize"`
	StartTime             float64 `json:"startTime"`
	ConnectStart          float64 `json:"connectStart"`
	ConnectEnd            float64 `json:"connectEnd"`
	SecureConnectionStart float64 `json:"secureConnectionStart"`
	RequestStart          float64 `json:"requestStart"`
	ResponseStart         float64 `json:"responseStart"`
	ResponseEnd           float64 `json:"responseEnd"`
	ResponseStatus        int     `json:"responseStatus"`
	// Source is "" for an entry of the page's Resource Timing, result.SourceNetwork for one
	// built from the Network events (netResources).
	Source string `json:"source,omitempty"`
}

// paintTiming is one PerformancePaintTiming entry (W3C Paint Timing).
type paintTiming struct {
	Name      string  `json:"name"`
	StartTime float64 `json:"startTime"`
}

// pageTimings is what collectJS returns.
type pageTimings struct {
	Nav       *navTiming    `json:"nav"`
	Resources []resTiming   `json:"resources"`
	Paint     []paintTiming `json:"paint"`
	// TimeOrigin is performance.timeOrigin: the navigation's time origin in ms since the Unix
	// epoch (W3C High Resolution Time), to place screencast frames on the page's timeline.
	TimeOrigin float64 `json:"timeOrigin"`
}

// fcpGrace is how long collectJS waits after the load for a first-contentful-paint entry that
// has not come yet (headless Chromium can paint after the load event); FCPMs stays 0 without one.
const fcpGrace = 250 * time.Millisecond

// collectJS returns a script whose promise resolves with the page's timings; with wait it first
// polls every 5 ms until loadEventEnd > 0 (it stays 0 until the load handlers have returned),
// the page's fetch loader has no fetch in flight (self[pages.PendingVar] is not above 0: fetch()
// does not delay the load event, yet every fetched object is part of the page) and no web font
// is loading (document.fonts.status is not "loading": a font is requested only when a layout
// first needs it, and when a render-blocking stylesheet is the page's last resource that layout
// can come after the load event; measured over h1, docs/design.md "Replaying a HAR"), then up
// to fcpGrace for the first-contentful-paint entry. The PLT stays loadEventEnd. The resources are
// the page's Resource Timing entries followed by those its iframes posted to it (the objects an
// iframe holds, self[pages.FrameResourcesVar], already on the page's time origin).
func collectJS(wait bool) string {
	return fmt.Sprintf(`new Promise(resolve => {
  const snap = () => {
    const n = performance.getEntriesByType('navigation')[0];
    return {
      nav: n ? n.toJSON() : null,
      resources: performance.getEntriesByType('resource').map(r => ({name: r.name,
        nextHopProtocol: r.nextHopProtocol, transferSize: r.transferSize,
        encodedBodySize: r.encodedBodySize, startTime: r.startTime, connectStart: r.connectStart,
        connectEnd: r.connectEnd, secureConnectionStart: r.secureConnectionStart,
        requestStart: r.requestStart, responseStart: r.responseStart, responseEnd: r.responseEnd,
        responseStatus: r.responseStatus || 0})).concat(self.%s || []),
      paint: performance.getEntriesByType('paint').map(p => ({name: p.name, startTime: p.startTime})),
      timeOrigin: performance.timeOrigin,
    };
  };
  const fcp = () => performance.getEntriesByName('first-contentful-paint').length > 0;
  const fontsSettled = () => !document.fonts || document.fonts.status !== 'loading';
  let loadedAt = 0;
  const poll = () => {
    const n = performance.getEntriesByType('navigation')[0];
    if (%t && !(n && n.loadEventEnd > 0 && !(self.%s > 0) && fontsSettled())) { setTimeout(poll, 5); return; }
    if (!loadedAt) loadedAt = performance.now();
    if (%t && !fcp() && performance.now() - loadedAt < %d) { setTimeout(poll, 5); return; }
    resolve(snap());
  };
  poll();
})`, pages.FrameResourcesVar, wait, pages.PendingVar, wait, fcpGrace.Milliseconds())
}

// resourceBufferJS raises the Resource Timing buffer (default 250 entries) before any page
// script runs, so pages with hundreds of objects are seen whole.
const resourceBufferJS = `performance.setResourceTimingBufferSize(100000)`

// fill copies the timings into rec: PLT, TTFB, DCL, FCP, connect and TLS times, the observed
// protocol and the resources.
func fill(rec *result.Record, tm *pageTimings) {
	if n := tm.Nav; n != nil {
		rec.ObservedProtocol = protocol.Observed(n.NextHopProtocol)
		rec.PLTMs = n.LoadEventEnd - n.StartTime
		rec.TTFBMs = n.ResponseStart - n.StartTime
		rec.DCLMs = n.DOMContentLoadedEventEnd - n.StartTime
		rec.ConnectMs = n.ConnectEnd - n.ConnectStart
		if n.SecureConnectionStart > 0 {
			rec.TLSMs = n.ConnectEnd - n.SecureConnectionStart
		}
		rec.Document = &result.Resource{URL: n.Name, Protocol: protocol.Observed(n.NextHopProtocol),
			TransferSize: n.TransferSize, EncodedBodySize: n.EncodedBodySize, Status: n.ResponseStatus,
			StartMs: 0, EndMs: n.ResponseEnd - n.StartTime,
			ConnectStartMs: n.ConnectStart - n.StartTime, ConnectEndMs: n.ConnectEnd - n.StartTime,
			RequestStartMs: n.RequestStart - n.StartTime, ResponseStartMs: n.ResponseStart - n.StartTime}
		if n.SecureConnectionStart > 0 {
			rec.Document.TLSStartMs = n.SecureConnectionStart - n.StartTime
		}
	}
	for _, p := range tm.Paint {
		if p.Name == "first-contentful-paint" {
			rec.FCPMs = p.StartTime
		}
	}
	rec.Resources = make([]result.Resource, 0, len(tm.Resources))
	for _, r := range tm.Resources {
		rec.Resources = append(rec.Resources, result.Resource{
			URL: r.Name, Protocol: protocol.Observed(r.NextHopProtocol),
			TransferSize: r.TransferSize, EncodedBodySize: r.EncodedBodySize,
			StartMs: r.StartTime, EndMs: r.ResponseEnd, Status: r.ResponseStatus,
			ConnectStartMs: r.ConnectStart, ConnectEndMs: r.ConnectEnd, TLSStartMs: r.SecureConnectionStart,
			RequestStartMs: r.RequestStart, ResponseStartMs: r.ResponseStart, Source: r.Source,
		})
	}
}

// maxProblems is how many problems an invalid_reason lists before "and N more".
const maxProblems = 3

// verify checks a load against the manifest and the requested protocol and returns every
// problem found (none = valid): the navigation's status and protocol, then for each object in
// manifest order whether it is present on its origin (pages.Object.Origin: the resource's host;
// the page's objects are matched by path), its status (200 when reported), its size
// (encodedBodySize == Size) and its protocol, then the protocol of any other resource.
//
// failed maps URL paths to the network error of requests that failed (may be nil); a missing
// object's problem then names the error.
func verify(requested string, nav *navTiming, res []result.Resource, m *pages.Manifest, failed map[string]string) []string {
	var probs []string
	index := indexPath(m)
	if nav == nil {
		probs = append(probs, "page "+index+": no navigation timing")
	} else {
		if nav.ResponseStatus != 0 && nav.ResponseStatus != 200 {
			probs = append(probs, fmt.Sprintf("page %s: HTTP status %d", index, nav.ResponseStatus))
		}
		if p := protocolProblem(protocol.Observed(nav.NextHopProtocol), requested); p != "" {
			probs = append(probs, "page "+index+": "+p)
		}
	}
	seen := make(map[int]bool)
	if m != nil {
		for _, o := range m.Objects {
			i := findObject(res, o)
			if i < 0 {
				if j := findResource(res, o.Path); o.Origin != "" && j >= 0 {
					probs = append(probs, fmt.Sprintf("object %s: fetched from %s, not its origin %s", o.Path, res[j].URL, o.Origin))
					continue
				}
				if e, ok := failed[o.Path]; ok {
					probs = append(probs, "object "+o.Path+": failed: "+e)
				} else {
					probs = append(probs, "object "+o.Path+": missing (not fetched or not finished)")
				}
				continue
			}
			seen[i] = true
			probs = append(probs, objectProblems(o, res[i], requested, failed)...)
		}
	}
	for i, r := range res {
		if seen[i] {
			continue
		}
		if p := protocolProblem(r.Protocol, requested); p != "" {
			probs = append(probs, "resource "+r.URL+": "+p)
		}
	}
	return probs
}

// objectProblems checks one fetched object: status, size and protocol.
func objectProblems(o pages.Object, r result.Resource, requested string, failed map[string]string) []string {
	var probs []string
	if r.Status != 0 && r.Status != 200 {
		probs = append(probs, fmt.Sprintf("object %s: HTTP status %d", o.Path, r.Status))
	}
	if r.EncodedBodySize != o.Size {
		p := fmt.Sprintf("object %s: %d of %d bytes", o.Path, r.EncodedBodySize, o.Size)
		if e, ok := failed[o.Path]; ok {
			p += " (failed: " + e + ")"
		}
		probs = append(probs, p)
	}
	if p := protocolProblem(r.Protocol, requested); p != "" {
		probs = append(probs, "object "+o.Path+": "+p)
	}
	return probs
}

// protocolProblem describes a protocol mismatch, or returns "" when got is the requested one.
func protocolProblem(got, requested string) string {
	want := requested
	if p, err := protocol.Lookup(requested); err == nil {
		want = string(p.Version) // a variant such as HTTP/2 over TLS 1.3 is verified as h2
	}
	switch got {
	case want:
		return ""
	case "":
		return "protocol unknown (empty nextHopProtocol), requested " + requested
	default:
		return fmt.Sprintf("protocol %q, requested %s", got, requested)
	}
}

// findObject returns the index of the first resource that is object o: its URL path is o.Path
// and, for an object on another origin (o.Origin), its host is that origin; or -1.
func findObject(res []result.Resource, o pages.Object) int {
	if o.Origin == "" {
		return findResource(res, o.Path)
	}
	for i, r := range res {
		if u, err := url.Parse(r.URL); err == nil && u.Path == o.Path && u.Hostname() == o.Origin {
			return i
		}
	}
	return -1
}

// findResource returns the index of the first resource whose URL path is path, or -1.
func findResource(res []result.Resource, path string) int {
	for i, r := range res {
		if u, err := url.Parse(r.URL); err == nil && u.Path == path {
			return i
		}
	}
	return -1
}

// reason joins problems into one invalid_reason: the first maxProblems, then "and N more".
func reason(probs []string) string {
	if len(probs) <= maxProblems {
		return strings.Join(probs, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(probs[:maxProblems], "; "), len(probs)-maxProblems)
}

// indexPath returns the page's URL path from the manifest (pages.IndexPath by default).
func indexPath(m *pages.Manifest) string {
	if m != nil && m.Index != "" {
		return m.Index
	}
	return pages.IndexPath
}
