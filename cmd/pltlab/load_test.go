package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/device"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
)

func TestPlanLoad(t *testing.T) {
	ok := loadFlags{protocol: "h2", timeout: time.Minute, mode: "cold", device: "desktop"}
	tests := []struct {
		name    string
		url     string
		change  func(*loadFlags)
		want    loadTarget
		wantErr string // substring of a usage error
	}{
		{name: "hostname", url: "https://plt.test:8443/index.html",
			want: loadTarget{url: "https://plt.test:8443/index.html", host: "plt.test", ip: "127.0.0.1", port: 8443, addr: "127.0.0.1:8443"}},
		{name: "bare IP becomes plt.test", url: "https://127.0.0.2:9000/index.html",
			want: loadTarget{url: "https://plt.test:9000/index.html", host: "plt.test", ip: "127.0.0.2", port: 9000, addr: "127.0.0.2:9000"}},
		{name: "resolve", url: "https://example.test/index.html", change: func(f *loadFlags) { f.resolve = "example.test:100.64.0.1" },
			want: loadTarget{url: "https://example.test:443/index.html", host: "example.test", ip: "100.64.0.1", port: 443, addr: "100.64.0.1:443"}},
		{name: "resolve IPv6", url: "https://[::1]:8443/index.html", change: func(f *loadFlags) { f.resolve = "plt.test:::1" },
			want: loadTarget{url: "https://plt.test:8443/index.html", host: "plt.test", ip: "::1", port: 8443, addr: "[::1]:8443"}},
		{name: "no protocol", url: "https://plt.test/", change: func(f *loadFlags) { f.protocol = "" }, wantErr: "--protocol is required"},
		{name: "bad protocol", url: "https://plt.test/", change: func(f *loadFlags) { f.protocol = "quic" }, wantErr: `bad --protocol "quic": accepted h1, h2, h3`},
		{name: "http URL", url: "http://plt.test/", wantErr: "accepted https://"},
		{name: "bad mode", url: "https://plt.test/", change: func(f *loadFlags) { f.mode = "hot" }, wantErr: `bad --mode "hot"`},
		{name: "warm", url: "https://plt.test/", change: func(f *loadFlags) { f.mode = "warm" }, wantErr: "pltlab run --mode warm"},
		{name: "bad timeout", url: "https://plt.test/", change: func(f *loadFlags) { f.timeout = 0 }, wantErr: "bad --timeout"},
		{name: "bad device", url: "https://plt.test/", change: func(f *loadFlags) { f.device = "pixel" }, wantErr: `bad device "pixel": accepted desktop`},
		{name: "spki", url: "https://plt.test:8443/index.html", change: func(f *loadFlags) { f.spki = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" },
			want: loadTarget{url: "https://plt.test:8443/index.html", host: "plt.test", ip: "127.0.0.1", port: 8443, addr: "127.0.0.1:8443"}},
		{name: "bad spki", url: "https://plt.test/", change: func(f *loadFlags) { f.spki = "!!!" }, wantErr: `bad --spki "!!!": accepted the base64 SHA-256`},
		{name: "short spki", url: "https://plt.test/", change: func(f *loadFlags) { f.spki = "AAAA" }, wantErr: `bad --spki "AAAA"`},
		{name: "bad resolve", url: "https://plt.test/", change: func(f *loadFlags) { f.resolve = "plt.test" }, wantErr: "bad --resolve"},
		{name: "resolve to a name", url: "https://plt.test/", change: func(f *loadFlags) { f.resolve = "plt.test:localhost" }, wantErr: "bad --resolve"},
		{name: "resolve other host", url: "https://plt.test/", change: func(f *loadFlags) { f.resolve = "other.test:127.0.0.1" }, wantErr: "the URL's host is plt.test"},
		{name: "resolve other IP", url: "https://127.0.0.1/", change: func(f *loadFlags) { f.resolve = "plt.test:127.0.0.9" }, wantErr: "but the URL names 127.0.0.1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := ok
			if tc.change != nil {
				tc.change(&f)
			}
			got, err := planLoad(tc.url, f)
			if tc.wantErr != "" {
				var ue *usageError
				if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("planLoad = %v, want a usage error with %q", err, tc.wantErr)
				}
				return
			}
			want := tc.want
			if want.dev.Name == "" {
				want.dev = device.Desktop
			}
			if err != nil || got != want {
				t.Fatalf("planLoad = %+v, %v; want %+v", got, err, want)
			}
		})
	}
}

// TestIntegrationLoadCmd runs 'pltlab load' against an in-process server for each protocol,
// then against the wrong listener (an invalid load: exit 1).
func TestIntegrationLoadCmd(t *testing.T) {
	if testing.Short() {
		t.Skip("real Chromium test: skipped with -short")
	}
	if _, err := browser.FindChromium(""); err != nil && os.Getenv("CI") == "" {
		t.Skipf("no Chromium: %v", err)
	}
	spec, err := pages.ParseSpec("3x10KB")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "page")
	if _, err := pages.Generate(dir, spec, 1); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(dir, server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	info := srv.Info()
	for _, p := range []string{"h1", "h2", "h3"} {
		code, out, errOut := runCLI(t, "load", info.URL(p), "--protocol", p, "--timeout", "30s")
		if code == 1 && strings.Contains(errOut, "ERR_NETWORK_CHANGED") {
			// Other processes on this machine changed the root namespace's interfaces.
			code, out, errOut = runCLI(t, "load", info.URL(p), "--protocol", p, "--timeout", "30s")
		}
		if code != 0 || !strings.Contains(errOut, "--spki "+info.SPKI) {
			t.Fatalf("%s: exit %d, stderr %q", p, code, errOut)
		}
		rec, err := result.NewReader(strings.NewReader(out), "stdout").Next()
		if err != nil || !rec.Valid || rec.ObservedProtocol != p || len(rec.Resources) != 3 {
			t.Fatalf("%s: record %+v, %v", p, rec, err)
		}
	}
	// --artifacts-for invalid keeps nothing of a valid load (it was accepted and ignored), --artifacts-for
	// all keeps the HAR and the NetLog.
	for _, filter := range []string{"invalid", "all"} {
		art := t.TempDir()
		code, out, errOut := runCLI(t, "load", info.URL("h2"), "--protocol", "h2", "--spki", info.SPKI, "--artifacts", art, "--artifacts-for", filter)
		rec, err := result.NewReader(strings.NewReader(out), "stdout").Next()
		if code != 0 || err != nil || !rec.Valid {
			t.Fatalf("--artifacts-for %s: exit %d, %v, stderr %q", filter, code, err, errOut)
		}
		var left []string
		filepath.WalkDir(art, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				left = append(left, p)
			}
			return nil
		})
		if filter == "invalid" && (len(rec.Artifacts) != 0 || len(left) != 0) {
			t.Errorf("--artifacts-for invalid on a valid load: listed %v, left %v", rec.Artifacts, left)
		}
		if filter == "all" && (len(rec.Artifacts) != 3 || len(left) != 3) {
			t.Errorf("--artifacts-for all: listed %v, left %v; want the HAR, the NetLog and its index", rec.Artifacts, left)
		}
	}
	h2port := strings.TrimPrefix(info.Addr("h2"), "127.0.0.1:")
	// h1 asked of the h2 listener is refused before Chromium runs, naming what is served there
	// (not Chromium's ERR_SOCKET_NOT_CONNECTED).
	code, out, errOut := runCLI(t, "load", "https://127.0.0.1:"+h2port+"/index.html", "--protocol", "h1", "--spki", info.SPKI)
	if code != 2 || out != "" || !strings.Contains(errOut, "bad port "+h2port+" for h1") || !strings.Contains(errOut, "it serves h2") {
		t.Fatalf("h1 on the h2 listener: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
