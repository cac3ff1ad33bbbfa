package experiment

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
)

// TestCheckNgtcp2: an h3 load of the ngtcp2 stack stays valid only when the server's qlog shows
// its connection and that connection sent at least the page's object bytes; an invalid load
// keeps its first reason.
func TestCheckNgtcp2(t *testing.T) {
	page := result.Page{Spec: "4x20KB", TotalBytes: 81920, Objects: 4}
	for _, tc := range []struct {
		name      string
		conn      server.ConnInfo
		ok, valid bool
		want      string // "" when the load stays valid
	}{
		{"page's connection", server.ConnInfo{BodyBytes: 83012, Qlog: "a.sqlog"}, true, true, ""},
		{"exactly the page's bytes", server.ConnInfo{BodyBytes: 81920}, true, true, ""},
		{"no connection", server.ConnInfo{}, false, true, "no connection of the ngtcp2 server"},
		{"too few bytes", server.ConnInfo{BodyBytes: 81919, Qlog: "b.sqlog"}, true, true, "sent 81919 bytes on request streams, the page's objects are 81920 bytes (qlog b.sqlog)"},
		{"already invalid", server.ConnInfo{}, false, false, "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &result.Record{Protocol: "h3", Page: page, Valid: tc.valid}
			if !tc.valid {
				rec.InvalidReason = "timeout"
			}
			checkNgtcp2(rec, tc.conn, tc.ok)
			if tc.want == "" {
				if !rec.Valid {
					t.Fatalf("invalid: %s", rec.InvalidReason)
				}
				return
			}
			if rec.Valid || !strings.Contains(rec.InvalidReason, tc.want) {
				t.Fatalf("valid %t, reason %q, want %q", rec.Valid, rec.InvalidReason, tc.want)
			}
		})
	}
}

// TestNgtcp2OtherOrigins (issue 50 item 8): a page with objects on other origins is refused
// by CheckSpecs (and so by --dry-run) when the ngtcp2 stack serves measured h3 loads, and
// accepted, with its pages' server then quic-go's, when only h1 and h2 are measured.
func TestNgtcp2OtherOrigins(t *testing.T) {
	arms := func(protocols ...string) []Arm { return CrossArms(protocols, []result.Mode{result.Cold}) }
	for _, tc := range []struct {
		name string
		c    Config
		want string // "" = accepted
	}{
		{"ngtcp2 h3 other origin", Config{Pages: []string{"1x10KB@o1"}, Arms: arms("h1", "h3"), H3Stack: server.StackNgtcp2}, `page "1x10KB@o1" has objects on other origins`},
		{"ngtcp2 h1 h2 other origin", Config{Pages: []string{"1x10KB@o1"}, Arms: arms("h1", "h2"), H3Stack: server.StackNgtcp2}, ""},
		{"ngtcp2 h3 one origin", Config{Pages: []string{"1x10KB"}, Arms: arms("h3"), H3Stack: server.StackNgtcp2}, ""},
		{"quic-go h3 other origin", Config{Pages: []string{"1x10KB@o1"}, Arms: arms("h3")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSpecs(tc.c)
			if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckSpecs = %v, want %q", err, tc.want)
			}
			if err != nil {
				return
			}
			dir := filepath.Join(t.TempDir(), "page")
			spec, err := pages.ParseSpec(tc.c.Pages[0])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pages.Generate(dir, spec, pages.DefaultSeed); err != nil {
				t.Fatal(err)
			}
			if _, err := server.NewSites([]server.Site{{Dir: dir}}, pageServerH3Stack(tc.c)); err != nil {
				t.Fatalf("the pages' server refuses the page CheckSpecs accepted: %v", err)
			}
		})
	}
}
