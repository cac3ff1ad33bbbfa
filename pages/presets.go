package pages

import (
	"fmt"
	"strconv"
)

// Preset is a named page spec.
type Preset struct {
	// Name is what ParseSpec accepts in place of items, such as "carlucci2015".
	Name string
	// Spec is the preset's items, such as "30x10KB".
	Spec string
	// Doc says where the composition comes from, in one or more sentences.
	Doc string
}

// carlucci2015Doc documents the composition chosen for the carlucci2015 preset.
const carlucci2015Doc = `Image-only page for reproducing Carlucci, De Cicco, Mascolo, "HTTP over UDP: an ` +
	`experimental investigation of QUIC", ACM SAC 2015 (3 Mbit/s, 50 ms RTT, 1 BDP buffer, no loss; ` +
	`PLT HTTP/1.1 2.03 s, SPDY 1.45 s, QUIC 1.14 s). The paper does not publish the page's ` +
	`composition; 30 JPEGs of 10 KB (300 KB) were chosen because: (1) ideal serialization of ` +
	`300 KB at 3 Mbit/s takes 0.80 s, and adding ~2-4 RTTs of handshake and request (0.10-0.20 s) ` +
	`plus header overhead (~4%) gives a floor of ~1.0 s, just under QUIC's 1.14 s; 400 KB would ` +
	`already need 1.07 s of serialization alone plus round trips, above 1.14 s, and 200 KB would ` +
	`leave SPDY 0.7 s above its floor, so the total is a few hundred KB, ~300 KB; (2) HTTP/1.1 ` +
	`used six parallel connections and was 0.58 s (about 12 RTTs) slower than SPDY, which needs ` +
	`several request rounds per connection: 30 objects give five per connection, where 10 x ` +
	`30 KB (our prototype) showed a much smaller HTTP/1.1 penalty.`

// kakhkiSizes and kakhkiCounts are the object sizes and counts of the page grid of Kakhki et al.,
// "Taking a Long Look at QUIC", IMC 2017 (KB read as 1000 bytes).
var (
	kakhkiSizes  = []int64{5_000, 10_000, 100_000, 200_000, 500_000, 1_000_000, 10_000_000}
	kakhkiCounts = []int{1, 2, 5, 10, 100, 200}
	// sameBytesItems is the "same total bytes, more objects" series: 1 MB split ever finer.
	sameBytesItems = []Item{{Count: 1, Size: 1_000_000}, {Count: 2, Size: 500_000}, {Count: 5, Size: 200_000}, {Count: 10, Size: 100_000}, {Count: 100, Size: 10_000}, {Count: 200, Size: 5_000}}
)

// Presets returns every named page spec: carlucci2015, the Kakhki et al. IMC 2017 grid
// ("kakhki-COUNTxSIZE" for counts 1, 2, 5, 10, 100, 200 and sizes 5KB, 10KB, 100KB, 200KB,
// 500KB, 1MB, 10MB; kakhki-200x10MB is omitted because 2 GB exceeds MaxTotalBytes) and the
// "same total bytes, more objects" series ("same1MB-1x1MB" ... "same1MB-200x5KB"), and the
// typical pages of the Web Almanac 2024 ("almanac2024-desktop", "almanac2024-mobile"). The
// slice is a fresh copy in listing order.
func Presets() []Preset {
	out := []Preset{{Name: "carlucci2015", Spec: "30x10KB", Doc: carlucci2015Doc}}
	for _, size := range kakhkiSizes {
		for _, count := range kakhkiCounts {
			it := Item{Count: count, Size: size}
			if int64(count)*size > MaxTotalBytes {
				continue
			}
			spec := Spec{Items: []Item{it}}.String()
			out = append(out, Preset{Name: "kakhki-" + spec, Spec: spec,
				Doc: fmt.Sprintf("Kakhki et al., \"Taking a Long Look at QUIC\", IMC 2017 page grid: %s.", describe(it))})
		}
	}
	for _, it := range sameBytesItems {
		spec := Spec{Items: []Item{it}}.String()
		out = append(out, Preset{Name: "same1MB-" + spec, Spec: spec,
			Doc: fmt.Sprintf("Same total bytes (1 MB), more objects series: %s.", describe(it))})
	}
	for _, a := range almanacPages {
		out = append(out, a.preset())
	}
	return out
}

// almanacPage is a typical page built from the HTTP Archive Web Almanac 2024, "Page Weight"
// chapter (D. Smart, J. Indigo; almanac.httparchive.org/en/2024/page-weight): the median number
// of requests per content type ("Median number of requests by content type and device type")
// and the median home page's bytes per content type ("Median homepage weight by content and
// device type"; KB = 1024 bytes, as the chapter's bytes_per_type.sql divides by 1024; transfer
// sizes). Each type's bytes are split evenly over its requests.
type almanacPage struct {
	client string
	// requests and kib per content type: HTML, CSS, font, JavaScript, image.
	html, css, font, js, img                int
	htmlKiB, cssKiB, fontKiB, jsKiB, imgKiB int64
	totalKiB, totalRequests                 int
}

// almanacPages are the desktop and mobile medians of the Web Almanac 2024 (figures as published).
var almanacPages = []almanacPage{
	{client: "desktop", html: 2, css: 8, font: 4, js: 24, img: 18, htmlKiB: 18, cssKiB: 78, fontKiB: 131, jsKiB: 613, imgKiB: 1054, totalKiB: 2652, totalRequests: 71},
	{client: "mobile", html: 2, css: 8, font: 3, js: 22, img: 16, htmlKiB: 18, cssKiB: 73, fontKiB: 111, jsKiB: 558, imgKiB: 900, totalKiB: 2311, totalRequests: 66},
}

// each is kib KiB split over n objects, in bytes (rounded to the nearest byte).
func each(kib int64, n int) int64 { return (kib*1024 + int64(n)/2) / int64(n) }

// preset is the page's spec: the main document plus one iframe for the two HTML requests (the
// iframe gets half the HTML bytes: the generated document's own size is what its markup needs),
// the stylesheets in the head, the fonts from CSS, half the scripts parser-blocking in the head
// and half async (the chapter gives no placement: our choice, stated), and the images.
func (a almanacPage) preset() Preset {
	half := a.js / 2
	items := []Item{
		{Count: a.css, Size: each(a.cssKiB, a.css), Type: TypeCSS},
		{Count: a.font, Size: each(a.fontKiB, a.font), Type: TypeFont},
		{Count: half, Size: each(a.jsKiB, a.js), Type: TypeJS},
		{Count: a.js - half, Size: each(a.jsKiB, a.js), Type: TypeJSAsync},
		{Count: a.html - 1, Size: a.htmlKiB * 1024 / int64(a.html), Type: TypeIframe},
		{Count: a.img, Size: each(a.imgKiB, a.img)},
	}
	sp := Spec{Items: items}
	doc := fmt.Sprintf("A typical %s page from the HTTP Archive Web Almanac 2024, Page Weight chapter "+
		"(almanac.httparchive.org/en/2024/page-weight): the median %s page's requests per content type (HTML %d, CSS %d, fonts %d, JavaScript %d, images %d) "+
		"and the median %s home page's bytes per type (HTML %d, CSS %d, fonts %d, JavaScript %d, images %d KiB: the chapter's KB are 1024 bytes; transfer sizes), "+
		"each type's bytes split evenly over its requests: the main document and one iframe of %s, %s, %s, %d parser-blocking and %d async scripts of %s "+
		"(the chapter gives no placement: half and half is pltlab's choice), %s. "+
		"Not modelled: the requests and bytes of other types (video, JSON, beacons...): the median page's %d requests and %d KiB are more than the sum of the per-type medians "+
		"(%d requests, %d KiB; a median of sums is not a sum of medians); third-party origins (92 %% of pages have one, the chapter says; add @ORIGIN to items to model them); compression.",
		a.client, a.client, a.html, a.css, a.font, a.js, a.img, a.client, a.htmlKiB, a.cssKiB, a.fontKiB, a.jsKiB, a.imgKiB,
		HumanBytes(items[4].Size), describeTyped(items[0], "stylesheets"), describeTyped(items[1], "fonts"), half, a.js-half, HumanBytes(items[2].Size),
		describeTyped(items[5], "images"), a.totalRequests, a.totalKiB,
		a.html+a.css+a.font+a.js+a.img, a.htmlKiB+a.cssKiB+a.fontKiB+a.jsKiB+a.imgKiB)
	return Preset{Name: "almanac2024-" + a.client, Spec: sp.String(), Doc: doc}
}

// describeTyped says "8 stylesheets of 9.98 KB".
func describeTyped(it Item, noun string) string {
	return fmt.Sprintf("%d %s of %s", it.Count, noun, HumanBytes(it.Size))
}

// describe says "N objects of SIZE" for an item.
func describe(it Item) string {
	noun := "objects"
	if it.Count == 1 {
		noun = "object"
	}
	return strconv.Itoa(it.Count) + " " + noun + " of " + HumanBytes(it.Size)
}

// LookupPreset returns the preset called name (exact, case-sensitive match).
func LookupPreset(name string) (Preset, bool) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}
