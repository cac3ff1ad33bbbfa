package browser

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/network"
)

// HAR 1.2 (W3C Web Performance WG draft "HTTP Archive (HAR) format", 2012; the version Chrome
// DevTools imports and exports). Only the fields pltlab fills are declared; names follow the spec,
// custom fields start with "_" as the spec allows.

// HAR is a HAR file: {"log": ...}.
type HAR struct {
	Log HARLog `json:"log"`
}

// HARLog is the log object.
type HARLog struct {
	// Version is the HAR version, "1.2".
	Version string `json:"version"`
	// Creator is pltlab and its version.
	Creator HARCreator `json:"creator"`
	// Browser is Chromium's product and version as DevTools reports it.
	Browser HARCreator `json:"browser"`
	// Pages has the one page loaded.
	Pages []HARPage `json:"pages"`
	// Entries has one entry per request, in issue order.
	Entries []HAREntry `json:"entries"`
}

// HARCreator names the creator or the browser.
type HARCreator struct {
	// Name is the program's name, e.g. "pltlab" or "HeadlessChrome".
	Name string `json:"name"`
	// Version is its version ("-" when unknown).
	Version string `json:"version"`
}

// HARPage is one page; its timings are ms from StartedDateTime.
type HARPage struct {
	// StartedDateTime is when the navigation started (ISO 8601, ms, UTC).
	StartedDateTime string `json:"startedDateTime"`
	// ID is "page_1", the pageref of every entry.
	ID string `json:"id"`
	// Title is the page's URL.
	Title string `json:"title"`
	// PageTimings are the page's milestones.
	PageTimings HARPageTimings `json:"pageTimings"`
}

// HARPageTimings are the page's DOMContentLoaded and load times in ms (-1 = unknown).
type HARPageTimings struct {
	// OnContentLoad is the record's DCLMs (DOMContentLoaded event end), in ms.
	OnContentLoad float64 `json:"onContentLoad"`
	// OnLoad is the record's PLTMs (load event end), in ms; -1 for a timed-out load.
	OnLoad float64 `json:"onLoad"`
}

// HAREntry is one request. Time is the sum of the non-negative timings except SSL, in ms.
// Connection is Chromium's connection ID (Network.Response.connectionId): the same ID means the
// same TCP connection (h1, h2) or QUIC connection (h3).
type HAREntry struct {
	// PageRef is "page_1".
	PageRef string `json:"pageref"`
	// StartedDateTime is when the request was issued (Network.requestWillBeSent wallTime).
	StartedDateTime string `json:"startedDateTime"`
	// Time is the request's total time in ms: the sum of Timings except SSL.
	Time float64 `json:"time"`
	// Request is the request as sent (headers from requestWillBeSentExtraInfo when present).
	Request HARRequest `json:"request"`
	// Response is the response as received.
	Response HARResponse `json:"response"`
	// Cache is empty: the HTTP cache is disabled during loads.
	Cache struct{} `json:"cache"`
	// Timings are the request's phases (see harTimings).
	Timings HARTimings `json:"timings"`
	// ServerIPAddress is the server's IP address (Network.Response.remoteIPAddress).
	ServerIPAddress string `json:"serverIPAddress,omitempty"`
	// Connection is Chromium's connection ID (Network.Response.connectionId) in decimal.
	Connection string `json:"connection,omitempty"`
	// ResourceType is Chromium's resource type ("Document", "Image", ...).
	ResourceType string `json:"_resourceType,omitempty"`
	// TransferSize is every byte received for the request (headers and body, encoded), as
	// Network.loadingFinished's encodedDataLength.
	TransferSize int64 `json:"_transferSize"`
	// Error is the network error of a failed request.
	Error string `json:"_error,omitempty"`
}

// HARRequest is an entry's request. HTTPVersion is the protocol as Chromium reports it
// ("http/1.1", "h2", "h3").
type HARRequest struct {
	// Method is the HTTP method.
	Method string `json:"method"`
	// URL is the absolute URL.
	URL string `json:"url"`
	// HTTPVersion is Network.Response.protocol ("unknown" without a response).
	HTTPVersion string `json:"httpVersion"`
	// Cookies is always empty (pltlab's pages set none).
	Cookies []HARNameValue `json:"cookies"`
	// Headers are the request headers sorted by name (pseudo-headers included for h2/h3).
	Headers []HARNameValue `json:"headers"`
	// QueryString are the URL's query parameters.
	QueryString []HARNameValue `json:"queryString"`
	// HeadersSize is -1: DevTools does not give the request's header bytes on the wire.
	HeadersSize int64 `json:"headersSize"`
	// BodySize is 0 (GET requests).
	BodySize int64 `json:"bodySize"`
}

// HARResponse is an entry's response. HeadersSize is the bytes received up to the end of the
// headers (Network.Response.encodedDataLength; for h2/h3 the compressed frames), BodySize the
// encoded body bytes received.
type HARResponse struct {
	// Status is the HTTP status code (0 for a failed request).
	Status int64 `json:"status"`
	// StatusText is the reason phrase ("" over h2 and h3, which have none).
	StatusText string `json:"statusText"`
	// HTTPVersion is Network.Response.protocol: "http/1.1", "h2" or "h3".
	HTTPVersion string `json:"httpVersion"`
	// Cookies is always empty.
	Cookies []HARNameValue `json:"cookies"`
	// Headers are the response headers sorted by name.
	Headers []HARNameValue `json:"headers"`
	// Content describes the decoded body.
	Content HARContent `json:"content"`
	// RedirectURL is always "" (no redirects on pltlab's pages).
	RedirectURL string `json:"redirectURL"`
	// HeadersSize is the bytes received up to the end of the headers, -1 when unknown.
	HeadersSize int64 `json:"headersSize"`
	// BodySize is the encoded body bytes received, -1 when unknown.
	BodySize int64 `json:"bodySize"`
}

// HARNameValue is a header, cookie or query parameter.
type HARNameValue struct {
	// Name is the header, cookie or parameter name.
	Name string `json:"name"`
	// Value is its value (one pair per line of a multi-line header).
	Value string `json:"value"`
}

// HARContent describes the decoded body: Size in bytes, MIME type and, when the body was
// recorded, the body itself (HAR 1.2 content.text, with Encoding "base64" for a body that is
// not UTF-8 text), so that the HAR replays (pltlab run --page har:FILE).
type HARContent struct {
	// Size is the decoded body size in bytes (sum of Network.dataReceived dataLength).
	Size int64 `json:"size"`
	// MimeType is the response's MIME type ("x-unknown" without a response).
	MimeType string `json:"mimeType"`
	// Text is the decoded body as Network.getResponseBody gave it after the load: the text
	// itself, or its standard base64 when Encoding is "base64"; absent when not recorded.
	Text string `json:"text,omitempty"`
	// Encoding is "base64" when Text is base64 (a body that is not valid UTF-8), else absent.
	Encoding string `json:"encoding,omitempty"`
}

// setBody records body in c: as text when it is valid UTF-8, else base64 (HAR 1.2 section
// "content"). Size becomes the body's length when Chromium counted no data (a body served from
// a single frame Chromium reported at loadingFinished only).
func (c *HARContent) setBody(body []byte) {
	if utf8.Valid(body) {
		c.Text = string(body)
	} else {
		c.Text, c.Encoding = base64.StdEncoding.EncodeToString(body), "base64"
	}
	if c.Size == 0 {
		c.Size = int64(len(body))
	}
}

// HARTimings are an entry's phases in ms; -1 = does not apply (e.g. dns and connect on a reused
// connection). SSL is included in Connect (HAR 1.2).
type HARTimings struct {
	// Blocked is the time queued in the browser, or waiting for a free connection, in ms.
	Blocked float64 `json:"blocked"`
	// DNS is the name resolution time in ms (-1: none; ~0 with --host-resolver-rules).
	DNS float64 `json:"dns"`
	// Connect is the TCP or QUIC connection set-up time, TLS included, in ms (-1: reused).
	Connect float64 `json:"connect"`
	// SSL is the TLS handshake time in ms, part of Connect (-1: none).
	SSL float64 `json:"ssl"`
	// Send is the time to send the request, in ms.
	Send float64 `json:"send"`
	// Wait is from the request sent to the end of the response headers, in ms.
	Wait float64 `json:"wait"`
	// Receive is from the end of the headers to the last byte, in ms.
	Receive float64 `json:"receive"`
}

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
func buildHAR(events []netEvent, info harPageInfo) (*HAR, error) {
	reqs, order, err := groupEvents(events)
	if err != nil {
		return nil, err
	}
	h := &HAR{Log: HARLog{Version: "1.2", Creator: HARCreator{Name: "pltlab", Version: orDash(info.Creator)},
		Entries: []HAREntry{}}}
	name, ver, _ := strings.Cut(info.Browser, "/")
	h.Log.Browser = HARCreator{Name: orDash(name), Version: orDash(ver)}
	for _, id := range order {
		if e, ok := harEntry(reqs[id]); ok {
			if b, ok := info.Bodies[id]; ok && e.Response.Status != 0 {
				e.Response.Content.setBody(b)
			}
			h.Log.Entries = append(h.Log.Entries, e)
		}
	}
	start := info.NavigationWall
	if len(h.Log.Entries) > 0 && start.IsZero() {
		start, _ = time.Parse(time.RFC3339Nano, h.Log.Entries[0].StartedDateTime)
	}
	h.Log.Pages = []HARPage{{StartedDateTime: harTime(start), ID: "page_1", Title: info.URL,
		PageTimings: HARPageTimings{OnContentLoad: round3(info.DCLMs), OnLoad: round3(info.PLTMs)}}}
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
			if r.sent == nil {
				r.sent = ev
			}
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
func harEntry(r *harRequest) (HAREntry, bool) {
	if r.sent == nil || r.sent.Request == nil || strings.HasPrefix(r.sent.Request.URL, "data:") {
		return HAREntry{}, false
	}
	rq := r.sent.Request
	e := HAREntry{PageRef: "page_1", StartedDateTime: harTime(wall(r.sent.WallTime)), ResourceType: string(r.sent.Type)}
	e.Request = HARRequest{Method: rq.Method, URL: rq.URL, HTTPVersion: "unknown", Cookies: []HARNameValue{},
		Headers: headerList(rq.Headers), QueryString: queryList(rq.URL), HeadersSize: -1, BodySize: 0}
	if r.extraReq != nil && len(r.extraReq.Headers) > 0 {
		e.Request.Headers = headerList(r.extraReq.Headers)
	}
	e.Response = HARResponse{HTTPVersion: "unknown", Cookies: []HARNameValue{}, Headers: []HARNameValue{},
		Content: HARContent{Size: r.decoded, MimeType: "x-unknown"}, HeadersSize: -1, BodySize: -1}
	e.Timings = HARTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1}
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
func fillResponse(e *HAREntry, r *harRequest) {
	rs := r.resp.Response
	e.Request.HTTPVersion, e.Response.HTTPVersion = rs.Protocol, rs.Protocol
	e.Response.Status, e.Response.StatusText = rs.Status, rs.StatusText
	e.Response.Headers = headerList(rs.Headers)
	if r.extraResp != nil && len(r.extraResp.Headers) > 0 {
		e.Response.Headers = headerList(r.extraResp.Headers)
	}
	if rs.MimeType != "" {
		e.Response.Content.MimeType = rs.MimeType
	}
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
func harTimings(t *network.ResourceTiming, issued float64, fin *network.EventLoadingFinished) HARTimings {
	h := HARTimings{DNS: -1, Connect: -1, SSL: -1}
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
func headerList(h network.Headers) []HARNameValue {
	out := make([]HARNameValue, 0, len(h))
	for k, v := range h {
		for _, line := range strings.Split(fmt.Sprint(v), "\n") {
			out = append(out, HARNameValue{Name: k, Value: line})
		}
	}
	slices.SortFunc(out, func(a, b HARNameValue) int { return strings.Compare(a.Name+"\x00"+a.Value, b.Name+"\x00"+b.Value) })
	return out
}

// queryList returns the URL's query parameters in order.
func queryList(u string) []HARNameValue {
	out := []HARNameValue{}
	pu, err := url.Parse(u)
	if err != nil || pu.RawQuery == "" {
		return out
	}
	for _, kv := range strings.Split(pu.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		k, _ = url.QueryUnescape(k)
		v, _ = url.QueryUnescape(v)
		out = append(out, HARNameValue{Name: k, Value: v})
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

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeHAR writes h as indented JSON to path.
func writeHAR(path string, h *HAR) error {
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

// readEvents reads what writeEvents wrote.
func readEvents(r io.Reader) ([]netEvent, error) {
	var out []netEvent
	dec := json.NewDecoder(r)
	for dec.More() {
		var e netEvent
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		e.Params = bytes.TrimSpace(e.Params)
		out = append(out, e)
	}
	return out, nil
}

// writeEventsFile writes events to path with writeEvents.
func writeEventsFile(path string, events []netEvent) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	return joinClose(writeEvents(f, events), f)
}
