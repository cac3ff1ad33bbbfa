package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
)

// TestReplayFactsFlagsMisses checks that a replayed load with a request the archive lacks is
// never valid: its reason names the count and the first missed requests, and a load without
// misses keeps its verdict; both record the archive, its digest and the counts.
func TestReplayFactsFlagsMisses(t *testing.T) {
	a := &pages.Archive{File: "load.har", Digest: "d59be2d872dbc5a4"}
	tests := []struct {
		name       string
		st         server.ReplayStats
		valid      bool
		wantReason string
	}{
		{"no miss", server.ReplayStats{Hits: 5}, true, ""},
		{"two misses", server.ReplayStats{Hits: 4, Misses: 2, Missed: []string{"GET https://plt.test/favicon.ico", "GET https://o1.test/x.js?v=2"}}, false,
			"replay: 2 requests not in the archive (GET https://plt.test/favicon.ico, GET https://o1.test/x.js?v=2); object /x.js: missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &result.Record{Valid: true}
			if !tt.valid {
				rec.Valid, rec.InvalidReason = false, "object /x.js: missing"
			}
			replayFacts(rec, a, tt.st)
			if rec.Valid != tt.valid || rec.InvalidReason != tt.wantReason {
				t.Errorf("valid %v, reason %q; want %v, %q", rec.Valid, rec.InvalidReason, tt.valid, tt.wantReason)
			}
			if r := rec.Replay; r == nil || r.Archive != "load.har" || r.Digest != a.Digest || r.Hits != tt.st.Hits || r.Misses != tt.st.Misses {
				t.Errorf("replay %+v, want archive, digest and counts of %+v", r, tt.st)
			}
		})
	}
	// A load that was valid but had a miss becomes invalid.
	rec := &result.Record{Valid: true}
	replayFacts(rec, a, server.ReplayStats{Hits: 1, Misses: 1, Missed: []string{"GET https://plt.test/a"}})
	if rec.Valid || !strings.HasPrefix(rec.InvalidReason, "replay: 1 requests not in the archive") {
		t.Errorf("valid %v, reason %q; want invalid, naming the miss", rec.Valid, rec.InvalidReason)
	}
}

// TestCheckPageHosts checks that pages serving one host twice are refused before anything is
// set up, and that a HAR first with a generated page after it is accepted.
func TestCheckPageHosts(t *testing.T) {
	dir := t.TempDir()
	har := func(name, doc string) string {
		b := `{"log":{"version":"1.2","entries":[{"pageref":"page_1","_resourceType":"document","request":{"method":"GET","url":"` + doc +
			`"},"response":{"status":200,"headers":[],"content":{"size":4,"mimeType":"text/html","text":"<p>x"}}}]}}`
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		return "har:" + p
	}
	own, other := har("own.har", "https://plt.test:4433/index.html"), har("other.har", "https://www.example.test/")
	own2 := har("own2.har", "https://plt.test:5555/index.html")
	tests := []struct {
		name  string
		pages []string
		want  string // "" = accepted
	}{
		{"HAR first, generated page after", []string{own, "10x30KB"}, ""},
		{"HARs on different hosts", []string{own, other}, ""},
		{"generated page first, pltlab HAR after", []string{"10x30KB", own}, "both serve host plt.test"},
		{"two HARs of plt.test", []string{own, own2}, "both serve host plt.test"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckSpecs(Config{Pages: tt.pages})
			if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("CheckSpecs(%v) = %v, want %q", tt.pages, err, tt.want)
			}
		})
	}
}

// TestArchivesReadOnce: after ReadArchives, the checks, the estimate, the footprint, the plan
// and its input digests read the one parse (on 3e73eb5 a dry run read the HAR 4 times and
// parsed it 8): with the file removed after ReadArchives, every one of them still answers, and
// the plan's digest is that of the bytes read.
func TestArchivesReadOnce(t *testing.T) {
	p := filepath.Join(t.TempDir(), "site.har")
	b := `{"log":{"entries":[{"pageref":"page_1","_resourceType":"document","request":{"method":"GET","url":"https://www.example.test/"},` +
		`"response":{"status":200,"content":{"mimeType":"text/html","text":"<img src=a.jpg>"}}},` +
		`{"pageref":"page_1","_resourceType":"image","request":{"method":"GET","url":"https://www.example.test/a.jpg"},"response":{"status":200,"bodySize":2000,"content":{"mimeType":"image/jpeg","text":"x"}}}]}}`
	if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Config{Pages: []string{"har:" + p}, Links: []string{"none"}, Arms: CrossArms([]string{"h2"}, []result.Mode{result.Cold}), Runs: 1}
	if err := c.ReadArchives(); err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	if err := CheckSpecs(c); err != nil {
		t.Errorf("CheckSpecs: %v", err)
	}
	if _, err := estimate(c); err != nil {
		t.Errorf("Estimate: %v", err)
	}
	if _, err := PlanFootprint(c); err != nil {
		t.Errorf("PlanFootprint: %v", err)
	}
	if _, err := NewSchedule(c); err != nil {
		t.Errorf("NewSchedule: %v", err)
	}
	if in := InputFiles(c); len(in) != 1 || in[0].SHA256 != c.Archives["har:"+p].Digest {
		t.Errorf("inputs %+v, want the digest of the bytes read", in)
	}
}
