package browser

import (
	"cmp"

	"github.com/chromedp/cdproto/network"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
)

// Chromium gives no Resource Timing entry for a resource fetched by a stylesheet of another
// origin that was itself fetched in no-cors mode (a plain <link rel=stylesheet> without a
// crossorigin attribute): W3C Resource Timing Level 2 leaves such resources out of the page's
// timeline so that a page cannot learn what another origin's stylesheet loads (w3c/resource-timing
// issues 27, 70 and 200). A web font declared by an @font-face of a CDN's stylesheet, on most
// real pages, is such a resource: it is fetched, and delays the load event, yet
// performance.getEntriesByType('resource') never lists it, neither at the load nor later
// (measured with Chromium 156: docs/design.md, "Replaying a HAR"). The load check then takes
// the object from the load's DevTools Network events instead (netResources), which see every
// request the network stack made.

// netRequest is what a watch keeps of one request: its URL, when it was issued, its response,
// the body bytes received and how it finished.
type netRequest struct {
	url      string
	sent     float64 // Network.requestWillBeSent timestamp, monotonic s
	resp     *network.Response
	decoded  int64 // sum of Network.dataReceived dataLength
	finished *network.EventLoadingFinished
}

// follow updates the request that ev belongs to; the caller holds w.mu.
func (w *watch) follow(ev any) {
	get := func(id network.RequestID) *netRequest {
		r := w.reqs[id]
		if r == nil {
			r = &netRequest{}
			w.reqs[id] = r
			w.order = append(w.order, id)
		}
		return r
	}
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if e.Request != nil {
			r := get(e.RequestID)
			r.url, r.sent = e.Request.URL, float64(e.Timestamp) // a redirect keeps the ID: the last URL wins
		}
	case *network.EventResponseReceived:
		if e.Response != nil {
			get(e.RequestID).resp = e.Response
		}
	case *network.EventDataReceived:
		get(e.RequestID).decoded += e.DataLength
	case *network.EventLoadingFinished:
		get(e.RequestID).finished = e
	}
}

// finishedRequests returns a copy of the requests that got a response and finished loading by
// now, in issue order: taken right after the timings were read, so that a request still in
// flight then stays unfinished, as it does in Resource Timing.
func (w *watch) finishedRequests() []netRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []netRequest
	for _, id := range w.order {
		if r := w.reqs[id]; r != nil && r.resp != nil && r.finished != nil {
			out = append(out, *r)
		}
	}
	return out
}

// netResources returns, for each object of m that has no entry in tm.Resources, an entry built
// from the first finished request for it in reqs (matched as findObject matches: path, and the
// host for an object on another origin), with Source result.SourceNetwork; objects with no
// finished request stay missing, so the load check stays as strict as before. The entry's
// status and protocol are the response's (Network.Response status and protocol), its
// encodedBodySize the body bytes before content decoding (Network.loadingFinished
// encodedBodyLength, or the bytes of Network.dataReceived when Chromium sends none: pltlab's
// server sends every body identity-encoded), its transferSize every byte received, and its
// times are on the page's time origin (timeOrigin), or 0 when that is unknown.
func netResources(tm *pageTimings, m *pages.Manifest, reqs []netRequest) []resTiming {
	if m == nil || len(reqs) == 0 {
		return nil
	}
	have := resources(tm)
	cand := make([]result.Resource, len(reqs))
	for i, r := range reqs {
		cand[i] = result.Resource{URL: r.resp.URL}
	}
	origin, known := timeOrigin(tm.Nav, reqs)
	var out []resTiming
	for _, o := range m.Objects {
		if findObject(have, o) >= 0 {
			continue
		}
		if i := findObject(cand, o); i >= 0 {
			out = append(out, netEntry(reqs[i], origin, known))
		}
	}
	return out
}

// timeOrigin returns the page's time origin (performance.timeOrigin) on DevTools' monotonic
// clock, in ms: the document request's send start as the Network domain saw it
// (Response.timing requestTime + sendStart) less Navigation Timing's requestStart, which
// Chromium takes from the same clock reading. ok is false without the document's response
// timing.
func timeOrigin(nav *navTiming, reqs []netRequest) (ms float64, ok bool) {
	if nav == nil {
		return 0, false
	}
	for _, r := range reqs {
		if r.resp.URL == nav.Name && r.resp.Timing != nil {
			return r.resp.Timing.RequestTime*1000 + r.resp.Timing.SendStart - nav.RequestStart, true
		}
	}
	return 0, false
}

// netEntry builds the Resource Timing entry of one finished request (see netResources); origin
// is the page's time origin in monotonic ms, used only when known.
func netEntry(r netRequest, origin float64, known bool) resTiming {
	e := resTiming{Name: r.resp.URL, NextHopProtocol: r.resp.Protocol, ResponseStatus: int(r.resp.Status),
		TransferSize: int64(r.finished.EncodedDataLength), EncodedBodySize: int64(r.finished.EncodedBodyLength),
		Source: result.SourceNetwork}
	e.EncodedBodySize = cmp.Or(e.EncodedBodySize, r.decoded)
	if !known {
		return e
	}
	e.StartTime = r.sent*1000 - origin
	e.ResponseEnd = float64(r.finished.Timestamp)*1000 - origin
	e.ConnectStart, e.ConnectEnd = e.StartTime, e.StartTime // a reused connection: no connect phase
	t := r.resp.Timing
	if t == nil {
		return e
	}
	at := func(off float64) float64 { return t.RequestTime*1000 + off - origin }
	if t.ConnectStart >= 0 {
		e.ConnectStart, e.ConnectEnd = at(t.ConnectStart), at(t.ConnectEnd)
	}
	if t.SslStart >= 0 {
		e.SecureConnectionStart = at(t.SslStart)
	}
	e.RequestStart = at(t.SendStart)
	e.ResponseStart = at(t.ReceiveHeadersEnd)
	if t.ReceiveHeadersStart > 0 {
		e.ResponseStart = at(t.ReceiveHeadersStart)
	}
	return e
}
