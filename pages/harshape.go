package pages

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// FromHAR derives a page spec with the shape of the page load a HAR (HTTP Archive 1.2)
// recorded, and lists what of it the page does not reproduce.
//
// The main document is the first document entry (Chrome's _resourceType "document", or an HTML
// MIME type) with a 2xx status; its host is the page's own origin, and every other host (host
// and port, in order of first appearance) becomes an ORIGIN label o1, o2, .... Every other
// entry of its page (pageref) with a 2xx status becomes one object, in entry order: its type from _resourceType when
// present (stylesheet: css, script: js, font: font, image: img, xhr and fetch: fetch, document:
// iframe), else from the MIME type; its size in bytes is response.bodySize (the bytes
// transferred), or response.content.size when bodySize is -1 or 0, clamped into the type's
// MinSize()..MaxObjectSize. Consecutive objects of one type, size and origin form one item.
// A fetch whose initiator (Chrome's _initiator: its url, or the first URL of its stack) is
// another fetch of the page is the next link of that fetch's chain: a linear chain of fetches
// of one size and origin becomes a fetch-chain item; the images, stylesheets and scripts an
// iframe requested on its own host are held by that iframe (ITEM(ITEMS), the iframe's size
// raised to the least that holds them); other dependencies are flattened (the
// objects are referenced by the page itself, depth 1) and reported with the depth lost. Objects
// beyond MaxObjects or MaxTotalBytes are left out.
//
// What is not reproduced is in NotReproduced: redirects (3xx), failed and blocked entries
// (status 0 or >= 400, or a network error), entries of no type of the grammar (media,
// websocket, ping, manifest, other, ...), non-HTTP URLs, clamped sizes, cookies, async and
// defer (unknown from a HAR: every script is parser-blocking in the head), what scripts do,
// iframe contents, compression, image formats and the main document itself.
//
// Errors: input that is not JSON, not one HAR object, over MaxHARBytes, has no entries, no
// document entry with a 2xx status, or no entry that becomes an object matches ErrNotHAR and
// is one line saying what is accepted; a failing reader gives its error wrapped.
func FromHAR(r io.Reader) (*HARShape, error) {
	data, err := readCapped(r, MaxHARBytes)
	if err != nil {
		return nil, err
	}
	h, err := ParseHAR(data)
	if err != nil {
		return nil, err
	}
	return h.Shape()
}

// Shape derives the page shape of the HAR (FromHAR's rules and errors).
func (h *HAR) Shape() (*HARShape, error) {
	entries := h.entries
	main, err := mainDocument(entries)
	if err != nil {
		return nil, err
	}
	d := newDeriver(entries, main)
	d.keep()
	if len(d.objects) == 0 {
		return nil, notHAR("no entry of the HAR besides the main document %s becomes an object (%d entries)", entries[main].Request.URL, len(entries))
	}
	return d.shape()
}

// deriver holds the state of one FromHAR.
type deriver struct {
	entries  []HAREntry
	main     int
	mainHost string
	byURL    map[string]int // URL -> the main document, or the index of its first entry
	labels   map[string]string
	hosts    []string // other hosts in order of first appearance
	objects  []harObject
	of       map[int]int // entry index -> index in objects
	counts   map[string]int
	unknown  map[string]int
	clamped  map[ObjectType]int
	sources  map[string]int
	depths   map[int]int
}

func newDeriver(entries []HAREntry, main int) *deriver {
	host, _ := harHost(entries[main].Request.URL)
	d := &deriver{entries: entries, main: main, mainHost: host, byURL: map[string]int{},
		labels: map[string]string{}, of: map[int]int{}, counts: map[string]int{},
		unknown: map[string]int{}, clamped: map[ObjectType]int{}, sources: map[string]int{},
		depths: map[int]int{}}
	d.byURL[entries[main].Request.URL] = main
	for i, e := range entries {
		if _, ok := d.byURL[e.Request.URL]; !ok {
			d.byURL[e.Request.URL] = i
		}
	}
	return d
}

// keep classifies every entry: kept as an object, or counted under what it was left out for.
func (d *deriver) keep() {
	var total int64
	for i := range d.entries {
		e := &d.entries[i]
		if hasCookies(e) {
			d.counts["cookies"]++
		}
		if i == d.main {
			continue
		}
		if ref := d.entries[d.main].PageRef; e.PageRef != ref {
			if e.PageRef == "" {
				d.counts["no pageref"]++
			} else {
				d.counts["other pages"]++
			}
			continue
		}
		host, ok := harHost(e.Request.URL)
		st := e.Response.Status
		switch {
		case !ok:
			d.counts["non-http"]++
			continue
		case st >= 300 && st < 400:
			d.counts["redirects"]++
			continue
		case st < 200 || st >= 400 || e.Error != "":
			d.counts["failed"]++
			continue
		}
		t, name := harType(e)
		if t == "" {
			d.unknown[name]++
			continue
		}
		size, source := harSize(e)
		if c := min(max(size, t.MinSize()), MaxObjectSize); c != size {
			d.clamped[t]++
			size = c
		}
		if len(d.objects)+1 > MaxObjects || total+size > MaxTotalBytes {
			d.counts["limits"]++
			continue
		}
		total += size
		d.sources[source]++
		d.notes(e, t)
		d.of[i] = len(d.objects)
		d.objects = append(d.objects, harObject{entry: i, typ: t, size: size, origin: d.label(host)})
	}
	for k := range d.objects {
		d.objects[k].depth = d.depth(d.objects[k].entry, 0)
	}
}

// notes counts what a kept entry of type t does not carry into the page.
func (d *deriver) notes(e *HAREntry, t ObjectType) {
	if compressed(e) {
		d.counts["compressed"]++
	}
	if t == TypeImage && mimeBase(e.Response.Content.MimeType) != "image/jpeg" {
		d.counts["image formats"]++
	}
}

// label returns host's ORIGIN label, giving the next one (o1, o2, ...) to a new host; "" for
// the main document's host.
func (d *deriver) label(host string) string {
	if host == d.mainHost {
		return ""
	}
	if l, ok := d.labels[host]; ok {
		return l
	}
	d.hosts = append(d.hosts, host)
	d.labels[host] = fmt.Sprintf("o%d", len(d.hosts))
	return d.labels[host]
}

// depth returns entry i's dependency depth in the HAR: 0 for the main document, 1 for an entry
// with no known initiator or one the main document issued, else its initiator's depth + 1.
// hops guards against initiator cycles.
func (d *deriver) depth(i, hops int) int {
	if i == d.main {
		return 0
	}
	if v, ok := d.depths[i]; ok {
		return v
	}
	v := 1
	if j, ok := d.initiator(i); ok && hops < len(d.entries) {
		v = d.depth(j, hops+1) + 1
	}
	d.depths[i] = v
	return v
}

// initiator returns the index of the entry that issued entry i, when the HAR names one that is
// not i itself.
func (d *deriver) initiator(i int) (int, bool) {
	j, ok := d.byURL[d.entries[i].Initiator.url()]
	return j, ok && j != i
}

// chains finds the fetch chains among the objects: for each object that starts a chain of two
// or more, the chain's length; links lists every object that is a chain's link after its
// first (they are written by their chain's item) with its 1-based place in the chain.
func (d *deriver) chains() (starts, links map[int]int) {
	parent := map[int]int{}
	children := map[int][]int{}
	for k, o := range d.objects {
		if o.typ != TypeFetch {
			continue
		}
		if j, ok := d.initiator(o.entry); ok {
			if p, ok := d.of[j]; ok && d.objects[p].typ == TypeFetch {
				parent[k] = p
				children[p] = append(children[p], k)
			}
		}
	}
	starts, links = map[int]int{}, map[int]int{}
	for k, o := range d.objects {
		if _, has := parent[k]; has || o.typ != TypeFetch {
			continue
		}
		n := 1
		for cur := k; len(children[cur]) == 1; n++ {
			next := children[cur][0]
			if c := d.objects[next]; c.size != o.size || c.origin != o.origin {
				break
			}
			links[next] = n + 1
			cur = next
		}
		if n > 1 {
			starts[k] = n
		}
	}
	return starts, links
}

// frames finds the objects iframes hold: an image, stylesheet or script (FrameTypes) on the
// host of the iframe document that the HAR shows requesting it. It returns, for each such
// object, the index of its iframe's object; the other objects iframes requested are counted
// under "iframe objects on the page".
func (d *deriver) frames() map[int]int {
	frameOf := map[int]int{}
	for k, o := range d.objects {
		j, ok := d.initiator(o.entry)
		p, kept := d.of[j]
		if !ok || !kept || d.objects[p].typ != TypeIframe {
			continue
		}
		if slices.Contains(FrameTypes, o.typ) && o.origin == d.objects[p].origin {
			frameOf[k] = p
			continue
		}
		d.counts["iframe objects on the page"]++
	}
	return frameOf
}

// items forms the spec's items from the objects in entry order, and returns how many objects
// lost dependency depth and the most any lost.
func (d *deriver) items() (items []Item, lost, most int) {
	starts, links := d.chains()
	frameOf := d.frames()
	held := map[int][]Item{} // iframe object -> the items it holds
	for k, o := range d.objects {
		made := 1
		if p, ok := links[k]; ok {
			made = p
		}
		if _, ok := frameOf[k]; ok {
			made = 2
		}
		if o.depth > made {
			lost++
			most = max(most, o.depth-made)
		}
		if p, ok := frameOf[k]; ok {
			held[p] = appendItem(held[p], Item{Count: 1, Size: o.size, Type: o.typ})
		}
	}
	for k, o := range d.objects {
		if _, ok := links[k]; ok {
			continue
		}
		if _, ok := frameOf[k]; ok {
			continue
		}
		it := Item{Count: 1, Size: o.size, Type: o.typ, Origin: o.origin, Frame: held[k]}
		if n, ok := starts[k]; ok {
			it.Count, it.Type = n, TypeFetchChain
		}
		if need := frameMinSize(it.Frame); len(it.Frame) > 0 && it.Size < need {
			d.clamped[TypeIframe]++
			it.Size = need
		}
		items = appendItem(items, it)
	}
	return items, lost, most
}

// appendItem appends it to items, or adds its one object to the last item when that has the
// same type, size and origin (never for fetch chains, whose COUNT is a depth, nor for iframes
// that hold objects).
func appendItem(items []Item, it Item) []Item {
	if it.Type == TypeImage {
		it.Type = ""
	}
	if last := len(items) - 1; last >= 0 && it.Type != TypeFetchChain && len(it.Frame) == 0 && len(items[last].Frame) == 0 &&
		items[last].Type == it.Type && items[last].Size == it.Size && items[last].Origin == it.Origin {
		items[last].Count++
		return items
	}
	return append(items, it)
}

// shape builds the HARShape: the spec (checked by ParseSpec), its counts and the gaps.
func (d *deriver) shape() (*HARShape, error) {
	items, lost, most := d.items()
	spec := Spec{Items: items}
	parsed, err := ParseSpec(spec.String())
	if err != nil {
		return nil, fmt.Errorf("derived page spec %s does not parse: %w", spec.String(), err)
	}
	h := &HARShape{Spec: spec.String(), Document: d.entries[d.main].Request.URL, Entries: len(d.entries),
		Objects: spec.Objects(), TotalBytes: spec.TotalBytes(), Types: map[string]int{},
		Origins: []HAROrigin{}, SizeSource: d.sources, spec: parsed}
	for _, host := range d.hosts {
		h.Origins = append(h.Origins, HAROrigin{Label: d.labels[host], Host: host})
	}
	for _, it := range items {
		h.Types[string(it.Type.canonical())] += it.Count
		for _, f := range it.Frame {
			h.Types[string(f.Type.canonical())] += it.Count * f.Count
		}
		if i := slices.IndexFunc(h.Origins, func(o HAROrigin) bool { return o.Label == it.Origin }); i >= 0 {
			h.Origins[i].Objects += it.objects()
			h.Origins[i].Bytes += it.bytes()
		}
	}
	h.NotReproduced = d.gaps(h, lost, most)
	return h, nil
}

// gaps lists what the page does not reproduce, in a fixed order; kinds with no entries are
// left out of the list.
func (d *deriver) gaps(h *HARShape, lost, most int) []HARGap {
	main := d.entries[d.main]
	mainSize, _ := harSize(&main)
	third := 0
	for _, it := range h.PageSpec().Items {
		if it.Type == TypeJS && it.Origin != "" {
			third += it.Count
		}
	}
	out := []HARGap{
		{"main document", 1, false, fmt.Sprintf("the page's index.html is pltlab's own (its size follows from the objects' markup), not the HAR's %d B document %s", mainSize, main.Request.URL)},
		{"redirects", d.counts["redirects"], true, "3xx entries: the page references each object at its final URL, with no redirect"},
		{"failed or blocked entries", d.counts["failed"], true, "status 0 or >= 400, or a network error: the page has no object for them"},
		{"non-HTTP entries", d.counts["non-http"], true, "URLs that are not http or https (data:, blob:, ...)"},
		{"entries of other pages", d.counts["other pages"], true, "entries whose pageref is not the main document's: the page is the first page load of the HAR"},
		{"entries without pageref", d.counts["no pageref"], true, "entries with no pageref while the main document has one: HAR 1.2 ties them to no page load (a service worker's or the browser's own requests), so the page has no object for them (replay, har:FILE, still answers them)"},
	}
	for _, name := range slices.Sorted(maps.Keys(d.unknown)) {
		out = append(out, HARGap{"entries of unknown type " + name, d.unknown[name], true,
			"no TYPE of the page grammar for it (media, websocket, ping, manifest, other, ... are left out)"})
	}
	out = append(out, HARGap{"over the page limits", d.counts["limits"], true,
		fmt.Sprintf("the page holds at most %d objects and %d bytes", MaxObjects, MaxTotalBytes)})
	for _, t := range ObjectTypes {
		reason := fmt.Sprintf("below the smallest %s object the generator makes (%d B) or above MaxObjectSize (50 MB): made that size", t, t.MinSize())
		if t == TypeIframe {
			reason += "; an iframe that holds objects is at least what their markup needs"
		}
		out = append(out, HARGap{"sizes clamped (" + string(t) + ")", d.clamped[t], false, reason})
	}
	out = append(out,
		HARGap{"dependency depth", lost, false, fmt.Sprintf("objects the HAR shows requested by a script, stylesheet or fetch of the page (depth lost: at most %d) are referenced by the page itself (depth 1; fetch-chain links: their place in the chain); the page's fetches still start after its parser-blocking scripts ran", most)},
		HARGap{"async/defer", h.Types[string(TypeJS)], false, "a HAR does not say whether a script was async or deferred, nor where it stood: every script is a parser-blocking <script src> in the head (js)"},
		HARGap{"script behaviour", h.Types[string(TypeJS)], false, fmt.Sprintf("every script only records that it ran; what the HAR's scripts did is not run (third-party, on other origins: %d); the requests they made are objects of the page", third)},
		HARGap{"iframe contents", h.Types[string(TypeIframe)], false, fmt.Sprintf("each iframe is an HTML document of its size that holds the images, stylesheets and scripts on its host the HAR shows it requesting (as ITEM(ITEMS); its size raised to what their markup needs is counted under sizes clamped); the %d other objects iframes requested (fetches, fonts, other hosts) are the page's own, and what the iframes' documents did is not reproduced", d.counts["iframe objects on the page"])},
		HARGap{"cookies", d.counts["cookies"], false, "entries that sent or set cookies: the page sets none"},
		HARGap{"compression", d.counts["compressed"], false, "responses with a Content-Encoding (gzip, br, ...): served uncompressed, at the size taken (bodySize: the compressed bytes transferred)"},
		HARGap{"image formats", d.counts["image formats"], false, "images that were not JPEG: each is a baseline JPEG of the same size"},
	)
	return slices.DeleteFunc(out, func(g HARGap) bool { return g.Count == 0 })
}

// Report writes the gaps to w, one per line after a heading that names the HAR file har; with
// no gaps it says so.
func (h *HARShape) Report(w io.Writer, har string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "page shape of %s: %s (%d objects, %s)\n", har, h.Spec, h.Objects, HumanBytes(h.TotalBytes))
	if len(h.NotReproduced) == 0 {
		b.WriteString("not reproduced: nothing\n")
	} else {
		b.WriteString("not reproduced:\n")
	}
	for _, g := range h.NotReproduced {
		b.WriteString("  - " + g.String() + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
