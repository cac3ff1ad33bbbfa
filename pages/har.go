package pages

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"
)

// ErrNotHAR marks input FromHAR cannot read as a page: not JSON, not a HAR (no "log" with
// "entries"), no entries, or no document entry with a 2xx status.
var ErrNotHAR = errors.New("not a HAR of a page load")

// acceptedHAR says what FromHAR accepts, for its errors.
const acceptedHAR = "accepted: a HAR 1.2 file of one page load (JSON {\"log\":{\"entries\":[...]}} with a document entry of status 2xx), as Chrome DevTools exports or pltlab run --artifacts writes"

// HARShape is the page shape FromHAR derived from a HAR: the spec, what it holds, and what of
// the HAR it does not reproduce. It is written as JSON beside a page generated from a HAR.
type HARShape struct {
	// Spec is the derived page SPEC in canonical form (Spec.String()); ParseSpec reads it back.
	Spec string `json:"spec"`
	// Document is the URL of the main document (the first document entry with a 2xx status).
	Document string `json:"document"`
	// Entries is the number of entries in the HAR, the main document's included.
	Entries int `json:"entries"`
	// Objects is the number of objects of the derived page (Spec's objects).
	Objects int `json:"objects"`
	// TotalBytes is the sum of the derived page's object sizes in bytes (after clamping).
	TotalBytes int64 `json:"total_bytes"`
	// Types counts the derived page's objects per type (TYPE of the grammar: img, css, js,
	// font, fetch, fetch-chain, iframe).
	Types map[string]int `json:"types"`
	// Origins are the hosts other than the main document's, in order of first appearance, with
	// their labels (o1, o2, ...) and what of the page they serve.
	Origins []HAROrigin `json:"origins"`
	// SizeSource counts the objects whose size was taken from response.bodySize ("bodySize":
	// the bytes transferred) and from response.content.size ("content.size": when bodySize is
	// -1 or 0).
	SizeSource map[string]int `json:"size_source"`
	// NotReproduced lists what of the HAR the page does not reproduce, each with its count.
	NotReproduced []HARGap `json:"not_reproduced"`

	spec Spec
}

// PageSpec returns the derived spec (what Spec names in canonical form). A HARShape decoded
// from JSON has it parsed from Spec; a Spec that does not parse gives an empty Spec, which
// GenerateContext refuses.
func (h *HARShape) PageSpec() Spec {
	if len(h.spec.Items) == 0 && h.Spec != "" {
		s, _ := ParseSpec(h.Spec)
		return s
	}
	return h.spec
}

// HAROrigin is one host of a HAR other than the main document's, as an ORIGIN of the spec.
type HAROrigin struct {
	// Label is the ORIGIN label of the spec: o1, o2, ... in order of first appearance.
	Label string `json:"label"`
	// Host is the HAR's host (host[:port], lower case, without the scheme's default port).
	Host string `json:"host"`
	// Objects is the number of the page's objects on the origin.
	Objects int `json:"objects"`
	// Bytes is the sum of their sizes in bytes.
	Bytes int64 `json:"bytes"`
}

// HARGap is one kind of thing a page derived from a HAR does not reproduce.
type HARGap struct {
	// What names it, such as "redirects" or "async/defer".
	What string `json:"what"`
	// Count is how many entries (or objects) it concerns.
	Count int `json:"count"`
	// LeftOut is true when those entries are not in the page at all; false when they are, but
	// not as they were (a size clamped, a depth flattened, a behaviour not copied).
	LeftOut bool `json:"left_out"`
	// Reason says what happened to them and why.
	Reason string `json:"reason"`
}

// String returns the gap as one line, such as "redirects: 2 (left out): 3xx entries ...".
func (g HARGap) String() string {
	state := "kept, approximated"
	if g.LeftOut {
		state = "left out"
	}
	return fmt.Sprintf("%s: %d (%s): %s", g.What, g.Count, state, g.Reason)
}

// harObject is one entry kept as an object of the page, before items are formed.
type harObject struct {
	entry  int // index in the HAR's entries
	typ    ObjectType
	size   int64
	origin string // label; "" = the page's own
	depth  int    // the HAR's dependency depth (main document = 0)
}

// harError is a one-line error about input that is not a HAR FromHAR can read; it matches
// ErrNotHAR.
type harError struct{ msg string }

func (e *harError) Error() string        { return e.msg + "; " + acceptedHAR }
func (e *harError) Is(target error) bool { return target == ErrNotHAR }

func notHAR(format string, args ...any) error {
	return &harError{msg: fmt.Sprintf(format, args...)}
}

// MaxHARBytes is the largest HAR file pltlab reads (1 GiB): a HAR is read whole into memory,
// so a larger file (or an endless one) is refused before it is read.
const MaxHARBytes = 1 << 30

// HAR is a HAR file read and parsed once: its path, the SHA-256 of its bytes, and its entries,
// from which Shape derives the page shape and Archive indexes the replay.
type HAR struct {
	// File is the path as given; Digest is the lowercase hex SHA-256 of the file's bytes.
	File, Digest string

	entries []HAREntry
}

// ReadHAR reads and parses the HAR file name. Errors: the file cannot be opened; it is not a
// regular file (a FIFO, a device such as /dev/zero, a directory) or is larger than MaxHARBytes,
// both checked before a byte is read (both match ErrNotHAR); its content is not a HAR (see
// ParseHAR).
func ReadHAR(name string) (*HAR, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("read HAR: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, notHAR("%s is not a regular file but %s", name, fileKind(st.Mode()))
	}
	if st.Size() > MaxHARBytes {
		return nil, notHAR("%s is %d bytes, over the limit of %d bytes", name, st.Size(), MaxHARBytes)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("read HAR: %w", err)
	}
	defer f.Close()
	data, err := readCapped(f, MaxHARBytes) // the file may have grown since Stat
	if err != nil {
		return nil, err
	}
	h, err := ParseHAR(data)
	if err != nil {
		return nil, err
	}
	h.File = name
	return h, nil
}

// fileKind names the kind of a file that is not regular: "a directory", "a named pipe (FIFO)".
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file (" + m.Type().String() + ")"
}

// readCapped reads r whole, refusing more than limit bytes (ErrNotHAR).
func readCapped(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read HAR: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, notHAR("over the limit of %d bytes", limit)
	}
	return data, nil
}

// utf8BOM is the UTF-8 byte order mark (U+FEFF) some editors put at the start of a file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// ParseHAR parses the bytes of a HAR file (File is left empty). A leading UTF-8 byte order
// mark is skipped. Errors (ErrNotHAR): not JSON, JSON other than one object (anything after the
// HAR's object, such as a second HAR, is refused), no "log" object, no entries.
func ParseHAR(data []byte) (*HAR, error) {
	sum := sha256.Sum256(data)
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, utf8BOM)))
	var f HARFile
	if err := dec.Decode(&f); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, notHAR("not JSON of a HAR (%v)", err)
		}
		return nil, fmt.Errorf("read HAR: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, notHAR("more after the HAR's JSON object at byte %d: a HAR file holds one object", dec.InputOffset())
	}
	if f.Log == nil {
		return nil, notHAR(`no "log" object: not a HAR`)
	}
	if len(f.Log.Entries) == 0 {
		return nil, notHAR(`no entries in "log.entries"`)
	}
	return &HAR{Digest: hex.EncodeToString(sum[:]), entries: f.Log.Entries}, nil
}

// mainDocument returns the index of the HAR's main document: its first document entry with a
// host and a 2xx status; the error (ErrNotHAR) says there is none.
func mainDocument(entries []HAREntry) (int, error) {
	main := slices.IndexFunc(entries, func(e HAREntry) bool {
		_, ok := harHost(e.Request.URL)
		return ok && isDocument(&e) && e.Response.Status >= 200 && e.Response.Status < 300
	})
	if main < 0 {
		return 0, notHAR("no document entry with a 2xx status among its %d entries", len(entries))
	}
	return main, nil
}

// harHost returns u's host for origins: lower case, without the scheme's default port; ok is
// false for a URL that is not http or https (data:, blob:, ...).
func harHost(raw string) (host string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	host = strings.ToLower(u.Host)
	if u.Scheme == "https" {
		host = strings.TrimSuffix(host, ":443")
	} else {
		host = strings.TrimSuffix(host, ":80")
	}
	return host, true
}

// mimeBase returns a MIME type without parameters, in lower case: "text/css; charset=utf-8"
// gives "text/css".
func mimeBase(m string) string {
	m, _, _ = strings.Cut(m, ";")
	return strings.ToLower(strings.TrimSpace(m))
}

// isDocument reports whether e is an HTML document: Chrome's resource type "document", or,
// without a resource type, an HTML MIME type.
func isDocument(e *HAREntry) bool {
	rt := strings.ToLower(e.ResourceType)
	m := mimeBase(e.Response.Content.MimeType)
	return rt == "document" || rt == "" && (m == "text/html" || m == "application/xhtml+xml")
}

// harType maps an entry to an object type: by Chrome's resource type when the entry has one
// (stylesheet, script, font, image, xhr, fetch, document), else by its MIME type. An entry
// with no type of the grammar gives "" and the name it is counted under ("media",
// "websocket", "mime application/octet-stream", ...).
func harType(e *HAREntry) (ObjectType, string) {
	switch rt := strings.ToLower(e.ResourceType); rt {
	case "stylesheet":
		return TypeCSS, ""
	case "script":
		return TypeJS, ""
	case "font":
		return TypeFont, ""
	case "image":
		return TypeImage, ""
	case "xhr", "fetch":
		return TypeFetch, ""
	case "document":
		return TypeIframe, ""
	case "":
	default:
		return "", rt
	}
	m := mimeBase(e.Response.Content.MimeType)
	switch {
	case m == "text/css":
		return TypeCSS, ""
	case strings.Contains(m, "javascript") || strings.Contains(m, "ecmascript"):
		return TypeJS, ""
	case strings.HasPrefix(m, "font/") || strings.HasPrefix(m, "application/font-") ||
		strings.HasPrefix(m, "application/x-font") || m == "application/vnd.ms-fontobject":
		return TypeFont, ""
	case strings.HasPrefix(m, "image/"):
		return TypeImage, ""
	case m == "application/json" || strings.HasSuffix(m, "+json"):
		return TypeFetch, ""
	case m == "text/html" || m == "application/xhtml+xml":
		return TypeIframe, ""
	case m == "":
		return "", "no type"
	}
	return "", "mime " + m
}

// harSize returns an entry's size in bytes and where it came from: response.bodySize (the
// body bytes transferred) when positive, else response.content.size (the decoded body).
func harSize(e *HAREntry) (int64, string) {
	if e.Response.BodySize > 0 {
		return e.Response.BodySize, "bodySize"
	}
	return max(e.Response.Content.Size, 0), "content.size"
}

// hasCookies reports whether e sent or set a cookie (HAR cookies or Cookie/Set-Cookie headers).
func hasCookies(e *HAREntry) bool {
	if len(e.Request.Cookies) > 0 || len(e.Response.Cookies) > 0 {
		return true
	}
	return hasHeader(e.Request.Headers, "cookie", nil) || hasHeader(e.Response.Headers, "set-cookie", nil)
}

// compressed reports whether e's response had a Content-Encoding other than identity.
func compressed(e *HAREntry) bool {
	return hasHeader(e.Response.Headers, "content-encoding", func(v string) bool { return !strings.EqualFold(strings.TrimSpace(v), "identity") })
}

// hasHeader reports whether hs has a header named name (any case) whose value passes ok (nil:
// any value).
func hasHeader(hs []HARNameValue, name string, ok func(string) bool) bool {
	return slices.ContainsFunc(hs, func(h HARNameValue) bool {
		return strings.EqualFold(h.Name, name) && (ok == nil || ok(h.Value))
	})
}
