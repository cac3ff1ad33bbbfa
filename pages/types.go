package pages

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// ObjectType is the kind of a page object: what it is, where the page places it and how the
// browser comes to fetch it. The zero value "" is an image (TypeImage).
type ObjectType string

// Object types of the page SPEC grammar (":TYPE" of an item).
const (
	// TypeImage is a decodable baseline JPEG in an <img> of the body (the default: an item
	// without ":TYPE" is an image, as it always was). ParseSpec stores it as "".
	TypeImage ObjectType = "img"
	// TypeCSS is a render-blocking stylesheet, <link rel="stylesheet"> in the head.
	TypeCSS ObjectType = "css"
	// TypeJS is a parser-blocking classic script, <script src> in the head.
	TypeJS ObjectType = "js"
	// TypeJSBody is a parser-blocking classic script, <script src> at the end of the body.
	TypeJSBody ObjectType = "js-body"
	// TypeJSAsync is an async script (<script async src> in the head).
	TypeJSAsync ObjectType = "js-async"
	// TypeJSDefer is a deferred script (<script defer src> in the head).
	TypeJSDefer ObjectType = "js-defer"
	// TypeFont is a TrueType font (font/ttf) of an @font-face rule of the page's inline style,
	// used by a line of visible text so that the browser fetches it.
	TypeFont ObjectType = "font"
	// TypeFetch is a JSON document the page's loader script fetches with fetch() as soon as it
	// runs (at the end of the body): dependency depth 1.
	TypeFetch ObjectType = "fetch"
	// TypeFetchChain is one link of a chain of JSON documents: the loader fetches the item's first
	// object, and each object names the next ("next"), which is fetched when it has arrived, so an
	// item of COUNT objects is a dependency chain of depth COUNT.
	TypeFetchChain ObjectType = "fetch-chain"
	// TypeIframe is an HTML document in an <iframe> of the body. It may hold objects of its own
	// (Item.Frame, FrameTypes), on its origin; what an iframe loads is in its own Resource
	// Timing, not the page's, so its script posts those entries to the page (FrameResourcesVar).
	TypeIframe ObjectType = "iframe"
)

// ObjectTypes lists every object type in the order the grammar documents them.
var ObjectTypes = []ObjectType{TypeImage, TypeCSS, TypeJS, TypeJSBody, TypeJSAsync, TypeJSDefer,
	TypeFont, TypeFetch, TypeFetchChain, TypeIframe}

// FrameTypes are the types of the objects an iframe may hold: what its document references
// directly, so that its own Resource Timing (which its script posts to the page) sees them all.
var FrameTypes = []ObjectType{TypeImage, TypeCSS, TypeJS, TypeJSBody, TypeJSAsync, TypeJSDefer}

// canonical returns t with "" read as TypeImage.
func (t ObjectType) canonical() ObjectType {
	return cmp.Or(t, TypeImage)
}

// frameTypeNames lists FrameTypes for errors: "img, css, js, ...".
func frameTypeNames() string {
	names := make([]string, len(FrameTypes))
	for i, t := range FrameTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// Room an iframe needs for the objects it holds, in bytes: its script that posts its Resource
// Timing to the page, and the markup of each object (the longest element on the longest path).
const (
	frameScriptSize = 640
	frameObjectSize = 96
)

// frameMinSize is the smallest iframe that holds the objects of items, in bytes.
func frameMinSize(items []Item) int64 {
	return minDocSize + frameScriptSize + frameObjectSize*int64(Spec{Items: items}.Objects())
}

// typeInfo is what the generator and server need to know about one object type.
type typeInfo struct {
	dir, ext    string // URL path /DIR/NNNN.EXT
	contentType string // the Content-Type it is served with
	minSize     int64  // the smallest object of the type the generator makes, in bytes
}

// Smallest objects per type, in bytes: each holds its fixed text (naming its own path and, for a
// fetch chain, the absolute URL of the next object on the longest origin host) with room to spare.
const (
	minTextSize  = 128 // css, scripts
	minDocSize   = 256 // iframe documents
	minFetchSize = 256 // JSON with a "next" URL
)

var typeInfos = map[ObjectType]typeInfo{
	TypeImage:      {"img", "jpg", "image/jpeg", MinObjectSize},
	TypeCSS:        {"css", "css", "text/css; charset=utf-8", minTextSize},
	TypeJS:         {"js", "js", "text/javascript; charset=utf-8", minTextSize},
	TypeJSBody:     {"js", "js", "text/javascript; charset=utf-8", minTextSize},
	TypeJSAsync:    {"js", "js", "text/javascript; charset=utf-8", minTextSize},
	TypeJSDefer:    {"js", "js", "text/javascript; charset=utf-8", minTextSize},
	TypeFont:       {"font", "ttf", "font/ttf", MinFontSize},
	TypeFetch:      {"fetch", "json", "application/json", minFetchSize},
	TypeFetchChain: {"fetch", "json", "application/json", minFetchSize},
	TypeIframe:     {"iframe", "html", "text/html; charset=utf-8", minDocSize},
}

// info returns t's facts; "" is TypeImage.
func (t ObjectType) info() typeInfo {
	if t == "" {
		return typeInfos[TypeImage]
	}
	return typeInfos[t]
}

// ContentType returns the Content-Type an object of type t is served with, such as
// "text/css; charset=utf-8" or "image/jpeg"; "" for an unknown type.
func (t ObjectType) ContentType() string { return t.info().contentType }

// MinSize returns the smallest object of type t the generator makes, in bytes (MinObjectSize
// for images); 0 for an unknown type.
func (t ObjectType) MinSize() int64 { return t.info().minSize }

// parseType reads a TYPE of the grammar; "img" gives "".
func parseType(s string) (ObjectType, bool) {
	if s == string(TypeImage) {
		return "", true
	}
	_, ok := typeInfos[ObjectType(s)]
	return ObjectType(s), ok && s != ""
}

// typeNames lists the accepted TYPE names for errors: "img, css, js, ...".
func typeNames() string {
	names := make([]string, len(ObjectTypes))
	for i, t := range ObjectTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// OriginDomain is the test domain under which objects on other origins are served: the
// servers' and browsers' default host (server.DefaultHost, browser.DefaultHost) is plt.test.
const OriginDomain = "plt.test"

// MaxOriginLabel is the longest ORIGIN label of the grammar, in characters.
const MaxOriginLabel = 16

// validOrigin reports whether s is an ORIGIN label: 1..MaxOriginLabel lower-case letters,
// digits or '-', starting with a letter and not ending with '-'.
func validOrigin(s string) bool {
	if s == "" || len(s) > MaxOriginLabel || s[0] < 'a' || s[0] > 'z' || s[len(s)-1] == '-' {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// PageID returns the page's identifier in origin hostnames: "p" and the first 8 hex digits of
// the SHA-256 of its canonical items and seed, so that two different pages served by one server
// never share an origin host (and two identical pages share identical objects).
func PageID(items string, seed int64) string {
	sum := sha256.Sum256([]byte("pltlab-origin-v1\x00" + items + "\x00" + strconv.FormatInt(seed, 10)))
	return "p" + hex.EncodeToString(sum[:4])
}

// OriginHost returns the hostname of origin label of page id (PageID): "LABEL.ID.plt.test",
// such as "o1.p1a2b3c4d.plt.test". Objects there are referenced as https://HOST/PATH, port 443:
// a browser maps the host to the server's address and port (browser.WithOriginHosts).
func OriginHost(label, id string) string { return label + "." + id + "." + OriginDomain }
