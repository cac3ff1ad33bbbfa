package analysis

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

func refRecords() []*result.Record {
	var recs []*result.Record
	add := func(p string, m result.Mode, plts ...float64) {
		for _, v := range plts {
			recs = append(recs, &result.Record{V: 1, Protocol: p, Mode: m, Valid: true, PLTMs: v,
				Page: result.Page{Spec: "carlucci2015"}, Link: result.Link{Spec: "carlucci2015"}})
		}
	}
	add("h1", result.Cold, 2000, 2100, 2200, 1900, 1800, 2000, 2000)
	add("h2", result.Cold, 1500, 1400, 1450, 1500, 1400, 1450, 1450)
	add("h3", result.Warm, 1000, 1000, 1000, 1000, 1000, 1000)
	return recs
}

func TestReferenceRows(t *testing.T) {
	rep := Analyze(refRecords(), Options{})
	refs := []Reference{
		{Protocol: "h1", Mode: result.Cold, Label: "HTTP/1.1", PaperMs: 2030, BoundMs: 1050},
		{Protocol: "h2", Mode: result.Cold, Label: "SPDY", PaperMs: 1450},
		{Protocol: "h3", Mode: result.Cold, Label: "QUIC", PaperMs: 1140},
		{Protocol: "h3", Mode: result.Warm, Label: "QUIC (0-RTT)", PaperMs: 1140},
	}
	rows := rep.ReferenceRows(refs)
	// Medians: h1 2000, h2 1450, h3 warm 1000; h3 cold has no loads.
	want := []struct{ paperRatio, ratio float64 }{{1, 1}, {1450.0 / 2030, 0.725}, {1140.0 / 2030, math.NaN()}, {1140.0 / 2030, 0.5}}
	for i, w := range want {
		r := rows[i]
		if math.Abs(r.PaperRatio-w.paperRatio) > 1e-12 {
			t.Errorf("row %d: paper ratio %v, want %v", i, r.PaperRatio, w.paperRatio)
		}
		if math.IsNaN(w.ratio) != math.IsNaN(r.Ratio) || (!math.IsNaN(w.ratio) && math.Abs(r.Ratio-w.ratio) > 1e-12) {
			t.Errorf("row %d: ratio %v, want %v", i, r.Ratio, w.ratio)
		}
		if !math.IsNaN(r.Ratio) && !(r.RatioLow <= r.Ratio && r.Ratio <= r.RatioHigh) {
			t.Errorf("row %d: ratio %v outside its CI [%v, %v]", i, r.Ratio, r.RatioLow, r.RatioHigh)
		}
	}
	if rows[2].Group != nil {
		t.Error("h3 cold matched a group although it has no loads")
	}
	var b strings.Builder
	if err := rep.WriteReferenceTable(&b, refs, true); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"| h1 | HTTP/1.1 | 2.03 s | 2.00 s [1.80 s, 2.20 s] | 1.00 | 1.00 [",
		"| h3 | QUIC | 1.14 s | no loads | 0.56 | n/a | - | 0/0 |",
		"| h3 warm | QUIC (0-RTT) | 1.14 s | 1.00 s [1.00 s, 1.00 s] | 0.56 | 0.50 [",
		"| 1.05 s | 7/7 |",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
}

func TestReproductionInReports(t *testing.T) {
	rep := Analyze(refRecords(), Options{})
	rep.Reproduction = &Reproduction{Title: "Paper X reproduced",
		References: []Reference{{Protocol: "h1", Mode: result.Cold, Label: "HTTP/1.1", PaperMs: 2030}, {Protocol: "h2", Mode: result.Cold, Label: "SPDY", PaperMs: 1450}},
		Notes:      []string{"TLS 1.3 today"}}
	for _, f := range []Format{Markdown, HTML, JSON} {
		var b strings.Builder
		if err := rep.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		want := map[Format][]string{
			Markdown: {"# Paper X reproduced", "| h2 | SPDY | 1.45 s | 1.45 s [", "- TLS 1.3 today"},
			HTML:     {"<h1>Paper X reproduced</h1>", `<table class="reproduction">`, "<td>SPDY</td>", "<li>TLS 1.3 today</li>"},
			JSON:     {`"references": [`, `"label": "SPDY"`, `"paper_ms": 1450`, `"ratio": 0.725`},
		}[f]
		for _, s := range want {
			if !strings.Contains(out, s) {
				t.Errorf("%s output lacks %q", f, s)
			}
		}
	}
}

func TestReadFilesDropsDuplicates(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "r.jsonl")
	var b strings.Builder
	w := result.NewWriter(&b)
	for i, rec := range refRecords() {
		rec.Experiment, rec.Run = "e", i
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, st, err := ReadAll([]string{name, name}, nil, nil)
	if err != nil || len(recs) != len(refRecords()) || st.Duplicates != len(refRecords()) || st.Corrupt != 0 {
		t.Fatalf("read %d records, stats %+v, err %v; want %d records and %d duplicates, none corrupt", len(recs), st, err, len(refRecords()), len(refRecords()))
	}
}
