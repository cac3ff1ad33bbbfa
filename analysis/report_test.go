package analysis

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/analysis/internal/synth"
	"github.com/pltlab/pltlab/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func load(ms float64, proto string) *result.Record {
	return &result.Record{V: 1, Mode: result.Cold, Protocol: proto, PLTMs: ms, Valid: true,
		Page: result.Page{Spec: "p"}, Link: result.Link{Spec: "l"}}
}

// TestGroupAndCompareHandComputed checks a group's statistics and the ratio by hand.
func TestGroupAndCompareHandComputed(t *testing.T) {
	var recs []*result.Record
	for _, v := range []float64{100, 110, 120, 130, 140, 150, 160, 170, 180, 190} {
		recs = append(recs, load(v, "h1"), load(v/2, "h2"))
	}
	warm := load(1, "h1")
	warm.Warmup = true
	bad := load(5, "h2")
	bad.Valid, bad.InvalidReason = false, "bytes short"
	to := load(60000, "h2")
	to.TimedOut, to.Valid, to.DeadlineMs = true, false, 60000
	check := &result.Record{V: 1, Kind: result.KindLinkCheck, Link: result.Link{Spec: "l"}}
	recs = append(recs, warm, bad, to, check)

	rep := Analyze(recs, Options{})
	if len(rep.Groups) != 2 {
		t.Fatalf("got %d groups, want 2", len(rep.Groups))
	}
	h1, h2 := rep.Groups[0], rep.Groups[1]
	// h1: 100..190, n = 10: median 145, p5 = 100 + 0.45*10 = 104.5, CI [x(2), x(9)] = [110, 180],
	// mean 145, sd = sqrt(sum (k*10)^2 for k=-4.5..4.5 / 9) = sqrt(8250/9).
	if h1.Runs != 10 || h1.Median != 145 || h1.P5 != 104.5 || h1.CILow != 110 || h1.CIHigh != 180 ||
		h1.Mean != 145 || !near(h1.SD, math.Sqrt(8250.0/9), 1e-9) {
		t.Errorf("h1 = %+v", h1)
	}
	// h2: 50..95 plus one timeout (11 values, censored on top) and one invalid: median is
	// x(6) = 75, the CI of n = 11 is [x(2), x(10)] = [55, 95], max censored.
	if h2.Runs != 12 || h2.Valid != 10 || h2.TimedOut != 1 || h2.Invalid["bytes short"] != 1 ||
		h2.Median != 75 || h2.CILow != 55 || h2.CIHigh != 95 || !math.IsInf(h2.Max, 1) || h2.DeadlineMs != 60000 {
		t.Errorf("h2 = %+v", h2)
	}
	if len(rep.Comparisons) != 1 {
		t.Fatalf("got %d comparisons", len(rep.Comparisons))
	}
	c := rep.Comparisons[0]
	// ratio = 75 / 145 = 0.5172..., diff = -48.3 %.
	if !near(c.Ratio, 75.0/145, 1e-12) || !near(c.DiffPct, 100*(75.0/145-1), 1e-9) || !c.Significant {
		t.Errorf("comparison = %+v", c)
	}
	if !(c.RatioLow <= c.Ratio && c.Ratio <= c.RatioHigh) {
		t.Errorf("ratio %v outside its CI [%v, %v]", c.Ratio, c.RatioLow, c.RatioHigh)
	}
	if rep.Context.Warmups != 1 || len(rep.Context.LinkChecks) != 1 {
		t.Errorf("context = %+v", rep.Context)
	}
}

// TestCensoredMedianPrinted checks that a median among timeouts prints as ">= deadline".
func TestCensoredMedianPrinted(t *testing.T) {
	var recs []*result.Record
	for i := range 6 {
		r := load(1000+float64(i), "h1")
		if i >= 2 {
			r.TimedOut, r.Valid, r.DeadlineMs, r.PLTMs = true, false, 30000, 30000
		}
		recs = append(recs, r)
	}
	rep := Analyze(recs, Options{})
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, ">= 30000") || strings.Contains(out, "  30000.0") {
		t.Errorf("censored median not shown as >= deadline:\n%s", out)
	}
	var js bytes.Buffer
	rep.WriteJSON(&js)
	var got struct {
		Groups []struct {
			TimedOut int      `json:"timed_out"`
			Censored []string `json:"censored"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Groups[0].TimedOut != 4 || !strings.Contains(strings.Join(got.Groups[0].Censored, ","), "median_ms") {
		t.Errorf("json group = %+v", got.Groups[0])
	}
}

func TestGolden(t *testing.T) {
	rep := Analyze(synth.Records(synth.Default()), Options{})
	rep.SkippedLines = 1
	for _, f := range []struct {
		format Format
		file   string
	}{{Text, "report.txt"}, {Markdown, "report.md"}, {CSV, "report.csv"}, {JSON, "report.json"}} {
		t.Run(string(f.format), func(t *testing.T) {
			var buf bytes.Buffer
			if err := rep.Write(&buf, f.format); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", f.file)
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s differs from the golden file (go test -update regenerates it):\n%s", path, buf.String())
			}
		})
	}
}

// TestJSONContract checks the field names agreed in issue 6.
func TestJSONContract(t *testing.T) {
	rep := Analyze(synth.Records(synth.Default()), Options{})
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	need := map[string][]string{
		"groups": {"page", "link", "mode", "protocol", "runs", "valid", "timed_out", "median_ms", "mean_ms",
			"sd_ms", "cv", "p5_ms", "p95_ms", "ci_low_ms", "ci_high_ms"},
		"comparisons": {"page", "link", "mode", "protocol", "baseline", "ratio", "ratio_ci_low", "ratio_ci_high",
			"diff_pct", "p_mann_whitney", "p_welch", "significant"},
	}
	for list, fields := range need {
		items, _ := m[list].([]any)
		if len(items) == 0 {
			t.Fatalf("%s is empty", list)
		}
		obj := items[0].(map[string]any)
		for _, f := range fields {
			if _, ok := obj[f]; !ok {
				t.Errorf("%s[0] has no %q", list, f)
			}
		}
	}
	if _, ok := m["skipped_lines"].(float64); !ok {
		t.Error("no skipped_lines")
	}
}

func TestParseFlags(t *testing.T) {
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "text, markdown, csv, json, html") {
		t.Errorf("ParseFormat(xml) = %v", err)
	}
	if _, err := ParseMetric("lcp_ms"); err == nil || !strings.Contains(err.Error(), "plt_ms") {
		t.Errorf("ParseMetric(lcp_ms) = %v", err)
	}
	if m, err := ParseMetric("ttfb_ms"); err != nil || m != TTFB {
		t.Errorf("ParseMetric(ttfb_ms) = %v, %v", m, err)
	}
	if _, err := ImageFormat("x.jpg"); err == nil {
		t.Error("ImageFormat(x.jpg) accepted")
	}
}

func TestWriteDirAndSummary(t *testing.T) {
	dir := t.TempDir()
	recs := synth.Records(synth.Default())
	if err := WriteDir(dir, recs, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range DirFiles {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	var buf bytes.Buffer
	if err := Summary(&buf, recs, Options{}); err != nil || !strings.Contains(buf.String(), "ratio of medians") {
		t.Errorf("Summary: %v\n%s", err, buf.String())
	}
	if err := Summary(&buf, nil, Options{}); err != ErrNoRecords {
		t.Errorf("Summary(nil) = %v, want ErrNoRecords", err)
	}
}

// BenchmarkAnalyze measures Analyze (grouping, statistics, bootstrap) on the 9-link grid matrix
// (540 loads, 18 comparisons).
func BenchmarkAnalyze(b *testing.B) {
	recs := synth.Records(synth.Grid())
	for b.Loop() {
		Analyze(recs, Options{})
	}
}
