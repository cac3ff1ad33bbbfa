package pages

import (
	"strings"
	"testing"
)

// TestParseSource: "har:FILE" is a replay of FILE, anything else a page to generate; "har:" with
// no file is refused naming the value; no file is read.
func TestParseSource(t *testing.T) {
	for v, want := range map[string]Source{
		"10x30KB":             {Value: "10x30KB"},
		"carlucci2015":        {Value: "carlucci2015"},
		"har:/no/such.har":    {Value: "har:/no/such.har", HAR: "/no/such.har"},
		"har:site:with:colon": {Value: "har:site:with:colon", HAR: "site:with:colon"},
	} {
		got, err := ParseSource(v)
		if err != nil || got != want || got.Replay() != (want.HAR != "") || IsReplay(v) != got.Replay() {
			t.Errorf("ParseSource(%q) = %+v, %v; want %+v", v, got, err, want)
		}
	}
	for _, v := range []string{"har:", "har:  "} {
		if _, err := ParseSource(v); err == nil || !strings.Contains(err.Error(), "accepted har:FILE") {
			t.Errorf("ParseSource(%q) = %v", v, err)
		}
		if IsReplay(v) {
			t.Errorf("IsReplay(%q)", v)
		}
	}
}
