package experiment

import (
	"errors"
	"fmt"

	"github.com/pltlab/pltlab/artifacts"
	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
)

// evidence adapts the artifacts lifecycle (artifacts.Recorder) to page loads: it adds the
// browser's options, the HAR path and the NetLog of the browser that made the load.
type evidence struct {
	rec *artifacts.Recorder
}

// newEvidence returns nil when no artifact is wanted; otherwise it creates the experiment's folder.
func newEvidence(c Config, keeper *artifacts.Keeper) (*evidence, error) {
	r, err := artifacts.NewRecorder(c.Artifacts, c.Name, keeper, c.Logger)
	if err != nil || r == nil {
		return nil, err
	}
	return &evidence{rec: r}, nil
}

// serverOptions are the options a server needs for the chosen artifacts.
func (e *evidence) serverOptions() []server.Option {
	if e == nil {
		return nil
	}
	return e.rec.ServerOptions()
}

// browserOptions are the options a browser needs for the chosen artifacts.
func (e *evidence) browserOptions(version string) []browser.Option {
	if e == nil {
		return nil
	}
	opts := []browser.Option{browser.WithCreator(version)}
	if e.rec.Config().Has(artifacts.NetLog) {
		opts = append(opts, browser.WithNetLog(e.rec.ExperimentDir(), browser.NetLogDefault))
	}
	return opts
}

// begin prepares the folder of load run and starts what records during it; t gets its HAR path
// and label.
func (e *evidence) begin(run int, link shaping.Link, t *browser.Target) error {
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

// end stops the recordings of the load under way; with rec (nil after a harness failure) it
// decides whether the files are kept and lists them in rec (Artifacts, ArtifactsFailed),
// otherwise it removes them. netlog is the browser's NetLog file ("" for none).
func (e *evidence) end(srv *server.Server, rec *result.Record, cell, netlog string) error {
	if e == nil {
		return nil
	}
	var errs []error
	e.rec.StopQlogs()
	if rec != nil && e.rec.Config().Has(artifacts.Qlog) && isQUIC(rec.Protocol) {
		errs = append(errs, srv.CloseConnections()) // ends the qlogs of this load's connections
	}
	var recs []*result.Record
	keep := false
	if rec != nil {
		recs = []*result.Record{rec}
		keep = e.rec.Keep(cell, rec.Valid && !rec.TimedOut, rec.PLTMs)
	}
	var shared []string
	if netlog != "" {
		shared = []string{netlog, netlog + ".loads.jsonl"}
	}
	return errors.Join(append(errs, e.rec.End(keep, recs, shared...))...)
}

// isQUIC reports whether the named protocol runs over QUIC (protocol.Table).
func isQUIC(name string) bool {
	p, err := protocol.Lookup(name)
	return err == nil && p.Transport == protocol.QUIC
}
