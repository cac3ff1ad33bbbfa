package experiment

import (
	"fmt"
	"math"

	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/server"
)

// The footprint model: the peak memory of one process that makes a configuration's loads, as the
// proportional set size (PSS) summed over pltlab and every Chromium process it starts, measured
// with scripts/footprint.py on the development machine (BENCHMARKS.md, "Footprint"):
//   - pltlab alone peaked at 331 MiB with its server holding 128 MiB of page objects
//     (FootprintBaseMiB is the rest);
//   - one browser's peak grows with the page it loads: about 217 MiB for carlucci2015's 30 x
//     10 KB, 636 MiB for 200 x 1 MB, 1470 MiB for 100 x 10 MB (1 GB, the largest page pltlab
//     makes). BrowserBaseMiB + BrowserObjectMiB per object + BrowserPageFactor x the page's MiB
//     passes through the last two and gives 230 MiB for the first.
//
// The kakhki2017 full-grid slice (14 of its pages on one link, h2 and h3 cold and warm) peaked
// at 1519.5 MiB with 2 browsers (the model: 1598 MiB); the same slice with one browser per page
// and protocol (8436f4a) peaked at 4909.8 MiB with 28 browsers.
const (
	// FootprintBaseMiB is pltlab itself at its peak without the server's held page objects: the
	// runner, the link emulator with its queues, the server and the records, in MiB.
	FootprintBaseMiB = 205
	// BrowserBaseMiB is one headless Chromium (browser, GPU, network and renderer processes)
	// loading a small page, in MiB.
	BrowserBaseMiB = 200
	// BrowserObjectMiB is what each object of the page adds to a browser's peak, in MiB.
	BrowserObjectMiB = 1.0
	// BrowserPageFactor is what each MiB of the page adds to a browser's peak, in MiB.
	BrowserPageFactor = 1.23
)

// BrowserPeakMiB returns the modelled peak memory of one browser loading page p, in MiB:
// BrowserBaseMiB + BrowserObjectMiB x objects + BrowserPageFactor x the page's MiB, rounded up.
func BrowserPeakMiB(p pages.Spec) int {
	mib := float64(p.TotalBytes()) / (1 << 20)
	return int(math.Ceil(BrowserBaseMiB + BrowserObjectMiB*float64(p.Objects()) + BrowserPageFactor*mib))
}

// Footprint is a configuration's memory model at one link: how many browsers are alive at once,
// what each may reach, what the server holds, and the peak that follows.
type Footprint struct {
	// Browsers is the Chromium instances alive at once on a link: one per protocol the arms force
	// (the runner's one browser per protocol; warm and cold arms of a protocol share it).
	Browsers int
	// BrowserMiB is the peak of one browser: BrowserPeakMiB of the configuration's heaviest page
	// (each browser loads every page, one at a time).
	BrowserMiB int
	// ServerMiB is the page-object bytes the server holds in memory, in MiB: every object of at
	// most server.MemObjectMax bytes of every page, up to server.MemoryBudget.
	ServerMiB int
	// MiB is the modelled peak: FootprintBaseMiB + Browsers x BrowserMiB + ServerMiB.
	MiB int
}

// String says the footprint in one line: "1599 MiB (2 browsers x 633 MiB, 128 MiB of page
// objects held by the server, 205 MiB of pltlab)".
func (f Footprint) String() string {
	return fmt.Sprintf("%d MiB (%d browsers x %d MiB, %d MiB of page objects held by the server, %d MiB of pltlab)",
		f.MiB, f.Browsers, f.BrowserMiB, f.ServerMiB, FootprintBaseMiB)
}

// PlanFootprint returns c's footprint: its links run one after another in one process, and every
// link's server serves all of c's pages with one browser per protocol, so every link has the
// same footprint. It fails on a page spec that does not parse.
func PlanFootprint(c Config) (Footprint, error) {
	c = c.withDefaults()
	protos := map[string]bool{}
	for _, a := range c.Arms {
		protos[a.Protocol] = true
	}
	var held int64
	f := Footprint{Browsers: len(protos)}
	for _, s := range c.Pages {
		p, err := c.PageSpec(s)
		if err != nil {
			return Footprint{}, fmt.Errorf("bad page %q: %w", s, err)
		}
		f.BrowserMiB = max(f.BrowserMiB, BrowserPeakMiB(p))
		for _, it := range p.Items {
			if it.Size <= server.MemObjectMax {
				held += int64(it.Count) * it.Size
			}
		}
	}
	held = min(held, server.MemoryBudget)
	f.ServerMiB = int((held + 1<<20 - 1) >> 20)
	f.MiB = FootprintBaseMiB + f.Browsers*f.BrowserMiB + f.ServerMiB
	return f, nil
}
