package pages

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ReplayPrefix starts a page that replays a HAR instead of a generated page: "har:FILE"
// (pltlab run --page har:FILE).
const ReplayPrefix = "har:"

// MatchKind says how a request matched an archive entry (Archive.Match).
type MatchKind string

// The match kinds, in the order Archive.Match tries them.
const (
	// MatchExact: same method, host, path and the same query parameters (in any order).
	MatchExact MatchKind = "exact"
	// MatchQuery: same method, host and path, the query differs; the entry sharing the most
	// name=value parameters with the request is taken (the first recorded on a tie).
	MatchQuery MatchKind = "query"
	// MatchMiss: no entry of the archive has the request's method, host and path.
	MatchMiss MatchKind = ""
)

// Archive is a HAR's recorded responses, indexed for replay (ReadArchive): every entry of an
// http or https URL that got a response and whose body was recorded. Hosts are matched without
// their port, paths as escaped in the URL.
type Archive struct {
	// File is the HAR file's name as given; Digest the lower-case hex SHA-256 of its bytes.
	File   string
	Digest string
	// Document is the main document's URL: the first document entry with a 2xx status, as
	// FromHAR chooses it.
	Document string
	// DocHost is the main document's host (lower case, without port); DocPath its URL path
	// and query ("/index.html", "/a?b=1").
	DocHost, DocPath string
	// Hosts are every host of the archive's entries (lower case, without port), DocHost first,
	// then in order of first appearance.
	Hosts []string
	// Entries are the replayable entries in HAR order.
	Entries []ArchiveEntry
	// NoBody counts the entries left out because their body was not recorded (content.text
	// absent while content.size > 0): requests for them are misses.
	NoBody int
	// Shape is the page shape FromHAR derives from the same HAR (for cost estimates), nil
	// when FromHAR refuses it (e.g. no object besides the main document).
	Shape *HARShape

	byKey map[string][]int // method+" "+host+path -> indexes into Entries
}

// ArchiveEntry is one recorded response.
type ArchiveEntry struct {
	// Method, Host (lower case, without port), Path (escaped) and Query (raw) of the request.
	Method, Host, Path, Query string
	// URL is the request URL as recorded.
	URL string
	// Status is the recorded HTTP status.
	Status int
	// Header are the recorded response headers to replay: hop-by-hop headers (RFC 9110
	// section 7.6.1), HTTP/2 pseudo-headers, Content-Length, Content-Encoding (the body is the
	// decoded one, served identity-encoded), Alt-Svc and Date are left out.
	Header http.Header
	// Body is the decoded body (content.text, base64-decoded when content.encoding is "base64").
	Body []byte
	// Type is the object type the entry reads as (FromHAR's rules; "" when none, or an image).
	Type ObjectType
	// Page is true for an entry of the main document's page (its pageref, or none).
	Page bool
}

// droppedHeaders are the recorded response headers replay does not send (lower case).
var droppedHeaders = map[string]bool{"connection": true, "keep-alive": true, "proxy-connection": true,
	"proxy-authenticate": true, "te": true, "trailer": true, "transfer-encoding": true, "upgrade": true,
	"content-length": true, "content-encoding": true, "alt-svc": true, "date": true}

// ReadArchive reads a HAR 1.2 file for replay (ReadHAR, then HAR.Archive). Errors: the file
// cannot be read, is not a regular file or is over MaxHARBytes (ReadHAR); it is not a HAR of
// a page load (wrapping ErrNotHAR, naming what is accepted); its main document has no
// recorded body (a HAR saved without content); a base64 body does not decode; a host is not a
// DNS name (an IP address).
func ReadArchive(name string) (*Archive, error) {
	h, err := ReadHAR(name)
	if err != nil {
		return nil, err
	}
	return h.Archive()
}

// Archive indexes the HAR for replay (ReadArchive's rules and errors), its Shape derived from
// the same parsed entries.
func (h *HAR) Archive() (*Archive, error) {
	entries := h.entries
	main, err := mainDocument(entries)
	if err != nil {
		return nil, err
	}
	if entries[main].Response.Content.Text == nil {
		return nil, notHAR("the main document %s has no recorded body (response.content.text): save the HAR with content (DevTools: \"Save all as HAR with content\"; pltlab: --artifacts)", entries[main].Request.URL)
	}
	a := &Archive{File: h.File, Digest: h.Digest, Document: entries[main].Request.URL, byKey: map[string][]int{}}
	for i := range entries {
		if err := a.add(&entries[i], entries[main].PageRef); err != nil {
			return nil, err
		}
	}
	d := a.Entries[slices.IndexFunc(a.Entries, func(e ArchiveEntry) bool { return e.URL == a.Document })]
	a.DocHost, a.DocPath = d.Host, d.Path
	if d.Query != "" {
		a.DocPath += "?" + d.Query
	}
	a.Hosts = slices.DeleteFunc(a.Hosts, func(h string) bool { return h == d.Host })
	a.Hosts = append([]string{d.Host}, a.Hosts...)
	if sh, err := h.Shape(); err == nil {
		a.Shape = sh
	}
	return a, nil
}

// add indexes entry e when it is replayable: an http(s) URL, a response (status > 0) and a
// recorded body (or none needed: content.size 0).
func (a *Archive) add(e *HAREntry, mainRef string) error {
	u, err := url.Parse(e.Request.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || e.Response.Status <= 0 {
		return nil
	}
	c := e.Response.Content
	var body []byte
	switch {
	case c.Text == nil && c.Size > 0:
		a.NoBody++
		return nil
	case c.Text != nil && c.Encoding == "base64":
		if body, err = base64.StdEncoding.DecodeString(*c.Text); err != nil {
			return notHAR("entry %s: content.text is not base64 (%v)", e.Request.URL, err)
		}
	case c.Text != nil:
		body = []byte(*c.Text)
	}
	ae := ArchiveEntry{Method: strings.ToUpper(cmp.Or(e.Request.Method, http.MethodGet)), Host: strings.ToLower(u.Hostname()),
		Path: cmp.Or(u.EscapedPath(), "/"), Query: u.RawQuery, URL: e.Request.URL, Status: int(e.Response.Status),
		Header: http.Header{}, Body: body, Page: e.PageRef == "" || e.PageRef == mainRef}
	ae.Type, _ = harType(e)
	for _, h := range e.Response.Headers {
		if n := strings.ToLower(h.Name); !droppedHeaders[n] && !strings.HasPrefix(n, ":") {
			ae.Header.Add(h.Name, h.Value)
		}
	}
	if ae.Header.Get("Content-Type") == "" && c.MimeType != "" && c.MimeType != "x-unknown" {
		ae.Header.Set("Content-Type", c.MimeType)
	}
	if !slices.Contains(a.Hosts, ae.Host) {
		if net.ParseIP(strings.Trim(ae.Host, "[]")) != nil || !isDNSName(ae.Host) || endsInNumber(ae.Host) {
			return notHAR("entry %s: host %q is not a DNS name (replay names every host on one certificate and maps it with Chromium's host resolver rules: IP addresses, and names whose last label is a number, which browsers read as IPv4 addresses, are not accepted)", e.Request.URL, ae.Host)
		}
		a.Hosts = append(a.Hosts, ae.Host)
	}
	k := ae.Method + " " + ae.Host + ae.Path
	a.byKey[k] = append(a.byKey[k], len(a.Entries))
	a.Entries = append(a.Entries, ae)
	return nil
}

// isDNSName reports whether h (lower case) is a DNS name: dot-separated labels of letters,
// digits and inner hyphens, 253 characters at most (what the server's certificate accepts).
func isDNSName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || strings.Trim(l, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
			return false
		}
	}
	return true
}

// endsInNumber reports whether a browser reads host h as an IPv4 address (or refuses it as a
// malformed one): the WHATWG URL Standard's "ends in a number checker" (section 3.5, host
// parsing), true when h's last label (a trailing dot ignored) is all decimal digits or an IPv4
// number: 0x or 0X and hex digits, or a leading 0 and octal digits. So "127.1", "2130706433",
// "0x7f000001" and "a.1" are numbers to a browser, never DNS names.
func endsInNumber(h string) bool {
	labels := strings.Split(h, ".")
	if labels[len(labels)-1] == "" {
		if len(labels) == 1 {
			return false
		}
		labels = labels[:len(labels)-1]
	}
	last := labels[len(labels)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	return isIPv4Number(last)
}

// isIPv4Number reports whether the WHATWG URL Standard's IPv4 number parser accepts s: a
// decimal number, 0x/0X and hex digits (possibly none), or a leading 0 and octal digits.
func isIPv4Number(s string) bool {
	if s == "" {
		return false
	}
	digits := "0123456789"
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, digits = s[2:], "0123456789abcdefABCDEF"
	case len(s) >= 2 && s[0] == '0':
		s, digits = s[1:], "01234567"
	}
	return strings.Trim(s, digits) == ""
}

// Match returns the entry that answers a request, and how it matched. host is compared
// without its port and case; path is the escaped URL path; query the raw query (without "?").
// The rules, in order:
//
//  1. MatchExact: an entry with the same method, host and path whose query has the same
//     name=value parameters (in any order).
//  2. MatchQuery: among the entries with the same method, host and path, the one sharing the
//     most name=value parameters with the request; the first recorded on a tie.
//  3. MatchMiss: none (nil). A method other than the recorded one is a miss, except HEAD,
//     which is answered from a GET entry.
//
// Of several entries for the same request the first recorded answers.
func (a *Archive) Match(method, host, path, query string) (*ArchiveEntry, MatchKind) {
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.Contains(h, "]") {
		host = h
	}
	method, host = strings.ToUpper(method), strings.ToLower(host)
	idx := a.byKey[method+" "+host+path]
	if len(idx) == 0 && method == http.MethodHead {
		idx = a.byKey[http.MethodGet+" "+host+path]
	}
	if len(idx) == 0 {
		return nil, MatchMiss
	}
	want := queryPairs(query)
	best, bestShared := -1, -1
	for _, i := range idx {
		got := queryPairs(a.Entries[i].Query)
		if slices.Equal(got, want) {
			return &a.Entries[i], MatchExact
		}
		if n := shared(got, want); n > bestShared {
			best, bestShared = i, n
		}
	}
	return &a.Entries[best], MatchQuery
}

// queryPairs returns a query's name=value pairs, sorted ("b=2&a=1" gives [a=1 b=2]).
func queryPairs(q string) []string {
	if q == "" {
		return nil
	}
	var out []string
	for _, p := range strings.Split(q, "&") {
		if p != "" {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// shared counts the pairs of sorted a that are in sorted b.
func shared(a, b []string) int {
	n := 0
	for _, p := range a {
		if _, ok := slices.BinarySearch(b, p); ok {
			n++
		}
	}
	return n
}

// Manifest returns the manifest a replayed load is verified against: Index is DocPath, and
// every GET entry of the main document's page with status 200 besides the main document is an
// object (the first entry of each host and path), with its body's size and SHA-256, its Type
// and its Origin (its host; "" for DocHost). Spec is "har:" + File.
func (a *Archive) Manifest() *Manifest {
	m := &Manifest{Spec: ReplayPrefix + a.File, Items: ReplayPrefix + a.Digest[:12], Index: a.DocPath}
	seen := map[string]bool{}
	for _, e := range a.Entries {
		k := e.Host + e.Path
		if !e.Page || e.Method != http.MethodGet || e.Status != http.StatusOK || e.URL == a.Document || seen[k] {
			continue
		}
		seen[k] = true
		sum := sha256.Sum256(e.Body)
		o := Object{Path: e.Path, Size: int64(len(e.Body)), SHA256: hex.EncodeToString(sum[:]), Type: e.Type}
		if e.Host != a.DocHost {
			o.Origin = e.Host
		}
		m.Objects = append(m.Objects, o)
		m.TotalBytes += o.Size
	}
	return m
}

// ReplaySpec returns a page spec standing for archive a in cost and memory estimates: the shape
// FromHAR derived when there is one, else one image of the archive's total body bytes.
func (a *Archive) ReplaySpec() Spec {
	if a.Shape != nil {
		if s := a.Shape.PageSpec(); len(s.Items) > 0 {
			return s
		}
	}
	total := int64(0)
	for _, e := range a.Entries {
		total += int64(len(e.Body))
	}
	return Spec{Items: []Item{{Count: 1, Size: min(max(total, TypeImage.MinSize()), MaxObjectSize)}}}
}
