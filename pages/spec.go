package pages

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Limits of the page SPEC grammar. Sizes use decimal units (1 KB = 1000 B, 1 MB = 10^6 B, 1 GB = 10^9 B).
const (
	// MaxObjects is the largest number of objects a page may have.
	MaxObjects = 10000
	// MaxTotalBytes is the largest sum of object sizes of a page, in bytes (1 GB).
	MaxTotalBytes int64 = 1_000_000_000
	// MaxObjectSize is the largest size of one object, in bytes (50 MB).
	MaxObjectSize int64 = 50_000_000
)

// Item is one [COUNTx]SIZE[:TYPE][@ORIGIN] element of a page spec: Count objects of Size bytes
// each, of one type, on one origin.
type Item struct {
	// Count is the number of objects, 1..MaxObjects (for TypeFetchChain: the chain's depth).
	Count int
	// Size is each object's exact size in bytes, Type.MinSize()..MaxObjectSize.
	Size int64
	// Type is the objects' type; "" is an image (ParseSpec gives "" for "img" too).
	Type ObjectType
	// Origin is the ORIGIN label of the host that serves the objects (OriginHost), such as
	// "o1"; "" is the page's own origin.
	Origin string
	// Frame is what each iframe of a TypeIframe item holds ("(ITEMS)" after the item): items of
	// FrameTypes without origins, served from the iframe's origin; nil for an empty iframe and
	// for every other type.
	Frame []Item
}

// Spec is a parsed page spec: the page's objects, in document order, as items.
type Spec struct {
	// Name is the preset the spec was parsed from, or "" when it was given as items.
	Name string
	// Items are the spec's items in the order given; objects are numbered across them.
	Items []Item
}

// String returns the canonical form of the spec's items (also for a preset), such as
// "10x30KB,1x1MB" or "1x20KB:css,2x5KB:fetch-chain@o1": COUNTxSIZE with each size in the largest
// unit of MB, MiB, KB, KiB, B that divides it exactly, then ":TYPE" unless the type is an image
// and "@ORIGIN" when the origin is not the page's. ParseSpec(s.String()) gives back the same items.
func (s Spec) String() string {
	parts := make([]string, len(s.Items))
	for i, it := range s.Items {
		parts[i] = it.String()
	}
	return strings.Join(parts, ",")
}

// String returns the item's canonical form, such as "10x30KB" or "1x8KB:iframe@o1".
func (it Item) String() string {
	out := strconv.Itoa(it.Count) + "x" + FormatSize(it.Size)
	if it.Type != "" && it.Type != TypeImage {
		out += ":" + string(it.Type)
	}
	if it.Origin != "" {
		out += "@" + it.Origin
	}
	if len(it.Frame) > 0 {
		out += "(" + Spec{Items: it.Frame}.String() + ")"
	}
	return out
}

// objects is the number of objects of the item: Count, and for an iframe item Count times
// the objects each iframe holds.
func (it Item) objects() int {
	n := 0
	for _, f := range it.Frame {
		n += f.Count
	}
	return it.Count * (1 + n)
}

// bytes is the sum of the item's objects' sizes, those its iframes hold included.
func (it Item) bytes() int64 {
	var n int64
	for _, f := range it.Frame {
		n += int64(f.Count) * f.Size
	}
	return int64(it.Count) * (it.Size + n)
}

// Label returns the preset name when the spec came from a preset, else String().
func (s Spec) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.String()
}

// Objects returns the number of objects of the page.
func (s Spec) Objects() int {
	n := 0
	for _, it := range s.Items {
		n += it.objects()
	}
	return n
}

// TotalBytes returns the sum of all object sizes in bytes (the HTML page excluded).
func (s Spec) TotalBytes() int64 {
	var t int64
	for _, it := range s.Items {
		t += it.bytes()
	}
	return t
}

// planned is one object of a spec before it is written: its item and its place in the item.
type planned struct {
	Item
	index int // 0-based index in the item (for a fetch chain: its depth - 1)
	frame int // index (in objects()) of the iframe that holds it; -1 for the page's own objects
}

// objects lists every object of the spec in spec order: each iframe is followed by the objects
// it holds.
func (s Spec) objects() []planned {
	out := make([]planned, 0, s.Objects())
	for _, it := range s.Items {
		for j := range it.Count {
			frame := len(out)
			out = append(out, planned{Item: it, index: j, frame: -1})
			for _, f := range it.Frame {
				for k := range f.Count {
					out = append(out, planned{Item: f, index: k, frame: frame})
				}
			}
		}
	}
	return out
}

// unit is one accepted size unit.
type unit struct {
	name  string
	bytes int64
}

// units are the accepted size units, in the order FormatSize tries them (largest first, decimal
// before binary). "kB" is accepted as the SI spelling of KB but never produced.
var units = []unit{{"MB", 1_000_000}, {"MiB", 1 << 20}, {"KB", 1000}, {"KiB", 1024}, {"B", 1}}

const (
	acceptedSpec  = "accepted: a preset name (see 'pltlab pages --list') or comma-separated [COUNTx]SIZE[:TYPE][@ORIGIN] items like 10x30KB,2x200KB,1x20KB:css,1x8KB:iframe@o1"
	acceptedUnits = "B, KB or kB (1000 B), KiB (1024 B), MB (10^6 B), MiB (2^20 B)"
)

// FormatSize formats n bytes in the largest unit of MB, MiB, KB, KiB, B that divides it exactly,
// such as "30KB", "1MiB" or "1234B"; ParseSpec reads it back.
func FormatSize(n int64) string {
	for _, u := range units {
		if n != 0 && n%u.bytes == 0 {
			return strconv.FormatInt(n/u.bytes, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// ParseSpec parses a page spec: a preset name (see Presets) or comma-separated items
// [COUNTx]SIZE[:TYPE][@ORIGIN][(ITEMS)] such as "10x30KB,2x200KB,1x1MiB" or
// "1x20KB:css,2x50KB:js,40KB:font,10x30KB,3x5KB:fetch-chain@o1,1x8KB:iframe@o2". COUNT is a whole
// number 1..MaxObjects (1 when "COUNTx" is left out); the separator is 'x' (or 'X'); SIZE is a
// whole number followed by a unit: B, KB or kB (1000), KiB (1024), MB (10^6) or MiB (2^20); units
// are case-sensitive (no "kb": it reads as kilobit). TYPE is one of ObjectTypes (default img: an
// item without a type means what it always meant); ORIGIN is a label (validOrigin: such as o1 or
// cdn) of the host that serves the item's objects, OriginHost (default: the page's origin).
// An iframe item may hold objects, "(ITEMS)": items of FrameTypes without ORIGIN, in every
// iframe of the item, on its origin; its SIZE must leave room for their markup (frameMinSize).
// Spaces around items are ignored. Each size must be TYPE.MinSize()..MaxObjectSize bytes, the
// page at most MaxObjects objects and MaxTotalBytes in total. Errors are one line that names the
// bad part and what is accepted.
func ParseSpec(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Spec{}, fmt.Errorf("empty page spec; %s", acceptedSpec)
	}
	if !strings.Contains(s, ",") && startsWithLetter(s) {
		p, ok := LookupPreset(s)
		if !ok {
			return Spec{}, fmt.Errorf("unknown page preset %q; %s", s, acceptedSpec)
		}
		spec, err := ParseSpec(p.Spec)
		if err != nil {
			return Spec{}, fmt.Errorf("preset %s: %w", p.Name, err)
		}
		spec.Name = p.Name
		return spec, nil
	}
	items, err := parseItems(s, "")
	if err != nil {
		return Spec{}, err
	}
	spec := Spec{Items: items}
	return spec, checkLimits(spec)
}

// parseItems parses comma-separated items; commas inside parentheses (an iframe's objects) do
// not separate. in is the iframe item being read, "" at the top level.
func parseItems(s, in string) ([]Item, error) {
	var out []Item
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		switch {
		case i < len(s) && s[i] == '(':
			depth++
		case i < len(s) && s[i] == ')':
			depth--
		case i == len(s) || s[i] == ',' && depth == 0:
			it, err := parseItem(strings.TrimSpace(s[start:i]), in)
			if err != nil {
				return nil, err
			}
			out = append(out, it)
			start = i + 1
		}
	}
	return out, nil
}

// checkLimits enforces MaxObjects and MaxTotalBytes on a spec whose items are each valid.
func checkLimits(spec Spec) error {
	if n := spec.Objects(); n > MaxObjects {
		return fmt.Errorf("page spec %q has %d objects; accepted: at most %d", spec.String(), n, MaxObjects)
	}
	if t := spec.TotalBytes(); t > MaxTotalBytes {
		return fmt.Errorf("page spec %q totals %d bytes (%s); accepted: at most %d bytes (1 GB)",
			spec.String(), t, HumanBytes(t), MaxTotalBytes)
	}
	return nil
}

func startsWithLetter(s string) bool {
	return s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z')
}

// parseItem parses one [COUNTx]SIZE[:TYPE][@ORIGIN][(ITEMS)] item; in is the iframe item it is
// held by ("" at the top level).
func parseItem(item, in string) (Item, error) {
	if item == "" {
		return Item{}, fmt.Errorf("empty item in page spec (two commas or a trailing comma); %s", acceptedSpec)
	}
	if open := strings.IndexByte(item, '('); open >= 0 || strings.ContainsRune(item, ')') {
		return parseFrameItem(item, open, in)
	}
	if startsWithLetter(item) {
		return Item{}, fmt.Errorf("bad page spec item %q: want [COUNTx]SIZE[:TYPE][@ORIGIN] like 10x30KB or 1x20KB:css (presets cannot be combined with items)", item)
	}
	rest, origin, hasOrigin := strings.Cut(item, "@")
	if hasOrigin && !validOrigin(origin) {
		return Item{}, fmt.Errorf("bad origin %q in page spec item %q; accepted: a label of 1 to %d lower-case letters, digits or '-' that starts with a letter, such as o1 or cdn", origin, item, MaxOriginLabel)
	}
	rest, typ, hasType := strings.Cut(rest, ":")
	t := ObjectType("")
	if hasType {
		var ok bool
		if t, ok = parseType(typ); !ok {
			return Item{}, fmt.Errorf("unknown object type %q in page spec item %q; accepted: %s", typ, item, typeNames())
		}
	}
	count, sz := 1, rest
	if i := strings.IndexAny(rest, "xX"); i >= 0 {
		var err error
		if count, err = parseCount(rest[:i], item); err != nil {
			return Item{}, err
		}
		sz = rest[i+1:]
	}
	size, err := parseSize(sz, item, t)
	if err != nil {
		return Item{}, err
	}
	it := Item{Count: count, Size: size, Type: t, Origin: origin}
	if in != "" && (origin != "" || !slices.Contains(FrameTypes, t.canonical())) {
		return Item{}, fmt.Errorf("bad item %q in iframe item %q; accepted in an iframe: items of type %s without @ORIGIN (they are on the iframe's origin)", item, in, frameTypeNames())
	}
	return it, nil
}

// parseFrameItem parses an iframe item with the objects it holds, "SIZE:iframe[@ORIGIN](ITEMS)";
// open is the index of its '('.
func parseFrameItem(item string, open int, in string) (Item, error) {
	if in != "" {
		return Item{}, fmt.Errorf("bad item %q in iframe item %q; accepted: iframes do not nest", item, in)
	}
	if open < 0 || !strings.HasSuffix(item, ")") || strings.Count(item, "(") != 1 || strings.Count(item, ")") != 1 || open == len(item)-2 {
		return Item{}, fmt.Errorf("bad page spec item %q: accepted: an iframe item with the objects it holds in one pair of parentheses, such as 1x20KB:iframe@o1(3x5KB,1x2KB:css)", item)
	}
	it, err := parseItem(item[:open], "")
	if err != nil {
		return Item{}, err
	}
	if it.Type != TypeIframe {
		return Item{}, fmt.Errorf("bad page spec item %q: only iframe items hold objects (ITEMS); accepted: such as 1x20KB:iframe@o1(3x5KB)", item)
	}
	if it.Frame, err = parseItems(item[open+1:len(item)-1], item); err != nil {
		return Item{}, err
	}
	if need := frameMinSize(it.Frame); it.Size < need {
		return Item{}, fmt.Errorf("size %s in page spec item %q is below the smallest iframe that holds its %d objects; accepted: %dB to 50MB per object",
			FormatSize(it.Size), item, Spec{Items: it.Frame}.Objects(), need)
	}
	return it, nil
}

// parseCount parses COUNT of item: 1..MaxObjects, digits only.
func parseCount(c, item string) (int, error) {
	n, err := strconv.Atoi(c)
	if err != nil || !allDigits(c) || n < 1 || n > MaxObjects {
		return 0, fmt.Errorf("bad count %q in page spec item %q; accepted: a whole number from 1 to %d", c, item, MaxObjects)
	}
	return n, nil
}

// parseSize parses SIZE of item: digits and a unit, within t.MinSize()..MaxObjectSize bytes.
func parseSize(sz, item string, t ObjectType) (int64, error) {
	j := 0
	for j < len(sz) && sz[j] >= '0' && sz[j] <= '9' {
		j++
	}
	num, name := sz[:j], sz[j:]
	if num == "" {
		return 0, fmt.Errorf("bad size %q in page spec item %q; accepted: a whole number and a unit like 30KB; units %s", sz, item, acceptedUnits)
	}
	mult, ok := unitBytes(name)
	if !ok {
		return 0, fmt.Errorf("unknown unit %q in page spec item %q; accepted units: %s", name, item, acceptedUnits)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > MaxObjectSize/mult || n*mult > MaxObjectSize {
		return 0, fmt.Errorf("size %s in page spec item %q is too large; accepted: %dB to 50MB per object", sz, item, t.MinSize())
	}
	if n*mult < t.MinSize() {
		what := "JPEG"
		if t != "" {
			what = string(t) + " object"
		}
		return 0, fmt.Errorf("size %s in page spec item %q is below the smallest %s the generator makes; accepted: %dB to 50MB per object", sz, item, what, t.MinSize())
	}
	return n * mult, nil
}

// unitBytes returns the bytes per unit name; "kB" is the SI spelling of KB.
func unitBytes(name string) (int64, bool) {
	if name == "kB" {
		return 1000, true
	}
	for _, u := range units {
		if u.name == name {
			return u.bytes, true
		}
	}
	return 0, false
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// HumanBytes formats n bytes for people with decimal units and three significant digits, such as
// "300 KB", "1.5 MB" or "999 B".
func HumanBytes(n int64) string {
	switch {
	case n >= 1_000_000_000:
		return trimFloat(float64(n)/1e9) + " GB"
	case n >= 1_000_000:
		return trimFloat(float64(n)/1e6) + " MB"
	case n >= 1000:
		return trimFloat(float64(n)/1e3) + " KB"
	}
	return strconv.FormatInt(n, 10) + " B"
}

// trimFloat prints v (1 <= v < 1000) with about three significant digits and no trailing zeros.
func trimFloat(v float64) string {
	prec := 2
	switch {
	case v >= 100:
		prec = 0
	case v >= 10:
		prec = 1
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
