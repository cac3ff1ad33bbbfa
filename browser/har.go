package browser

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/pages"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/network"
)

// netEvent is one recorded DevTools event: its method and parameters as Chromium sent them.
type netEvent struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// harMethods maps the recorded event types to their DevTools method names.
func harMethod(ev any) cdproto.MethodType {
	switch ev.(type) {
	case *network.EventRequestWillBeSent:
		return cdproto.EventNetworkRequestWillBeSent
	case *network.EventRequestWillBeSentExtraInfo:
		return cdproto.EventNetworkRequestWillBeSentExtraInfo
	case *network.EventResponseReceived:
		return cdproto.EventNetworkResponseReceived
	case *network.EventResponseReceivedExtraInfo:
		return cdproto.EventNetworkResponseReceivedExtraInfo
	case *network.EventDataReceived:
		return cdproto.EventNetworkDataReceived
	case *network.EventLoadingFinished:
		return cdproto.EventNetworkLoadingFinished
	case *network.EventLoadingFailed:
		return cdproto.EventNetworkLoadingFailed
	}
	return ""
}

// recordEvent encodes ev when it is one of the network events a HAR is built from.
func recordEvent(ev any) (netEvent, bool) {
	m := harMethod(ev)
	if m == "" {
		return netEvent{}, false
	}
	b, err := jsonv2.Marshal(ev)
	if err != nil {
		return netEvent{}, false
	}
	return netEvent{Method: string(m), Params: b}, true
}

// harRequest gathers the events of one request.
type harRequest struct {
	sent      *network.EventRequestWillBeSent
	extraReq  *network.EventRequestWillBeSentExtraInfo
	resp      *network.EventResponseReceived
	extraResp *network.EventResponseReceivedExtraInfo
	decoded   int64
	finished  *network.EventLoadingFinished
	failed    *network.EventLoadingFailed
}

// harPageInfo is what a HAR needs besides the network events.
type harPageInfo struct {
	URL            string
	Browser        string  // product/version, e.g. "HeadlessChrome/156.0..."
	Creator        string  // pltlab version
	DCLMs, PLTMs   float64 // -1 when unknown
	NavigationWall time.Time
	Bodies         map[network.RequestID][]byte // response bodies by request ID (watch.readBodies), nil when not read
}

// buildHAR builds a HAR 1.2 log from recorded events (timings: see harTimings). Requests are in
// the order they were issued; data: URLs are left out.
func buildHAR(events []netEvent, info harPageInfo) (*pages.HARFile, error) {
	reqs, order, err := groupEvents(events)
	if err != nil {
		return nil, err
	}
	h := &pages.HARFile{Log: &pages.HARLog{Version: "1.2", Creator: pages.HARCreator{Name: "pltlab", Version: cmp.Or(info.Creator, "-")},
		Entries: []pages.HAREntry{}}}
	name, ver, _ := strings.Cut(info.Browser, "/")
	h.Log.Browser = pages.HARCreator{Name: cmp.Or(name, "-"), Version: cmp.Or(ver, "-")}
	for _, id := range order {
		if e, ok := harEntry(reqs[id]); ok {
			if b, ok := info.Bodies[id]; ok && e.Response.Status != 0 {
				e.Response.Content.SetBody(b)
			}
			h.Log.Entries = append(h.Log.Entries, e)
		}
	}
	start := info.NavigationWall
	if len(h.Log.Entries) > 0 && start.IsZero() {
		start, _ = time.Parse(time.RFC3339Nano, h.Log.Entries[0].StartedDateTime)
	}
	h.Log.Pages = []pages.HARPage{{StartedDateTime: harTime(start), ID: "page_1", Title: info.URL,
		PageTimings: pages.HARPageTimings{OnContentLoad: round3(info.DCLMs), OnLoad: round3(info.PLTMs)}}}
	return h, nil
}

// groupEvents decodes the events and groups them by request ID, in issue order.
func groupEvents(events []netEvent) (map[network.RequestID]*harRequest, []network.RequestID, error) {
	reqs := map[network.RequestID]*harRequest{}
	var order []network.RequestID
	get := func(id network.RequestID) *harRequest {
		r := reqs[id]
		if r == nil {
			r = &harRequest{}
			reqs[id] = r
			order = append(order, id)
		}
		return r
	}
	for i, e := range events {
		v, err := cdproto.UnmarshalMessage(&cdproto.Message{Method: cdproto.MethodType(e.Method), Params: jsonv2.Value(e.Params)})
		if err != nil {
			return nil, nil, fmt.Errorf("har: event %d (%s): %w", i, e.Method, err)
		}
		switch ev := v.(type) {
		case *network.EventRequestWillBeSent:
			r := get(ev.RequestID)
			r.sent = cmp.Or(r.sent, ev)
		case *network.EventRequestWillBeSentExtraInfo:
			get(ev.RequestID).extraReq = ev
		case *network.EventResponseReceived:
			get(ev.RequestID).resp = ev
		case *network.EventResponseReceivedExtraInfo:
			get(ev.RequestID).extraResp = ev
		case *network.EventDataReceived:
			get(ev.RequestID).decoded += ev.DataLength
		case *network.EventLoadingFinished:
			get(ev.RequestID).finished = ev
		case *network.EventLoadingFailed:
			get(ev.RequestID).failed = ev
		}
	}
	return reqs, order, nil
}

// harEntry builds the entry of one request; ok is false for a request never sent (only extra
// info seen) or for data: URLs.
func harEntry(r *harRequest) (pages.HAREntry, bool) {
	if r.sent == nil || r.sent.Request == nil || strings.HasPrefix(r.sent.Request.URL, "data:") {
		return pages.HAREntry{}, false
	}
	rq := r.sent.Request
	e := pages.HAREntry{PageRef: "page_1", StartedDateTime: harTime(wall(r.sent.WallTime)), ResourceType: string(r.sent.Type)}
	e.Request = pages.HARRequest{Method: rq.Method, URL: rq.URL, HTTPVersion: "unknown", Cookies: []pages.HARNameValue{},
		Headers: headerList(rq.Headers), QueryString: queryList(rq.URL), HeadersSize: -1, BodySize: 0}
	if r.extraReq != nil && len(r.extraReq.Headers) > 0 {
		e.Request.Headers = headerList(r.extraReq.Headers)
	}
	e.Response = pages.HARResponse{HTTPVersion: "unknown", Cookies: []pages.HARNameValue{}, Headers: []pages.HARNameValue{},
		Content: pages.HARContent{Size: r.decoded, MimeType: "x-unknown"}, HeadersSize: -1, BodySize: -1}
	e.Timings = pages.HARTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1}
	if r.failed != nil {
		e.Error = r.failed.ErrorText
	}
	if r.finished != nil {
		e.TransferSize = int64(r.finished.EncodedDataLength)
	}
	if r.resp != nil && r.resp.Response != nil {
		fillResponse(&e, r)
	}
	e.Time = round3(max(e.Timings.Blocked, 0) + max(e.Timings.DNS, 0) + max(e.Timings.Connect, 0) +
		e.Timings.Send + e.Timings.Wait + e.Timings.Receive)
	return e, true
}

// fillResponse fills the response, connection and timings of e from r's response events.
func fillResponse(e *pages.HAREntry, r *harRequest) {
	rs := r.resp.Response
	e.Request.HTTPVersion, e.Response.HTTPVersion = rs.Protocol, rs.Protocol
	e.Response.Status, e.Response.StatusText = rs.Status, rs.StatusText
	e.Response.Headers = headerList(rs.Headers)
	if r.extraResp != nil && len(r.extraResp.Headers) > 0 {
		e.Response.Headers = headerList(r.extraResp.Headers)
	}
	e.Response.Content.MimeType = cmp.Or(rs.MimeType, e.Response.Content.MimeType)
	e.Response.HeadersSize = int64(rs.EncodedDataLength)
	if r.finished != nil {
		e.Response.BodySize = max(int64(r.finished.EncodedDataLength)-e.Response.HeadersSize, 0)
	}
	e.Connection = fmt.Sprintf("%.0f", rs.ConnectionID)
	e.ServerIPAddress = strings.Trim(rs.RemoteIPAddress, "[]")
	if t := rs.Timing; t != nil {
		e.Timings = harTimings(t, monotonic(r.sent.Timestamp), r.finished)
	}
}

// harTimings converts a Network.ResourceTiming into HAR timings whose phases are contiguous, so
// that their sum is the whole fetch, from the request's issue to its last byte (the span of
// Resource Timing's startTime to responseEnd). As in Chrome DevTools' export (Log.ts): blocked
// runs to the first of dnsStart/connectStart/sendStart, dns to dnsEnd, connect to connectEnd
// (ssl inside it), wait from sendEnd to receiveHeadersEnd, receive to loadingFinished. Unlike
// DevTools, which counts it as "send", the time between the end of connect and sendStart (the
// request waiting for a free connection, e.g. the seventh h1 request) is added to blocked, as HAR
// 1.2 defines blocked: "time spent in a queue waiting for a network connection".
func harTimings(t *network.ResourceTiming, issued float64, fin *network.EventLoadingFinished) pages.HARTimings {
	h := pages.HARTimings{DNS: -1, Connect: -1, SSL: -1}
	if issued > 0 && issued < t.RequestTime {
		h.Blocked = (t.RequestTime - issued) * 1000
	}
	start := max(leastNonNegative(t.DNSStart, t.ConnectStart, t.SendStart), 0)
	h.Blocked += start
	last := start
	if t.DNSEnd >= 0 {
		h.DNS = max(t.DNSEnd-start, 0)
		last = max(last, t.DNSEnd)
	}
	if t.ConnectEnd >= 0 {
		h.Connect = max(t.ConnectEnd-last, 0)
		last = max(last, t.ConnectEnd)
	}
	if t.SslEnd > 0 {
		h.SSL = t.SslEnd - t.SslStart
	}
	if t.SendStart > last {
		h.Blocked += t.SendStart - last // waiting for a connection after connect (see above)
		last = t.SendStart
	}
	h.Send = max(t.SendEnd-last, 0)
	last = max(last, t.SendEnd)
	h.Wait = max(t.ReceiveHeadersEnd-last, 0)
	if fin != nil {
		h.Receive = max((monotonic(fin.Timestamp)-t.RequestTime)*1000-max(t.ReceiveHeadersEnd, last), 0)
	}
	h.Blocked, h.DNS, h.Connect, h.SSL = round3(h.Blocked), round3(h.DNS), round3(h.Connect), round3(h.SSL)
	h.Send, h.Wait, h.Receive = round3(h.Send), round3(h.Wait), round3(h.Receive)
	return h
}

// leastNonNegative returns the smallest non-negative value, or -1.
func leastNonNegative(vs ...float64) float64 {
	out := -1.0
	for _, v := range vs {
		if v >= 0 && (out < 0 || v < out) {
			out = v
		}
	}
	return out
}

// headerList turns DevTools headers into HAR name/value pairs sorted by name.
func headerList(h network.Headers) []pages.HARNameValue {
	out := make([]pages.HARNameValue, 0, len(h))
	for k, v := range h {
		for _, line := range strings.Split(fmt.Sprint(v), "\n") {
			out = append(out, pages.HARNameValue{Name: k, Value: line})
		}
	}
	slices.SortFunc(out, func(a, b pages.HARNameValue) int {
		return strings.Compare(a.Name+"\x00"+a.Value, b.Name+"\x00"+b.Value)
	})
	return out
}

// queryList returns the URL's query parameters in order.
func queryList(u string) []pages.HARNameValue {
	out := []pages.HARNameValue{}
	pu, err := url.Parse(u)
	if err != nil || pu.RawQuery == "" {
		return out
	}
	for _, kv := range strings.Split(pu.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		k, _ = url.QueryUnescape(k)
		v, _ = url.QueryUnescape(v)
		out = append(out, pages.HARNameValue{Name: k, Value: v})
	}
	return out
}

// wall converts a DevTools wall time (s since the Unix epoch) to a time.
func wall(t cdp.TimeSinceEpoch) time.Time {
	if t == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(math.Round(float64(t)*1e9)))
}

// monotonic returns a DevTools monotonic time in seconds (0 when absent).
func monotonic(t cdp.MonotonicTime) float64 { return float64(t) }

// harTime formats t as HAR wants (ISO 8601 with ms, UTC).
func harTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// round3 rounds to 1 us (3 decimals of ms), keeping files short and golden files stable.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// writeHAR writes h as indented JSON to path.
func writeHAR(path string, h *pages.HARFile) error {
	b, err := json.MarshalIndent(h, "", " ")
	if err != nil {
		return fmt.Errorf("har: encode: %w", err)
	}
	// Written to path.part and renamed, so that path exists only when whole (a full
	// filesystem leaves no cut-short HAR behind).
	part := path + ".part"
	if err := os.WriteFile(part, append(b, '\n'), 0o644); err != nil {
		os.Remove(part)
		return fmt.Errorf("har: write %s: %w", path, err)
	}
	if err := os.Rename(part, path); err != nil {
		os.Remove(part)
		return fmt.Errorf("har: %w", err)
	}
	return nil
}

// writeEvents writes events as JSON Lines (one {"method","params"} object a line) to w.
func writeEvents(w io.Writer, events []netEvent) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// writeEventsFile writes events to path with writeEvents.
func writeEventsFile(path string, events []netEvent) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return joinClose(writeEvents(f, events), f)
}
