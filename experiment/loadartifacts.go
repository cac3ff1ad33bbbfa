package experiment

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/pltlab/pltlab/artifacts"
	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
)

// LoadArtifacts adapts the artifacts lifecycle (artifacts.Recorder) to page loads: it adds the
// browser's options, the HAR path and label of each load and the NetLog of the browser that made
// it, and decides by the keep rule (--artifacts-for) which loads keep their files. The runner's
// loads and 'pltlab load' both go through it. A nil *LoadArtifacts (no artifact wanted) does nothing.
type LoadArtifacts struct {
	rec *artifacts.Recorder
}

// NewLoadArtifacts returns nil when a wants no artifact; otherwise it creates the experiment's folder
// (artifacts.NewRecorder: a.Dir/EXPERIMENT). keeper shares the keep rule's state across the
// experiment's loads (nil: a fresh one).
func NewLoadArtifacts(a artifacts.Config, experiment string, keeper *artifacts.Keeper, log *slog.Logger) (*LoadArtifacts, error) {
	r, err := artifacts.NewRecorder(a, experiment, keeper, log)
	if err != nil || r == nil {
		return nil, err
	}
	return &LoadArtifacts{rec: r}, nil
}

// newEvidence is NewLoadArtifacts for an experiment's configuration.
func newEvidence(c Config, keeper *artifacts.Keeper) (*LoadArtifacts, error) {
	return NewLoadArtifacts(c.Artifacts, c.Name, keeper, c.Logger)
}

// ServerOptions are the options a server needs for the chosen artifacts (qlog, key log).
func (e *LoadArtifacts) ServerOptions() []server.Option {
	if e == nil {
		return nil
	}
	return e.rec.ServerOptions()
}

// BrowserOptions are the options a browser needs for the chosen artifacts: its creator string
// (version) and, with NetLog, the browser's NetLog file in the experiment's folder.
func (e *LoadArtifacts) BrowserOptions(version string) []browser.Option {
	if e == nil {
		return nil
	}
	opts := []browser.Option{browser.WithCreator(version)}
	if e.rec.Config().Has(artifacts.NetLog) {
		opts = append(opts, browser.WithNetLog(e.rec.ExperimentDir(), browser.NetLogDefault))
	}
	return opts
}

// Begin prepares the folder of load run and starts what records during it (a capture on link,
// when one is wanted and link is not nil); t gets its HAR path and label "run-NNNN".
func (e *LoadArtifacts) Begin(run int, link shaping.Link, t *browser.Target) error {
	if e == nil {
		return nil
	}
	dir, err := e.rec.Begin(run, link)
	if err != nil {
		return err
	}
	t.Label = fmt.Sprintf("run-%04d", run)
	if e.rec.Config().Has(artifacts.HAR) {
		t.HARPath = dir + "/" + artifacts.LoadFileHAR
	}
	return nil
}

// End stops the recordings of the load under way; with rec (nil after a harness failure) it
// decides by the keep rule whether the files are kept and lists them in rec (Artifacts,
// ArtifactsFailed), otherwise it removes them. srv (nil when the server is not this process's)
// closes the load's QUIC connections so their qlogs end; netlog is the browser's NetLog file (""
// for none), listed with the load's files. It reports whether the files were kept.
func (e *LoadArtifacts) End(srv *server.Server, rec *result.Record, cell, netlog string) (bool, error) {
	if e == nil {
		return false, nil
	}
	var errs []error
	e.rec.StopQlogs()
	if srv != nil && rec != nil && e.rec.Config().Has(artifacts.Qlog) && isQUIC(rec.Protocol) {
		errs = append(errs, srv.CloseConnections()) // ends the qlogs of this load's connections
	}
	var recs []*result.Record
	keep := false
	if rec != nil {
		recs = []*result.Record{rec}
		keep = e.rec.Keep(cell, rec.Valid && !rec.TimedOut, rec.PLTMs)
	}
	return keep, errors.Join(append(errs, e.rec.End(keep, recs, netlogFiles(netlog)...))...)
}

// Discard removes the browser's NetLog files (shared by the loads of one browser, so End keeps
// them): for a browser whose every load was discarded.
func (e *LoadArtifacts) Discard(netlog string) error {
	if e == nil {
		return nil
	}
	return e.rec.Discard(netlogFiles(netlog)...)
}

// netlogFiles are the files of a browser's NetLog: the log and its per-load index.
func netlogFiles(netlog string) []string {
	if netlog == "" {
		return nil
	}
	return []string{netlog, netlog + ".loads.jsonl"}
}

// isQUIC reports whether the named protocol runs over QUIC (protocol.Table).
func isQUIC(name string) bool {
	p, err := protocol.Lookup(name)
	return err == nil && p.Transport == protocol.QUIC
}
