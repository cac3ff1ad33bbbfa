//go:build linux

package browser

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/server"
)

// mixSpec is a page of every object type on the page's origin and two others: fonts of sizes
// that are not multiples of 4, fetch chains of depth 3 and 2, iframes on both kinds of origin,
// empty and holding objects of their own.
const mixSpec = "1x20KB:css,1x3KB:css@o1,1x10KB:js,1x5KB:js-body@o1,1x4KB:js-async@o2,1x4KB:js-defer," +
	"1x30KB:font,1x20001B:font@o1,6x10KB,2x10KB@o2,2x2KB:fetch@o2,3x1KB:fetch-chain@o1,2x1KB:fetch-chain," +
	"1x8KB:iframe@o1,1x3KB:iframe,2x3KB:iframe@o2(2x5KB,1x1KB:css,1x1KB:js-defer),1x2KB:iframe(1x10KB)"

// TestIntegrationObjectMix loads a mixed-type page on three origins from the real server (one
// certificate naming every host) with one browser per protocol, the origins reached through the
// host resolver rules (WithOriginHosts): each load is valid (the page and every object on the
// requested protocol, on its own origin, with every byte, those iframes hold too, their times on
// the page's timeline, within its PLT) and, over h2, the page shows that its own objects are what
// their types say: every script ran, every stylesheet applied, every font was
// accepted by Chromium's font sanitizer (FontFace status "loaded").
func TestIntegrationObjectMix(t *testing.T) {
	chrome := needChromium(t)
	dir, m := genPage(t, mixSpec)
	if len(m.OriginHosts()) != 2 {
		t.Fatalf("origins %v", m.OriginHosts())
	}
	srv, ns := startServer(t, dir)
	info := srv.Info()
	for _, p := range []string{"h1", "h2", "h3"} {
		t.Run(p, func(t *testing.T) {
			pageURL := info.URL(p)
			u, err := url.Parse(pageURL)
			if err != nil {
				t.Fatal(err)
			}
			port, _ := strconv.Atoi(u.Port())
			b, err := Launch(context.Background(), WithChrome(chrome), WithNetNS(ns), WithProtocol(p), WithSPKI(info.SPKI),
				WithResolve(info.Host, "127.0.0.1"), WithPort(port), WithOriginHosts(info.Sites[0].Origins...))
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			since := time.Now()
			rec := mustLoad(t, b, Target{URL: pageURL, Manifest: m, Timeout: 30 * time.Second})
			checkValid(t, rec, p, m.Objects)
			framed := 0
			for _, o := range m.Objects {
				i := findObject(rec.Resources, o)
				if i < 0 {
					t.Errorf("object %s not found on its origin %q", o.Path, o.Origin)
				}
				if o.Frame != "" && i >= 0 {
					framed++
					if r := rec.Resources[i]; r.StartMs <= 0 || r.EndMs < r.StartMs || r.EndMs > rec.PLTMs {
						t.Errorf("object %s of iframe %s: %.1f-%.1f ms, PLT %.1f ms", o.Path, o.Frame, r.StartMs, r.EndMs, rec.PLTMs)
					}
				}
			}
			if framed != 2*4+1 {
				t.Errorf("%d objects held by iframes in the record, want 9", framed)
			}
			checkHostConns(t, srv.HostConns(since), p, append([]string{info.Host}, info.Sites[0].Origins...))
			if p == "h2" {
				checkPageSaw(t, b, pageURL, m)
			}
		})
	}
}

// pageSaw is what the page itself reports after its load: the scripts that ran, each font's
// status and each stylesheet's custom property.
type pageSaw struct {
	Ran   []string          `json:"ran"`
	Fonts map[string]string `json:"fonts"`
	Props map[string]string `json:"props"`
}

// checkPageSaw loads pageURL in a tab of its own and checks what the page reports.
func checkPageSaw(t *testing.T, b *Browser, pageURL string, m *pages.Manifest) {
	t.Helper()
	tab, cancel := chromedp.NewContext(b.proc.ctx, chromedp.WithNewBrowserContext())
	defer cancel()
	ctx, cancelT := context.WithTimeout(tab, 30*time.Second)
	defer cancelT()
	var props []string
	for _, o := range m.Objects {
		if o.Type == pages.TypeCSS && o.Frame == "" {
			props = append(props, strconv.Quote("--pltlab-"+strings.TrimSuffix(o.Path[len("/css/"):], ".css")))
		}
	}
	js := `new Promise(resolve => {
  const done = () => {
    const n = performance.getEntriesByType('navigation')[0];
    if (!(n && n.loadEventEnd > 0) || self.` + pages.PendingVar + ` > 0) { setTimeout(done, 10); return; }
    document.fonts.ready.then(() => {
      const fonts = {};
      document.fonts.forEach(f => { fonts[f.family.replace(/"/g, '')] = f.status; });
      const cs = getComputedStyle(document.documentElement), props = {};
      for (const p of [` + strings.Join(props, ",") + `]) props[p] = cs.getPropertyValue(p).trim();
      resolve({ran: self.pltlabRan || [], fonts, props});
    });
  };
  done();
})`
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatal(err)
	}
	saw, err := chromedp.Run(ctx, chromedp.Evaluate[pageSaw](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the page saw %+v", saw)
	for _, o := range m.Objects {
		if o.Frame != "" {
			continue // runs in its iframe; the load check saw it arrive whole there
		}
		switch o.Type {
		case pages.TypeJS, pages.TypeJSBody, pages.TypeJSAsync, pages.TypeJSDefer:
			if !slices.Contains(saw.Ran, o.Path) {
				t.Errorf("script %s (%s) did not run", o.Path, o.Type)
			}
		case pages.TypeFont:
			fam := "pltlab-" + strings.TrimSuffix(o.Path[len("/font/"):], ".ttf")
			if saw.Fonts[fam] != "loaded" {
				t.Errorf("font %s: status %q, want loaded", o.Path, saw.Fonts[fam])
			}
		case pages.TypeCSS:
			p := "--pltlab-" + strings.TrimSuffix(o.Path[len("/css/"):], ".css")
			if saw.Props[p] != "1" {
				t.Errorf("stylesheet %s: %s = %q, want 1", o.Path, p, saw.Props[p])
			}
		}
	}
}

// checkHostConns checks that every host of the page was served on connections opened for the
// load, never shared over h1, and logs how h2 and h3 pooled them (coalescing is Chromium's choice).
func checkHostConns(t *testing.T, hc []server.HostConns, p string, hosts []string) {
	t.Helper()
	t.Logf("%s connections per host: %+v", p, hc)
	for _, h := range hosts {
		i := slices.IndexFunc(hc, func(c server.HostConns) bool { return c.Host == h })
		switch {
		case i < 0:
			t.Errorf("no connection served %s", h)
		case p == "h1" && hc[i].Shared > 0:
			t.Errorf("h1 connection shared by hosts: %+v", hc[i])
		}
	}
}
