package browser

import (
	"context"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

func TestPinAndManifest(t *testing.T) {
	dir, m := genPage(t, "2x2KB")
	srv := startStallServer(t, dir, false)
	addr := srv.srv.Listener.Addr().String()
	ctx := context.Background()
	pin, err := PinFromServer(ctx, addr, DefaultHost)
	if err != nil || pin != srv.SPKI {
		t.Fatalf("PinFromServer = %q, %v; want %q", pin, err, srv.SPKI)
	}
	got, err := FetchManifest(ctx, addr, DefaultHost, pin)
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec != m.Spec || len(got.Objects) != 2 || got.Objects[1] != m.Objects[1] || got.Index != "/index.html" {
		t.Errorf("manifest = %+v, want %+v", got, m)
	}
	if _, err := FetchManifest(ctx, addr, DefaultHost, "d3Jvbmc="); err == nil || !strings.Contains(err.Error(), "pin") {
		t.Errorf("FetchManifest with a wrong pin = %v, want a pin error", err)
	}
	if _, err := PinFromServer(ctx, "127.0.0.1:1", DefaultHost); err == nil {
		t.Errorf("PinFromServer on a closed port: no error")
	}
}

func TestCheckTarget(t *testing.T) {
	b := &Browser{cfg: defaultConfig()}
	b.cfg.protocol, b.cfg.port = "h3", 8443
	m, _ := synthetic("h3")
	tests := []struct {
		name string
		t    Target
		want string // error substring; "" = accepted
	}{
		{"ok", Target{URL: "https://plt.test:8443/index.html", Manifest: m}, ""},
		{"other protocol", Target{URL: "https://plt.test:8443/index.html", Protocol: "h2", Manifest: m}, "one Browser per protocol"},
		{"no manifest", Target{URL: "https://plt.test:8443/index.html"}, "no manifest"},
		{"bad mode", Target{URL: "https://plt.test:8443/index.html", Manifest: m, Mode: "hot"}, `bad mode "hot"`},
		{"http", Target{URL: "http://plt.test:8443/index.html", Manifest: m}, "https URLs only"},
		{"other host", Target{URL: "https://127.0.0.1:8443/index.html", Manifest: m}, "host must be one of plt.test"},
		{"other port", Target{URL: "https://plt.test:9443/index.html", Manifest: m}, "port must be 8443"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := tc.t
			err := b.checkTarget(&tg)
			if tc.want == "" {
				if err != nil || tg.Protocol != "h3" || tg.Mode != result.Cold || tg.Timeout != DefaultTimeout {
					t.Fatalf("checkTarget = %v, target %+v; want defaults filled", err, tg)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("checkTarget = %v, want %q", err, tc.want)
			}
		})
	}
}
