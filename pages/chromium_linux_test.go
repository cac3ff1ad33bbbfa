package pages

import (
	"context"
	"encoding/json"
	"github.com/pltlab/pltlab/internal/testenv"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// checkScript runs after the page's load event: it fully decodes every image (img.decode()
// rejects undecodable data) and posts what it found to /report.
const checkScript = `<script>
addEventListener('load', async () => {
  const res = [];
  for (const im of document.images) {
    let ok = im.complete && im.naturalWidth > 0;
    try { await im.decode(); } catch (e) { ok = false; }
    res.push({src: new URL(im.src).pathname, w: im.naturalWidth, h: im.naturalHeight, ok: ok});
  }
  fetch('/report', {method: 'POST', body: JSON.stringify(res)});
});
</script>
`

// imageReport is what checkScript found about one image.
type imageReport struct {
	Src string `json:"src"`
	W   int    `json:"w"`
	H   int    `json:"h"`
	OK  bool   `json:"ok"`
}

// TestIntegrationPagesChromium loads a generated page (boundary sizes included) in headless
// Chromium over loopback HTTP and checks that every image decodes with the manifest's dimensions.
func TestIntegrationPagesChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Chromium: skipped with -short")
	}
	testenv.Require(t, "chromium")
	chrome, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "page")
	spec := mustParse(t, "2x398B,1x399B,1x400B,1x401B,1x402B,3x5KB,1x65934B,1x70874B,1x200KB,1x1MB,1x5MB")
	m, err := Generate(dir, spec, 3)
	if err != nil {
		t.Fatal(err)
	}
	reports := make(chan []imageReport, 1)
	srv := httptest.NewServer(checkHandler(t, dir, reports))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	stop := startChromium(t, ctx, chrome, srv.URL+"/check.html")
	defer stop()
	select {
	case got := <-reports:
		compareReports(t, m, got)
	case <-ctx.Done():
		t.Fatal("no report from Chromium within 90 s")
	}
}

// checkHandler serves dir, /check.html (index.html plus checkScript) and takes POST /report.
func checkHandler(t *testing.T, dir string, reports chan<- []imageReport) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir(dir)))
	mux.HandleFunc("/check.html", func(w http.ResponseWriter, r *http.Request) {
		page, err := os.ReadFile(filepath.Join(dir, "index.html"))
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, strings.Replace(string(page), "</body>", checkScript+"</body>", 1))
	})
	mux.HandleFunc("POST /report", func(w http.ResponseWriter, r *http.Request) {
		var got []imageReport
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Errorf("bad report: %v", err)
		}
		select {
		case reports <- got:
		default:
		}
	})
	return mux
}

// startChromium runs headless Chromium on url in its own process group and returns a function
// that kills the group and waits.
func startChromium(t *testing.T, ctx context.Context, chrome, url string) func() {
	cmd := exec.CommandContext(ctx, chrome, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--no-first-run", "--user-data-dir="+t.TempDir(), url)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}
}

// compareReports checks Chromium's findings against the manifest.
func compareReports(t *testing.T, m *Manifest, got []imageReport) {
	t.Helper()
	if len(got) != len(m.Objects) {
		t.Fatalf("Chromium saw %d images, page has %d", len(got), len(m.Objects))
	}
	for i, o := range m.Objects {
		want := imageReport{Src: o.Path, W: o.Width, H: o.Height, OK: true}
		if g := got[i]; g != want {
			t.Errorf("object %d (%d B): Chromium %+v, want %+v", i, o.Size, g, want)
		}
	}
	t.Logf("Chromium decoded all %d images", len(got))
}
