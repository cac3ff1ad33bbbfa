package analysis

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/analysis/internal/synth"
)

// writeGridHTML writes the HTML report of the grid matrix (tables, ECDF, box plots, heatmap).
func writeGridHTML(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Analyze(synth.Records(synth.Grid()), Options{}).WriteHTML(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHTMLSelfContained checks the report fetches nothing: no src/href attributes, no URL other
// than the SVG and XLink namespace names.
func TestHTMLSelfContained(t *testing.T) {
	page := string(writeGridHTML(t))
	if regexp.MustCompile(`(?i)\s(src|href)\s*=`).MatchString(page) {
		t.Error("report has a src or href attribute")
	}
	urls := regexp.MustCompile(`https?://[^"'\s<>)]+`).FindAllString(page, -1)
	for _, u := range urls {
		if u != "http://www.w3.org/2000/svg" && u != "http://www.w3.org/1999/xlink" {
			t.Errorf("report refers to %s", u)
		}
	}
	for _, want := range []string{`<table class="groups"`, `<table class="comparisons"`, `id="fig-ecdf"`,
		`id="fig-box"`, `id="fig-heatmap"`, "Chromium/156.0.0.0", "6.1.0-synthetic", "cubic", "emu", "Link checks"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestIntegrationHTMLReport loads the HTML report in headless Chromium and checks the DOM it
// builds holds the tables and the SVG plots.
func TestIntegrationHTMLReport(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Chromium; skipped with -short")
	}
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip("Chromium not installed")
		}
		t.Fatalf("Chromium required in CI: %v", err)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, writeGridHTML(t), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+path).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	dom := string(out)
	counts := map[string]int{`<table class="groups"`: 9, `<table class="comparisons"`: 9, "<svg": 3, "<figure": 3}
	for tag, want := range counts {
		if got := strings.Count(dom, tag); got != want {
			t.Errorf("DOM has %d %s, want %d", got, tag, want)
		}
	}
	if !strings.Contains(dom, "Run context") || !strings.Contains(dom, "ratio of medians") {
		t.Error("DOM lacks the context or the comparison header")
	}
}
