package main

import (
	"github.com/pltlab/pltlab/internal/testenv"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/pages"
)

// TestIntegrationRunObjectMix runs a mixed-type page on three origins beside an image page
// through an emulated link over h1, h2 and h3: every load is valid (each object on its origin,
// protocol and bytes checked), the mixed page's records count the connections per host (never
// shared over h1) and the image page's records carry none.
func TestIntegrationRunObjectMix(t *testing.T) {
	needRootAndChromium(t)
	const mix = "1x10KB:css,1x5KB:js@o1,1x2KB:js-defer,1x20001B:font@o2,4x10KB,2x10KB@o2,2x1KB:fetch-chain@o1,1x3KB:iframe@o1,1x2KB:iframe@o2(2x3KB,1x1KB:js)"
	sp, err := pages.ParseSpec(mix)
	if err != nil {
		t.Fatal(err)
	}
	id := pages.PageID(sp.String(), pages.DefaultSeed)
	hosts := []string{"plt.test", pages.OriginHost("o1", id), pages.OriginHost("o2", id)}
	out := filepath.Join(t.TempDir(), "mix.jsonl")
	code, stdout, errOut := runCLI(t, "run", "--page", mix, "--page", "3x5KB", "--link", "rate=20mbit,rtt=10ms",
		"--protocols", "h1,h2,h3", "--runs", "1", "--warmup", "0", "--no-link-check", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errOut)
	}
	loads := 0
	var lost testenv.Lost
	for _, r := range readAll(t, out) {
		if !r.IsLoad() {
			continue
		}
		loads++
		if !r.Valid && !lost.Excused(t, r) {
			t.Errorf("%s %s invalid: %s", r.Page.Spec, r.Protocol, r.InvalidReason)
		}
		if r.Page.Spec != mix {
			if r.Origins != nil || r.Coalesced {
				t.Errorf("image page %s: origins %+v", r.Protocol, r.Origins)
			}
			continue
		}
		var got []string
		for _, o := range r.Origins {
			got = append(got, o.Host)
			if o.Conns < 1 || r.Protocol == "h1" && o.Shared > 0 {
				t.Errorf("%s: %+v", r.Protocol, o)
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(hosts))
		if !slices.Equal(got, want) || r.Protocol == "h1" && r.Coalesced {
			t.Errorf("%s: origins %+v coalesced %v, want hosts %s", r.Protocol, r.Origins, r.Coalesced, strings.Join(want, ", "))
		}
		t.Logf("%s: plt %.1f ms, origins %+v, coalesced %v", r.Protocol, r.PLTMs, r.Origins, r.Coalesced)
	}
	lost.Check(t, loads)
	if loads != 6 {
		t.Errorf("%d loads, want 6", loads)
	}
}
