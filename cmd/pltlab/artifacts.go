package main

import (
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/pltlab/pltlab/artifacts"
)

// artifactFlags are --artifacts, --artifacts-kinds and --artifacts-for, shared by run, reproduce
// and load.
type artifactFlags struct {
	dir, kinds, filter string
	visual             bool
}

// artifactsHelp ends the Long help of the commands that take --artifacts.
const artifactsHelp = `

Artifacts (--artifacts DIR): per load, a folder DIR/EXPERIMENT/run-NNNN with load.har (HAR 1.2
from DevTools Network events), h3-server-ODCID.sqlog (quic-go qlog per QUIC connection) and
link.pcapng (both directions of the emulated link, entry and exit instants, drops commented,
TLS secrets embedded so Wireshark decrypts h1, h2 and h3 with no key file); per browser
process DIR/EXPERIMENT/netlog-PROTOCOL-PID-N.json (Chromium NetLog) with a load index
netlog-PROTOCOL-PID-N.json.loads.jsonl. Each record lists its files in "artifacts".
` + artifacts.SizeHelp + `

--visual records screencast frames during each load and adds "visual" to the record:
SpeedIndex, first visual change, visually complete (histogram completeness as WebPageTest's
visualmetrics.py) and a filmstrip of up to 12 thumbnails (~40 KB a record); the HTML report
shows the median load's filmstrip, and 'pltlab report --metric speed_index_ms' its statistics.`

// add registers the flags (and --visual); kinds is the default list.
func (a *artifactFlags) add(fl *pflag.FlagSet, kinds string) {
	a.addArtifacts(fl, kinds)
	fl.BoolVar(&a.visual, "visual", false, "measure visual metrics from a DevTools screencast: SpeedIndex, visually complete, filmstrip (record field visual)")
}

// addArtifacts registers --artifacts, --artifacts-kinds and --artifacts-for only.
func (a *artifactFlags) addArtifacts(fl *pflag.FlagSet, kinds string) {
	fl.StringVar(&a.dir, "artifacts", "", "write per-load evidence files under this directory (off by default)")
	fl.StringVar(&a.kinds, "artifacts-kinds", kinds, "which artifacts: comma-separated har,netlog,qlog,pcap or all")
	fl.StringVar(&a.filter, "artifacts-for", string(artifacts.KeepAll), "which loads keep them: invalid, slowest (per cell so far) or all")
}

// config checks the flags (usage errors) and creates the directory; allowed limits the kinds.
func (a *artifactFlags) config(allowed ...artifacts.Kind) (artifacts.Config, error) {
	if a.dir == "" {
		return artifacts.Config{}, nil
	}
	kinds, err := artifacts.ParseKinds(a.kinds)
	if err != nil {
		return artifacts.Config{}, usagef("bad --artifacts-kinds: %v", err)
	}
	for _, k := range kinds {
		if len(allowed) > 0 && !slices.Contains(allowed, k) {
			return artifacts.Config{}, usagef("bad --artifacts-kinds: %s is not available here; accepted %s", k, kindList(allowed))
		}
	}
	filter, err := artifacts.ParseFilter(a.filter)
	if err != nil {
		return artifacts.Config{}, usagef("bad --artifacts-for: %v", err)
	}
	if err := artifacts.CheckWritable(a.dir); err != nil {
		return artifacts.Config{}, usagef("bad --artifacts: %v (accepted a folder pltlab can write into)", err)
	}
	return artifacts.Config{Dir: a.dir, Kinds: kinds, For: filter}, nil
}

// kindList joins kinds with commas.
func kindList(kinds []artifacts.Kind) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
