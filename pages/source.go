package pages

import (
	"fmt"
	"strings"
)

// Source is a --page value parsed once: a page to generate (a SPEC or a preset name) or a HAR
// to replay ("har:FILE"). It is the one place the "har:" prefix is read; every caller asks the
// Source, never the string.
type Source struct {
	// Value is the page as given ("10x30KB", "carlucci2015", "har:site.har"): its name in
	// records (page.spec) and the key of its archive.
	Value string
	// HAR is the file of a replayed page, "" for a generated one.
	HAR string
}

// ParseSource reads one --page value without touching any file: "har:FILE" is a replay of
// FILE, anything else a page to generate (ParseSpec judges it). Errors: "har:" with no file.
func ParseSource(v string) (Source, error) {
	file, ok := strings.CutPrefix(v, ReplayPrefix)
	if !ok {
		return Source{Value: v}, nil
	}
	if strings.TrimSpace(file) == "" {
		return Source{}, fmt.Errorf("bad page %q: accepted har:FILE naming a HAR file", v)
	}
	return Source{Value: v, HAR: file}, nil
}

// Replay reports whether the page replays a HAR.
func (s Source) Replay() bool { return s.HAR != "" }

// IsReplay reports whether page (a --page value) names a HAR to replay: ParseSource(page)'s
// Replay, for a caller holding the string alone.
func IsReplay(page string) bool {
	s, err := ParseSource(page)
	return err == nil && s.Replay()
}
