package experiment

import (
	"strings"
	"testing"
	"time"

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

// TestNgtcp2Wait: the idle-out waits a load of the ngtcp2 stack adds (cold one, warm two).
func TestNgtcp2Wait(t *testing.T) {
	if c, w := Ngtcp2Wait(result.Cold), Ngtcp2Wait(result.Warm); c != 2100*time.Millisecond || w != 4200*time.Millisecond {
		t.Fatalf("cold %v warm %v, want 2.1 s and 4.2 s", c, w)
	}
}
