// Package artifacts names, chooses and keeps the per-load evidence files: HAR, NetLog, qlog, pcapng.
//
// A load's files go to one folder, DIR/EXPERIMENT/run-NNNN, listed in the load's record
// (result.Record.Artifacts, paths relative to DIR). A NetLog belongs to a browser process, not a
// load, so it lives in DIR/EXPERIMENT and every load it covers lists it. The package imports
// nothing of ours.
package artifacts

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Kind is one kind of artifact.
type Kind string

// Kinds of artifact.
const (
	// HAR is an HTTP Archive 1.2 of the load, built from DevTools Network events (load.har).
	HAR Kind = "har"
	// NetLog is Chromium's NetLog (--log-net-log), one per browser process, with a load index.
	NetLog Kind = "netlog"
	// Qlog is one quic-go qlog (JSON-SEQ) per server QUIC connection (h3 loads only).
	Qlog Kind = "qlog"
	// Pcap is a pcapng of both directions of the emulated link with the TLS secrets embedded
	// (emulated links only: shaper emu).
	Pcap Kind = "pcap"
)

// All is every kind, in the order of ParseKinds' error messages.
var All = []Kind{HAR, NetLog, Qlog, Pcap}

// Filter says which loads keep their artifacts.
type Filter string

// Filters.
const (
	// KeepAll keeps every load's artifacts (warm-ups included).
	KeepAll Filter = "all"
	// KeepInvalid keeps only invalid or timed-out loads' artifacts.
	KeepInvalid Filter = "invalid"
	// KeepSlowest keeps invalid loads and every load that is the slowest valid load of its
	// (page, link, protocol, mode) cell so far; at the end the slowest load of every cell is
	// among those kept (with a random run order, about ln(runs) loads per cell are kept).
	KeepSlowest Filter = "slowest"
)

// LoadFileHAR, LoadFilePcap are the file names of a load's HAR and capture in its folder.
const (
	LoadFileHAR  = "load.har"
	LoadFilePcap = "link.pcapng"
)

// SizeHelp estimates the size per load of each kind, for the CLI's help: measured on
// carlucci2015 (30 x 10 KB JPEGs) over the carlucci2015 link (see shaping/BENCHMARKS.md,
// "Capture").
const SizeHelp = `Size per load, measured on carlucci2015 (30 JPEGs, 300 KB) over the carlucci2015
link: har ~90 KB; pcap ~0.4 MB (each packet once, drops included); qlog ~0.34 MB
(h3 loads only); netlog ~0.6 MB per load in one file per browser (Default mode). All
scale with the page's bytes: use --artifacts-for to keep only the loads you will open.`

// Config chooses what to keep. The zero value keeps nothing.
type Config struct {
	// Dir is the root directory ("" = no artifacts).
	Dir string
	// Kinds are the kinds to write.
	Kinds []Kind
	// For filters the loads that keep them (KeepAll when "").
	For Filter
}

// Enabled reports whether any artifact is to be written.
func (c Config) Enabled() bool { return c.Dir != "" && len(c.Kinds) > 0 }

// Has reports whether kind k is to be written.
func (c Config) Has(k Kind) bool { return c.Enabled() && slices.Contains(c.Kinds, k) }

// ParseKinds parses a comma-separated list such as "har,pcap"; "all" means every kind. Errors
// name the bad value and what is accepted.
func ParseKinds(s string) ([]Kind, error) {
	if strings.TrimSpace(s) == "all" {
		return slices.Clone(All), nil
	}
	var out []Kind
	for _, f := range strings.Split(s, ",") {
		k := Kind(strings.TrimSpace(f))
		if !slices.Contains(All, k) {
			return nil, fmt.Errorf("bad artifact kind %q: accepted %s or all", k, joinKinds(All))
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// ParseFilter parses "all", "invalid" or "slowest".
func ParseFilter(s string) (Filter, error) {
	switch f := Filter(s); f {
	case KeepAll, KeepInvalid, KeepSlowest:
		return f, nil
	}
	return "", fmt.Errorf("bad artifacts filter %q: accepted invalid, slowest, all", s)
}

func joinKinds(ks []Kind) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ",")
}

// ExperimentDir returns the folder of an experiment's artifacts: Dir/NAME with NAME made safe
// for a file name (anything but letters, digits, '.', '-' and '_' becomes '_').
func (c Config) ExperimentDir(experiment string) string {
	return filepath.Join(c.Dir, safeName(experiment))
}

// LoadDir returns the folder of one load: Dir/EXPERIMENT/run-NNNN (run zero-padded to 4 digits).
func (c Config) LoadDir(experiment string, run int) string {
	return filepath.Join(c.ExperimentDir(experiment), fmt.Sprintf("run-%04d", run))
}

func safeName(s string) string {
	if s == "" {
		return "unnamed"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// Rel returns the slash-separated paths of files (absolute or relative to the working
// directory) relative to c.Dir, sorted, skipping files that do not exist.
func (c Config) Rel(files ...string) []string {
	var out []string
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			continue
		}
		r, err := filepath.Rel(c.Dir, f)
		if err != nil {
			continue
		}
		out = append(out, filepath.ToSlash(r))
	}
	slices.Sort(out)
	return out
}

// List returns every regular file under dir, as Rel would give them.
func (c Config) List(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list artifacts in %s: %w", dir, err)
	}
	return c.Rel(files...), nil
}

// Keeper decides, load by load, whether a load's artifacts are kept (Config.For).
type Keeper struct {
	filter  Filter
	slowest map[string]float64
}

// NewKeeper returns a Keeper for filter (KeepAll when "").
func NewKeeper(filter Filter) *Keeper {
	filter = cmp.Or(filter, KeepAll)
	return &Keeper{filter: filter, slowest: map[string]float64{}}
}

// Keep reports whether a load keeps its artifacts: cell identifies its (page, link, protocol,
// mode) cell, valid is the record's Valid, plt its PLT in ms. Warm-ups are judged like the others.
func (k *Keeper) Keep(cell string, valid bool, plt float64) bool {
	switch k.filter {
	case KeepAll:
		return true
	case KeepInvalid:
		return !valid
	}
	if !valid {
		return true
	}
	if prev, ok := k.slowest[cell]; ok && plt < prev {
		return false
	}
	k.slowest[cell] = plt
	return true
}
