package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/pltlab/pltlab/artifacts"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
)

// flowEvidence keeps the artifacts of 'pltlab flows' runs: a pcapng of the link with the TLS
// secrets embedded and the server's qlogs, one folder per run. nil when --artifacts is not given.
type flowEvidence struct {
	cfg     artifacts.Config
	keys    lockedBuffer
	qlogDir atomic.Pointer[string]
	dir     string
	capture bool
}

// newFlowEvidence checks the artifact flags of 'pltlab flows' (pcap and qlog only; for invalid
// or all runs).
func newFlowEvidence(a artifactFlags) (*flowEvidence, error) {
	cfg, err := a.config(artifacts.Pcap, artifacts.Qlog)
	if err != nil || !cfg.Enabled() {
		return nil, err
	}
	if cfg.For == artifacts.KeepSlowest {
		return nil, usagef("bad --artifacts-for slowest: flows have no PLT; accepted invalid, all")
	}
	return &flowEvidence{cfg: cfg}, nil
}

// serverOptions are the server options the chosen artifacts need.
func (e *flowEvidence) serverOptions() []server.Option {
	if e == nil {
		return nil
	}
	var opts []server.Option
	if e.cfg.Has(artifacts.Pcap) {
		opts = append(opts, server.WithKeyLog(&e.keys))
	}
	if e.cfg.Has(artifacts.Qlog) {
		opts = append(opts, server.WithQlogDir(func() string {
			if p := e.qlogDir.Load(); p != nil {
				return *p
			}
			return ""
		}))
	}
	return opts
}

// begin makes run i's folder and starts its recordings.
func (e *flowEvidence) begin(l shaping.Link, experiment string, i int) error {
	if e == nil {
		return nil
	}
	e.dir = e.cfg.LoadDir(experiment, i)
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return fmt.Errorf("artifacts: %w", err)
	}
	d := e.dir
	e.qlogDir.Store(&d)
	e.keys.take()
	if c, ok := l.(shaping.Capturer); ok && e.cfg.Has(artifacts.Pcap) {
		if err := c.StartCapture(filepath.Join(e.dir, artifacts.LoadFilePcap)); err != nil {
			return err
		}
		e.capture = true
	}
	return nil
}

// end stops the recordings of the run whose records are recs and lists the files in every
// record, or removes the folder (no records, or --artifacts-for invalid and every flow valid).
func (e *flowEvidence) end(l shaping.Link, srv *server.Server, recs []*result.Record) error {
	if e == nil || e.dir == "" {
		return nil
	}
	e.qlogDir.Store(nil)
	errs := []error{srv.CloseConnections()} // ends the qlogs of the run's connections
	if e.capture {
		_, err := l.(shaping.Capturer).StopCapture(e.keys.take())
		errs = append(errs, err)
		e.capture = false
	}
	dir := e.dir
	e.dir = ""
	keep := len(recs) > 0 && e.cfg.For != artifacts.KeepInvalid
	for _, r := range recs {
		keep = keep || !r.Valid
	}
	if !keep {
		return errors.Join(append(errs, os.RemoveAll(dir))...)
	}
	files, err := e.cfg.List(dir)
	for _, r := range recs {
		r.Artifacts = files
	}
	return errors.Join(append(errs, err)...)
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers (TLS key log lines).
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// take returns the contents so far and empties the buffer.
func (b *lockedBuffer) take() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := bytes.Clone(b.buf.Bytes())
	b.buf.Reset()
	return out
}
