package pages

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Item
		canon    string
	}{
		{"one item", "10x30KB", []Item{{Count: 10, Size: 30_000}}, "10x30KB"},
		{"several items", "10x30KB,2x200KB,1x1MiB", []Item{{Count: 10, Size: 30_000}, {Count: 2, Size: 200_000}, {Count: 1, Size: 1 << 20}}, "10x30KB,2x200KB,1x1MiB"},
		{"bytes", "3x1234B", []Item{{Count: 3, Size: 1234}}, "3x1234B"},
		{"bytes canonicalised", "1x2000B", []Item{{Count: 1, Size: 2000}}, "1x2KB"},
		{"KiB", "2x4KiB", []Item{{Count: 2, Size: 4096}}, "2x4KiB"},
		{"SI kB", "1x5kB", []Item{{Count: 1, Size: 5000}}, "1x5KB"},
		{"MB", "1x10MB", []Item{{Count: 1, Size: 10_000_000}}, "1x10MB"},
		{"capital X and spaces", " 2X1KB , 1x1MB ", []Item{{Count: 2, Size: 1000}, {Count: 1, Size: 1_000_000}}, "2x1KB,1x1MB"},
		{"leading zeros", "010x01KB", []Item{{Count: 10, Size: 1000}}, "10x1KB"},
		{"minimum size", "1x398B", []Item{{Count: 1, Size: MinObjectSize}}, "1x398B"},
		{"maximum size", "1x50MB", []Item{{Count: 1, Size: MaxObjectSize}}, "1x50MB"},
		{"maximum objects", "10000x1KB", []Item{{Count: 10000, Size: 1000}}, "10000x1KB"},
		{"maximum total", "20x50MB", []Item{{Count: 20, Size: 50_000_000}}, "20x50MB"},
		{"preset", "carlucci2015", []Item{{Count: 30, Size: 10_000}}, "30x10KB"},
		{"kakhki preset", "kakhki-100x10MB", []Item{{Count: 100, Size: 10_000_000}}, "100x10MB"},
		{"same-bytes preset", "same1MB-200x5KB", []Item{{Count: 200, Size: 5000}}, "200x5KB"},
		{"typed", "1x20KB:css,2x50KB:js,1x30KB:js-async,1x40KB:font,10x30KB,3x5KB:fetch-chain,1x8KB:iframe@o1",
			[]Item{{Count: 1, Size: 20_000, Type: TypeCSS}, {Count: 2, Size: 50_000, Type: TypeJS}, {Count: 1, Size: 30_000, Type: TypeJSAsync},
				{Count: 1, Size: 40_000, Type: TypeFont}, {Count: 10, Size: 30_000}, {Count: 3, Size: 5000, Type: TypeFetchChain},
				{Count: 1, Size: 8000, Type: TypeIframe, Origin: "o1"}},
			"1x20KB:css,2x50KB:js,1x30KB:js-async,1x40KB:font,10x30KB,3x5KB:fetch-chain,1x8KB:iframe@o1"},
		{"count left out", "20KB:css,5KB", []Item{{Count: 1, Size: 20_000, Type: TypeCSS}, {Count: 1, Size: 5000}}, "1x20KB:css,1x5KB"},
		{"img is the default", "2x10KB:img,1x10KB:img@cdn", []Item{{Count: 2, Size: 10_000}, {Count: 1, Size: 10_000, Origin: "cdn"}}, "2x10KB,1x10KB@cdn"},
		{"every type", "1KB:js-body,1KB:js-defer,1KB:fetch,1KB:iframe,1KB:font@a-1",
			[]Item{{Count: 1, Size: 1000, Type: TypeJSBody}, {Count: 1, Size: 1000, Type: TypeJSDefer}, {Count: 1, Size: 1000, Type: TypeFetch},
				{Count: 1, Size: 1000, Type: TypeIframe}, {Count: 1, Size: 1000, Type: TypeFont, Origin: "a-1"}},
			"1x1KB:js-body,1x1KB:js-defer,1x1KB:fetch,1x1KB:iframe,1x1KB:font@a-1"},
		{"minimum sizes", "128B:css,256B:fetch", []Item{{Count: 1, Size: 128, Type: TypeCSS}, {Count: 1, Size: 256, Type: TypeFetch}}, "1x128B:css,1x256B:fetch"},
		{"origin x in label", "1x1KB@xx", []Item{{Count: 1, Size: 1000, Origin: "xx"}}, "1x1KB@xx"},
		{"iframe holding objects", "1x2KB:css, 2x2KB:iframe@o1( 3x5KB , 1x200B:css,1x1KB:js-async),1x1KB",
			[]Item{{Count: 1, Size: 2000, Type: TypeCSS}, {Count: 2, Size: 2000, Type: TypeIframe, Origin: "o1",
				Frame: []Item{{Count: 3, Size: 5000}, {Count: 1, Size: 200, Type: TypeCSS}, {Count: 1, Size: 1000, Type: TypeJSAsync}}},
				{Count: 1, Size: 1000}},
			"1x2KB:css,2x2KB:iframe@o1(3x5KB,1x200B:css,1x1KB:js-async),1x1KB"},
		{"smallest iframe of one object", "992B:iframe(1KB)", []Item{{Count: 1, Size: 992, Type: TypeIframe, Frame: []Item{{Count: 1, Size: 1000}}}}, "1x992B:iframe(1x1KB)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSpec(tt.in)
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(s.Items, tt.want) {
				t.Errorf("items = %v, want %v", s.Items, tt.want)
			}
			if got := s.String(); got != tt.canon {
				t.Errorf("String() = %q, want %q", got, tt.canon)
			}
		})
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // the exact error when it starts with "=", else a substring
	}{
		{"empty", "", "=empty page spec; accepted: a preset name (see 'pltlab pages --list') or comma-separated [COUNTx]SIZE[:TYPE][@ORIGIN] items like 10x30KB,2x200KB,1x20KB:css,1x8KB:iframe@o1"},
		{"blank", "  ", "empty page spec"},
		{"zero count", "0x10KB", `=bad count "0" in page spec item "0x10KB"; accepted: a whole number from 1 to 10000`},
		{"missing number", "3xKB", `=bad size "KB" in page spec item "3xKB"; accepted: a whole number and a unit like 30KB; units B, KB or kB (1000 B), KiB (1024 B), MB (10^6 B), MiB (2^20 B)`},
		{"negative size", "10x-5KB", `bad size "-5KB" in page spec item "10x-5KB"`},
		{"unknown unit", "1x1GB", `=unknown unit "GB" in page spec item "1x1GB"; accepted units: B, KB or kB (1000 B), KiB (1024 B), MB (10^6 B), MiB (2^20 B)`},
		{"kilobit", "1x30kb", `unknown unit "kb"`},
		{"no unit", "1x500", `unknown unit ""`},
		{"unknown preset", "carlucci", `=unknown page preset "carlucci"; accepted: a preset name (see 'pltlab pages --list') or comma-separated [COUNTx]SIZE[:TYPE][@ORIGIN] items like 10x30KB,2x200KB,1x20KB:css,1x8KB:iframe@o1`},
		{"too many objects", "6000x1KB,4001x1KB", `=page spec "6000x1KB,4001x1KB" has 10001 objects; accepted: at most 10000`},
		{"count over limit", "10001x1KB", `bad count "10001"`},
		{"over 1 GB", "21x50MB", `=page spec "21x50MB" totals 1050000000 bytes (1.05 GB); accepted: at most 1000000000 bytes (1 GB)`},
		{"below minimum", "1x397B", `=size 397B in page spec item "1x397B" is below the smallest JPEG the generator makes; accepted: 398B to 50MB per object`},
		{"above maximum", "1x51MB", `size 51MB in page spec item "1x51MB" is too large`},
		{"overflow", "1x99999999999999999999MB", `is too large`},
		{"negative count", "-1x1KB", `bad count "-1"`},
		{"plus count", "+1x1KB", `bad count "+1"`},
		{"letters", "10x30KB,big", `=bad page spec item "big": want [COUNTx]SIZE[:TYPE][@ORIGIN] like 10x30KB or 1x20KB:css (presets cannot be combined with items)`},
		{"unknown type", "1x10KB:gif", `=unknown object type "gif" in page spec item "1x10KB:gif"; accepted: img, css, js, js-body, js-async, js-defer, font, fetch, fetch-chain, iframe`},
		{"empty type", "1x10KB:", `unknown object type ""`},
		{"type case", "1x10KB:CSS", `unknown object type "CSS"`},
		{"bad origin", "1x10KB@O1", `=bad origin "O1" in page spec item "1x10KB@O1"; accepted: a label of 1 to 16 lower-case letters, digits or '-' that starts with a letter, such as o1 or cdn`},
		{"empty origin", "1x10KB:css@", `bad origin ""`},
		{"origin with dot", "1x10KB@a.b", `bad origin "a.b"`},
		{"origin digit first", "1x10KB@1o", `bad origin "1o"`},
		{"origin too long", "1x10KB@abcdefghijklmnopq", `bad origin "abcdefghijklmnopq"`},
		{"origin before type", "1x10KB@o1:css", `bad origin "o1:css"`},
		{"css below minimum", "1x127B:css", `=size 127B in page spec item "1x127B:css" is below the smallest css object the generator makes; accepted: 128B to 50MB per object`},
		{"fetch below minimum", "2x255B:fetch-chain", `is below the smallest fetch-chain object`},
		{"font below minimum", "1x500B:font", `is below the smallest font object`},
		{"image below minimum typed", "1x397B:img", `is below the smallest JPEG`},
		{"typed size without number", "1xKB:css", `bad size "KB" in page spec item "1xKB:css"`},
		{"frame on an image", "1x2KB(1x1KB)", `=bad page spec item "1x2KB(1x1KB)": only iframe items hold objects (ITEMS); accepted: such as 1x20KB:iframe@o1(3x5KB)`},
		{"nested iframes", "2KB:iframe(2KB:iframe(1KB))", `bad page spec item "2KB:iframe(2KB:iframe(1KB))": accepted: an iframe item with the objects it holds in one pair of parentheses`},
		{"origin in a frame", "2KB:iframe(1KB@o1)", `=bad item "1KB@o1" in iframe item "2KB:iframe(1KB@o1)"; accepted in an iframe: items of type img, css, js, js-body, js-async, js-defer without @ORIGIN (they are on the iframe's origin)`},
		{"font in a frame", "2KB:iframe(1KB:font)", `bad item "1KB:font" in iframe item`},
		{"empty frame", "2KB:iframe()", `accepted: an iframe item with the objects it holds in one pair of parentheses`},
		{"unclosed frame", "2KB:iframe(1KB,1KB", `accepted: an iframe item with the objects it holds in one pair of parentheses`},
		{"stray parenthesis", "2KB:iframe),1KB", `accepted: an iframe item with the objects it holds in one pair of parentheses`},
		{"iframe too small for its objects", "991B:iframe(1KB)", `=size 991B in page spec item "991B:iframe(1KB)" is below the smallest iframe that holds its 1 objects; accepted: 992B to 50MB per object`},
		{"frame objects count", "1x1MB:iframe(10000x1KB)", `has 10001 objects`},
		{"trailing comma", "10x30KB,", "empty item in page spec"},
		{"preset in list", "carlucci2015,1x1KB", `bad page spec item "carlucci2015"`},
		{"decimal", "1x1.5MB", `unknown unit ".5MB"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSpec(tt.in)
			if err == nil {
				t.Fatalf("ParseSpec(%q) succeeded, want error %q", tt.in, tt.want)
			}
			got := err.Error()
			if exact, ok := strings.CutPrefix(tt.want, "="); ok {
				if got != exact {
					t.Errorf("error:\n got %s\nwant %s", got, exact)
				}
			} else if !strings.Contains(got, tt.want) {
				t.Errorf("error %q does not contain %q", got, tt.want)
			}
			if strings.Contains(got, "\n") {
				t.Errorf("error is not one line: %q", got)
			}
		})
	}
}

// TestAlmanacPresets checks the Web Almanac 2024 pages against the chapter's figures: the
// desktop page's requests per type (2 HTML with the document, 8 CSS, 4 fonts, 24 scripts, 18
// images) and its bytes per type within a byte per object of the published KiB.
func TestAlmanacPresets(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		css, font, js, img     int
		cssB, fontB, jsB, imgB int64
	}{
		{"almanac2024-desktop", 8, 4, 24, 18, 78 * 1024, 131 * 1024, 613 * 1024, 1054 * 1024},
		{"almanac2024-mobile", 8, 3, 22, 16, 73 * 1024, 111 * 1024, 558 * 1024, 900 * 1024},
	} {
		s, err := ParseSpec(tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		count := map[ObjectType]int{}
		bytes := map[ObjectType]int64{}
		for _, it := range s.Items {
			k := it.Type
			if k == TypeJSAsync {
				k = TypeJS
			}
			count[k] += it.Count
			bytes[k] += int64(it.Count) * it.Size
		}
		near := func(got, want int64, n int) bool { return got >= want-int64(n) && got <= want+int64(n) }
		if count[TypeCSS] != tc.css || count[TypeFont] != tc.font || count[TypeJS] != tc.js || count[""] != tc.img || count[TypeIframe] != 1 {
			t.Errorf("%s: requests per type %v", tc.name, count)
		}
		if !near(bytes[TypeCSS], tc.cssB, tc.css) || !near(bytes[TypeFont], tc.fontB, tc.font) || !near(bytes[TypeJS], tc.jsB, tc.js) ||
			!near(bytes[""], tc.imgB, tc.img) || bytes[TypeIframe] != 9*1024 {
			t.Errorf("%s: bytes per type %v", tc.name, bytes)
		}
		p, _ := LookupPreset(tc.name)
		if !strings.Contains(p.Doc, "almanac.httparchive.org/en/2024/page-weight") || !strings.Contains(p.Doc, "Not modelled") {
			t.Errorf("%s: doc does not cite its source and what it leaves out: %s", tc.name, p.Doc)
		}
	}
}

func TestPresets(t *testing.T) {
	ps := Presets()
	names := map[string]bool{}
	for _, p := range ps {
		if names[p.Name] {
			t.Errorf("duplicate preset %s", p.Name)
		}
		names[p.Name] = true
		s, err := ParseSpec(p.Name)
		if err != nil {
			t.Errorf("preset %s: %v", p.Name, err)
			continue
		}
		if s.Name != p.Name || s.String() != p.Spec || s.Label() != p.Name || p.Doc == "" {
			t.Errorf("preset %s: parsed %+v (label %s) from spec %q", p.Name, s, s.Label(), p.Spec)
		}
	}
	// 7 sizes x 6 counts minus kakhki-200x10MB (2 GB), plus carlucci2015, 6 same1MB presets and
	// the two Web Almanac pages.
	if len(ps) != 7*6-1+1+6+2 {
		t.Errorf("%d presets, want 50", len(ps))
	}
	for _, want := range []string{"carlucci2015", "kakhki-1x5KB", "kakhki-200x5KB", "kakhki-100x10MB", "same1MB-1x1MB", "same1MB-10x100KB"} {
		if !names[want] {
			t.Errorf("preset %s missing", want)
		}
	}
	if names["kakhki-200x10MB"] {
		t.Error("kakhki-200x10MB exceeds 1 GB and must be omitted")
	}
	for _, p := range ps {
		if s, _ := ParseSpec(p.Name); p.Name[:4] == "same" && s.TotalBytes() != 1_000_000 {
			t.Errorf("%s totals %d, want 1 MB", p.Name, s.TotalBytes())
		}
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1000: "1 KB", 1500: "1.5 KB", 300_000: "300 KB",
		999_500: "1000 KB", 1_048_576: "1.05 MB", 12_345_678: "12.3 MB", 1_000_000_000: "1 GB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"10x30KB,2x200KB,1x1MiB", "carlucci2015", "0x10KB", "3xKB", "10x-5KB", "1x1GB",
		"", "kakhki-200x5KB", "1x398B", " 2X1KB , 1x1MB ", "10000x100KB", "1x99999999999999999999B",
		"1x20KB:css,2x50KB:js,1x40KB:font,3x5KB:fetch-chain@o1", "20KB:iframe@cdn", "1x1KB:@", "1x1KB@o1:css", "128B:css", "2x2KB:iframe@o1(3x5KB,1x200B:css)", "2KB:iframe((1KB))"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSpec(in)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if n := s.Objects(); n < 1 || n > MaxObjects {
			t.Fatalf("%q: %d objects", in, n)
		}
		if tb := s.TotalBytes(); tb < minTextSize || tb > MaxTotalBytes {
			t.Fatalf("%q: total %d bytes", in, tb)
		}
		if err := validate(s); err != nil {
			t.Fatalf("%q parsed but does not validate: %v", in, err)
		}
		for _, it := range s.Items {
			if it.Size < it.Type.MinSize() || it.Type == TypeImage || (it.Origin != "" && !validOrigin(it.Origin)) {
				t.Fatalf("%q: item %+v", in, it)
			}
		}
		again, err := ParseSpec(s.String())
		if err != nil || !reflect.DeepEqual(again.Items, s.Items) {
			t.Fatalf("%q: canonical %q parses to %v, %v", in, s.String(), again.Items, err)
		}
	})
}
