package view_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/view"
	"github.com/pltlab/pltlab/view/studyview"
)

// screenshots is where TestIntegrationViewInChromium writes its PNGs when set (the README's
// and docs' pictures: VIEW_SCREENSHOTS=../docs go test -run IntegrationView ./view).
var screenshots = os.Getenv("VIEW_SCREENSHOTS")

// TestIntegrationViewInChromium opens the view in real headless Chromium: the index, a study
// (the carlucci2015 records, rendered by package studies), a group, a load (waterfall, filmstrip,
// emulator counters, evidence downloads), a compare page and
// a live page; every page must render without a console error or a CSP violation, clicks must
// navigate, and the live page must show appended loads within 2 s. About 10 s.
func TestIntegrationViewInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test (real Chromium): run without -short")
	}
	chrome, err := browser.FindChromium("")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	live := filepath.Join(t.TempDir(), "live.jsonl")
	lines := strings.SplitAfter(string(must(os.ReadFile("testdata/run/run.jsonl"))), "\n")
	must(0, os.WriteFile(live, []byte(strings.Join(lines[:4], "")), 0o644))
	srv, err := view.New(view.Options{Roots: []string{"testdata", "../testdata/carlucci2015-quick-a9b0be5.jsonl", live}, Study: studyview.Report})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1600, 1000))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var problems []string
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == "error" || m.Type == "assert" {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s %s: %s (%s)", m.Type, m.Source, m.Text, m.URL))
				mu.Unlock()
			}
		}
	}()
	// check fails the page when the console got an error since the last check (late messages
	// get 300 ms to arrive).
	check := func(page string) {
		t.Helper()
		time.Sleep(300 * time.Millisecond)
		mu.Lock()
		defer mu.Unlock()
		if len(problems) > 0 {
			t.Errorf("%s: %s", page, strings.Join(problems, "; "))
			problems = nil
		}
	}
	do := func(page string, acts ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, acts...); err != nil {
			t.Fatalf("%s: %v", page, err)
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(sel))
		if err != nil {
			t.Fatalf("text of %s: %v", sel, err)
		}
		return s
	}
	shot := func(name string) {
		t.Helper()
		check(name)
		if screenshots == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(screenshots, "view-"+name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	do("index", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible("table.sets"))
	if s := text("table.sets"); !strings.Contains(s, "study") || !strings.Contains(s, "run.jsonl") {
		t.Fatalf("index lists no study or run:\n%s", s)
	}
	shot("index")
	do("study", chromedp.Click(`//a[contains(text(), "carlucci2015")]`), chromedp.WaitVisible("table.findings"))
	if s := text("table.findings"); !strings.Contains(s, "reproduced") && !strings.Contains(s, "inconclusive") {
		t.Errorf("findings table has no verdict:\n%.500s", s)
	}
	shot("study")
	do("group", chromedp.Click(`//table[@class="groups"]//a[starts-with(text(), "h3")]`), chromedp.WaitVisible("#ecdf svg"))
	shot("group")
	do("load", chromedp.Click(`a.load`), chromedp.WaitVisible("#waterfall svg"))
	if s := text("h1"); !strings.Contains(s, "PLT") {
		t.Errorf("load page title %q", s)
	}
	check("study load")
	do("shaped load", chromedp.Navigate(ts.URL+"/"), chromedp.Click(`//a[text()="testdata/shaped/shaped.jsonl"]`), chromedp.WaitVisible("table.groups"),
		chromedp.Click(`//table[@class="groups"]//a[starts-with(text(), "h3")]`), chromedp.WaitVisible("a.load"),
		chromedp.Click(`a.load`), chromedp.WaitVisible("#waterfall svg"), chromedp.WaitVisible(".filmstrip img"), chromedp.WaitVisible("table.emulator"))
	if s := text("ul.artifacts"); !strings.Contains(s, "load.har") || !strings.Contains(s, "pcapng") || !strings.Contains(s, "qlog") {
		t.Errorf("load page lacks HAR, qlog or pcapng downloads:\n%s", s)
	}
	shot("load")
	do("compare form", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible("#cmp-go"))
	a, b := option(t, ctx, "h2, page carlucci2015, link carlucci2015, cold"), option(t, ctx, "h3, page carlucci2015, link carlucci2015, cold")
	do("compare", chromedp.SetValue("#cmp-a", a), chromedp.SetValue("#cmp-b", b), chromedp.Click("#cmp-go"), chromedp.WaitVisible("section.pair"))
	if s := text("table.comparisons"); !strings.Contains(s, "B vs A") {
		t.Errorf("compare page has no comparison:\n%s", s)
	}
	shot("compare")

	// live: open the growing file's page, append its remaining lines, expect them within 2 s
	do("live", chromedp.Navigate(ts.URL+"/"), chromedp.Click(`//a[contains(text(), "live.jsonl")]`), chromedp.WaitVisible("#live"))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("live-loads").textContent !== "-"`)); err != nil {
		t.Fatal(err)
	}
	before := text("#live-loads")
	f := must(os.OpenFile(live, os.O_APPEND|os.O_WRONLY, 0))
	must(f.WriteString(strings.Join(lines[4:], "")))
	must(0, f.Close())
	written := time.Now()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("live-loads").textContent === "6"`, chromedp.WithPollingTimeout(2*time.Second))); err != nil {
		t.Fatalf("live page did not show the appended loads within 2 s (before: %s loads): %v", before, err)
	}
	t.Logf("live page showed the appended loads %v after the write (before: %s loads)", time.Since(written).Round(time.Millisecond), before)
	shot("live")
}

// option returns the value of the first compare option whose label contains s.
func option(t *testing.T, ctx context.Context, s string) string {
	js := fmt.Sprintf(`Array.from(document.querySelectorAll("#cmp-a option")).find(o => o.textContent.includes(%q)).value`, s)
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("option %q: %v", s, err)
	}
	return v
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
