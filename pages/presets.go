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
// "same total bytes, more objects" series ("same1MB-1x1MB" ... "same1MB-200x5KB"). The slice is
// a fresh copy in listing order.
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
	return out
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
