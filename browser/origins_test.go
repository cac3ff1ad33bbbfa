package browser

import (
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
)

// TestOriginArgs: origin hosts map to the server's ip and the browser's port, before the final
// NOTFOUND rule, and h3 is forced on their port-443 origins as well as on the site hosts'.
func TestOriginArgs(t *testing.T) {
	for _, tc := range []struct {
		proto, ip string
		want      []string
	}{
		{"h3", "10.0.0.1", []string{"--host-resolver-rules=MAP plt.test 10.0.0.1, MAP p1.plt.test 10.0.0.1, MAP o1.pa.plt.test 10.0.0.1:8443, MAP o2.pa.plt.test 10.0.0.1:8443, MAP * ~NOTFOUND",
			"--origin-to-force-quic-on=plt.test:8443,p1.plt.test:8443,o1.pa.plt.test:443,o2.pa.plt.test:443"}},
		{"h1", "fd00::1", []string{"--host-resolver-rules=MAP plt.test fd00::1, MAP p1.plt.test fd00::1, MAP o1.pa.plt.test [fd00::1]:8443, MAP o2.pa.plt.test [fd00::1]:8443, MAP * ~NOTFOUND",
			"--disable-http2", "--disable-quic"}},
	} {
		c := defaultConfig()
		c.protocol, c.spki, c.port, c.ip = tc.proto, "pin", 8443, tc.ip
		for _, o := range []Option{WithSiteHosts("p1.plt.test"), WithOriginHosts("o1.pa.plt.test", "o2.pa.plt.test", "o1.pa.plt.test")} {
			o(&c)
		}
		if err := c.validate(); err != nil {
			t.Fatal(err)
		}
		args := c.args()
		for _, w := range tc.want {
			if !slices.Contains(args, w) {
				t.Errorf("%s: args lack %s:\n%q", tc.proto, w, args)
			}
		}
	}
	bad := []Option{WithOriginHosts("10.0.0.2"), WithOriginHosts("a b"), WithOriginHosts(DefaultHost)}
	for _, o := range bad {
		c := defaultConfig()
		c.spki, c.port = "pin", 8443
		o(&c)
		if err := c.validate(); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("origins %v: err %v", c.origins, err)
		}
	}
	c := defaultConfig()
	c.spki = "pin"
	WithOriginHosts("o1.pa.plt.test")(&c)
	if err := c.validate(); err == nil || !strings.Contains(err.Error(), "WithPort") {
		t.Errorf("origins without a port: %v", err)
	}
}

// TestVerifyOrigins: an object on another origin is found only on its host; one fetched from
// the page's host instead is a problem that names both.
func TestVerifyOrigins(t *testing.T) {
	m, tm := synthetic("h2")
	m.Objects[1].Origin = "o1.pa.plt.test"
	m.Objects[1].Type = pages.TypeCSS
	tm.Resources[1].Name = "https://o1.pa.plt.test/img/0002.jpg"
	if probs := verify("h2", tm.Nav, resources(tm), m, nil); len(probs) != 0 {
		t.Errorf("valid multi-origin load: %v", probs)
	}
	tm.Resources[1].Name = "https://plt.test:8443/img/0002.jpg"
	probs := verify("h2", tm.Nav, resources(tm), m, nil)
	want := "object /img/0002.jpg: fetched from https://plt.test:8443/img/0002.jpg, not its origin o1.pa.plt.test"
	if len(probs) != 1 || probs[0] != want {
		t.Errorf("problems %q, want %q", probs, want)
	}
	tm.Resources[1] = resTiming{Name: "https://o1.pa.plt.test/img/0002.jpg", NextHopProtocol: "h3", EncodedBodySize: 999}
	if probs := verify("h2", tm.Nav, resources(tm), m, nil); len(probs) != 2 {
		t.Errorf("wrong bytes and protocol on the origin: %q", probs)
	}
	var rec result.Record
	fill(&rec, tm)
	if findObject(rec.Resources, m.Objects[1]) != 1 || findObject(rec.Resources, pages.Object{Path: "/img/0002.jpg", Origin: "o2.pa.plt.test"}) != -1 {
		t.Error("findObject")
	}
}

// TestCollectWaitsForFetches: the load's timings are read once the page's fetch loader is done.
func TestCollectWaitsForFetches(t *testing.T) {
	if js := collectJS(true); !strings.Contains(js, "!(self."+pages.PendingVar+" > 0)") {
		t.Errorf("collectJS(true) does not wait for %s:\n%s", pages.PendingVar, js)
	}
}
