package pages

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"
)

// The HAR 1.2 schema (W3C Web Performance WG draft "HTTP Archive (HAR) format", 2012; the version
// Chrome DevTools imports and exports), declared once: package browser writes a load's HAR with
// these types and this package reads HARs (FromHAR, ReadArchive) with them. Only the fields
// pltlab writes or reads are declared; names follow the spec, custom fields start with "_" as
// the spec allows (Chrome DevTools' _resourceType, _initiator, _transferSize, _error).

// HARFile is a HAR file: {"log": ...}; Log is nil when the JSON has none (not a HAR).
type HARFile struct {
	Log *HARLog `json:"log"`
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
	// Initiator is what issued the request (Chrome DevTools' _initiator), nil when the HAR
	// does not say.
	Initiator *HARInitiator `json:"_initiator,omitempty"`
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
	// Text is the decoded body (Network.getResponseBody after the load, for pltlab's own HARs):
	// the text itself, or its standard base64 when Encoding is "base64"; nil when not recorded
	// (an empty body recorded is "").
	Text *string `json:"text,omitempty"`
	// Encoding is "base64" when Text is base64 (a body that is not valid UTF-8), else absent.
	Encoding string `json:"encoding,omitempty"`
}

// SetBody records body in c: as text when it is valid UTF-8, else base64 (HAR 1.2 section
// "content"). Size becomes the body's length when it is 0 (a body the browser counted no data
// for: served from a single frame Chromium reported at loadingFinished only).
func (c *HARContent) SetBody(body []byte) {
	text, enc := string(body), ""
	if !utf8.Valid(body) {
		text, enc = base64.StdEncoding.EncodeToString(body), "base64"
	}
	c.Text, c.Encoding = &text, enc
	c.Size = cmp.Or(c.Size, int64(len(body)))
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

// HARInitiator is Chrome's "_initiator" (DevTools Network.Initiator): its type ("parser",
// "script", "other", ...), the URL of the document or script that issued the request, and, for
// "script", the JavaScript stack whose frames name the script.
type HARInitiator struct {
	Type  string    `json:"type"`
	URL   string    `json:"url"`
	Stack *HARStack `json:"stack,omitempty"`
}

// HARStack is a JavaScript stack of an initiator: its frames' script URLs, then its parent's.
type HARStack struct {
	CallFrames []struct {
		URL string `json:"url"`
	} `json:"callFrames"`
	Parent *HARStack `json:"parent"`
}

// UnmarshalJSON reads "_initiator" in the two forms HAR writers use: Chrome DevTools' object
// (DevTools Network.Initiator, above) and the npm package chrome-har's string (sitespeed.io,
// browsertime): the URL of the parser's document or of the top call frame's script, with the
// full initiator JSON-encoded in a separate "_initiator_detail" string. Any other JSON value
// (null, a number, ...) reads as no initiator: a custom field that says nothing FromHAR can use
// must not make a valid HAR 1.2 unreadable.
func (in *HARInitiator) UnmarshalJSON(b []byte) error {
	*in = HARInitiator{}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case string:
		in.URL = v
	case map[string]any:
		type plain HARInitiator // without this method
		var p plain
		if err := json.Unmarshal(b, &p); err != nil {
			return nil // an object of another shape: no initiator
		}
		*in = HARInitiator(p)
	}
	return nil
}

// url returns the initiator's URL: its url, else the first script URL on its stack.
func (in *HARInitiator) url() string {
	if in == nil {
		return ""
	}
	if in.URL != "" {
		return in.URL
	}
	for s := in.Stack; s != nil; s = s.Parent {
		for _, f := range s.CallFrames {
			if f.URL != "" {
				return f.URL
			}
		}
	}
	return ""
}
