package pages

import (
	"slices"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		name, in string
		want     []Item
		canon    string
	}{
		{"one item", "10x30KB", []Item{{10, 30_000}}, "10x30KB"},
		{"several items", "10x30KB,2x200KB,1x1MiB", []Item{{10, 30_000}, {2, 200_000}, {1, 1 << 20}}, "10x30KB,2x200KB,1x1MiB"},
		{"bytes", "3x1234B", []Item{{3, 1234}}, "3x1234B"},
		{"bytes canonicalised", "1x2000B", []Item{{1, 2000}}, "1x2KB"},
		{"KiB", "2x4KiB", []Item{{2, 4096}}, "2x4KiB"},
		{"SI kB", "1x5kB", []Item{{1, 5000}}, "1x5KB"},
		{"MB", "1x10MB", []Item{{1, 10_000_000}}, "1x10MB"},
		{"capital X and spaces", " 2X1KB , 1x1MB ", []Item{{2, 1000}, {1, 1_000_000}}, "2x1KB,1x1MB"},
		{"leading zeros", "010x01KB", []Item{{10, 1000}}, "10x1KB"},
		{"minimum size", "1x398B", []Item{{1, MinObjectSize}}, "1x398B"},
		{"maximum size", "1x50MB", []Item{{1, MaxObjectSize}}, "1x50MB"},
		{"maximum objects", "10000x1KB", []Item{{10000, 1000}}, "10000x1KB"},
		{"maximum total", "20x50MB", []Item{{20, 50_000_000}}, "20x50MB"},
		{"preset", "carlucci2015", []Item{{30, 10_000}}, "30x10KB"},
		{"kakhki preset", "kakhki-100x10MB", []Item{{100, 10_000_000}}, "100x10MB"},
		{"same-bytes preset", "same1MB-200x5KB", []Item{{200, 5000}}, "200x5KB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSpec(tt.in)
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if !slices.Equal(s.Items, tt.want) {
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
		{"empty", "", "=empty page spec; accepted: a preset name (see 'pltlab pages --list') or comma-separated COUNTxSIZE items like 10x30KB,2x200KB"},
		{"blank", "  ", "empty page spec"},
		{"zero count", "0x10KB", `=bad count "0" in page spec item "0x10KB"; accepted: a whole number from 1 to 10000`},
		{"missing number", "3xKB", `=bad size "KB" in page spec item "3xKB"; accepted: a whole number and a unit like 30KB; units B, KB or kB (1000 B), KiB (1024 B), MB (10^6 B), MiB (2^20 B)`},
		{"negative size", "10x-5KB", `bad size "-5KB" in page spec item "10x-5KB"`},
		{"unknown unit", "1x1GB", `=unknown unit "GB" in page spec item "1x1GB"; accepted units: B, KB or kB (1000 B), KiB (1024 B), MB (10^6 B), MiB (2^20 B)`},
		{"kilobit", "1x30kb", `unknown unit "kb"`},
		{"no unit", "1x500", `unknown unit ""`},
		{"unknown preset", "carlucci", `=unknown page preset "carlucci"; accepted: a preset name (see 'pltlab pages --list') or comma-separated COUNTxSIZE items like 10x30KB,2x200KB`},
		{"too many objects", "6000x1KB,4001x1KB", `=page spec "6000x1KB,4001x1KB" has 10001 objects; accepted: at most 10000`},
		{"count over limit", "10001x1KB", `bad count "10001"`},
		{"over 1 GB", "21x50MB", `=page spec "21x50MB" totals 1050000000 bytes (1.05 GB); accepted: at most 1000000000 bytes (1 GB)`},
		{"below minimum", "1x397B", `=size 397B in page spec item "1x397B" is below the smallest JPEG the generator makes; accepted: 398B to 50MB per object`},
		{"above maximum", "1x51MB", `size 51MB in page spec item "1x51MB" is too large`},
		{"overflow", "1x99999999999999999999MB", `is too large`},
		{"negative count", "-1x1KB", `bad count "-1"`},
		{"plus count", "+1x1KB", `bad count "+1"`},
		{"no separator", "10x30KB,5KB", `bad page spec item "5KB": want COUNTxSIZE`},
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
	// 7 sizes x 6 counts minus kakhki-200x10MB (2 GB), plus carlucci2015 and 6 same1MB presets.
	if len(ps) != 7*6-1+1+6 {
		t.Errorf("%d presets, want 48", len(ps))
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
		"", "kakhki-200x5KB", "1x398B", " 2X1KB , 1x1MB ", "10000x100KB", "1x99999999999999999999B"} {
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
		if tb := s.TotalBytes(); tb < MinObjectSize || tb > MaxTotalBytes {
			t.Fatalf("%q: total %d bytes", in, tb)
		}
		if err := validate(s); err != nil {
			t.Fatalf("%q parsed but does not validate: %v", in, err)
		}
		again, err := ParseSpec(s.String())
		if err != nil || !slices.Equal(again.Items, s.Items) {
			t.Fatalf("%q: canonical %q parses to %v, %v", in, s.String(), again.Items, err)
		}
	})
}
