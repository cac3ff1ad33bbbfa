package experiment

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/pltlab/pltlab/artifacts"
	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
)

// evidence writes one link's per-load artifacts (Config.Artifacts): it holds the servers' TLS
// key log, the qlog folder of the load under way and the link capture.
type evidence struct {
	cfg     artifacts.Config
	keeper  *artifacts.Keeper
	expDir  string
	keys    keyLog
	qlogDir atomic.Pointer[string]
	dir     string // the load under way's folder ("" between loads)
	capture bool   // a capture runs for the load under way
	log     *slog.Logger
	noPcap  bool // the link cannot capture (already logged)
}

// newEvidence returns nil when no artifact is wanted; otherwise it creates the experiment's folder.
func newEvidence(c Config, keeper *artifacts.Keeper) (*evidence, error) {
	if !c.Artifacts.Enabled() {
		return nil, nil
	}
	e := &evidence{cfg: c.Artifacts, keeper: keeper, expDir: c.Artifacts.ExperimentDir(c.Name), log: c.Logger}
	if err := os.MkdirAll(e.expDir, 0o755); err != nil {
		return nil, fmt.Errorf("artifacts: %w", err)
	}
	return e, nil
}

// serverOptions are the options a server needs for the chosen artifacts.
func (e *evidence) serverOptions() []server.Option {
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

// browserOptions are the options a browser needs for the chosen artifacts.
func (e *evidence) browserOptions(version string) []browser.Option {
	if e == nil {
		return nil
	}
	opts := []browser.Option{browser.WithCreator(version)}
	if e.cfg.Has(artifacts.NetLog) {
		opts = append(opts, browser.WithNetLog(e.expDir, browser.NetLogDefault))
	}
	return opts
}

// begin prepares the folder of load run and starts what records during it; t gets its HAR path
// and label.
func (e *evidence) begin(experiment string, run int, link shaping.Link, t *browser.Target) error {
	if e == nil {
		return nil
	}
	e.dir = e.cfg.LoadDir(experiment, run)
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return fmt.Errorf("artifacts: %w", err)
	}
	t.Label = fmt.Sprintf("run-%04d", run)
	if e.cfg.Has(artifacts.HAR) {
		t.HARPath = e.dir + "/" + artifacts.LoadFileHAR
	}
	if e.cfg.Has(artifacts.Qlog) {
		d := e.dir
		e.qlogDir.Store(&d)
	}
	e.keys.reset()
	if !e.cfg.Has(artifacts.Pcap) {
		return nil
	}
	c, ok := link.(shaping.Capturer)
	if !ok || link.Namespace() == "" {
		if !e.noPcap {
			e.noPcap = true
			e.log.Warn("no pcap artifacts: only emulated links (shaper emu) are captured", "link", link.Spec().Input)
		}
		return nil
	}
	if err := c.StartCapture(e.dir + "/" + artifacts.LoadFilePcap); err != nil {
		e.qlogDir.Store(nil)
		err = errors.Join(err, os.RemoveAll(e.dir))
		e.dir = ""
		return err
	}
	e.capture = true
	return nil
}

// end stops the recordings of the load under way; with rec (nil after a harness failure) it
// decides whether the files are kept and lists them in rec.Artifacts, otherwise it removes them.
// netlog is the browser's NetLog file ("" for none).
func (e *evidence) end(link shaping.Link, srv *server.Server, rec *result.Record, cell, netlog string) error {
	if e == nil || e.dir == "" {
		return nil
	}
	var errs []error
	e.qlogDir.Store(nil)
	if rec != nil && e.cfg.Has(artifacts.Qlog) && isQUIC(rec.Protocol) {
		errs = append(errs, srv.CloseConnections()) // ends the qlogs of this load's connections
	}
	if e.capture {
		st, err := link.(shaping.Capturer).StopCapture(e.keys.take())
		e.capture = false
		errs = append(errs, err)
		if st.Lost > 0 {
			errs = append(errs, fmt.Errorf("capture lost %d of %d packet events", st.Lost, st.Lost+st.Packets))
		}
	}
	dir := e.dir
	e.dir = ""
	if rec == nil || !e.keeper.Keep(cell, rec.Valid && !rec.TimedOut, rec.PLTMs) {
		return errors.Join(append(errs, os.RemoveAll(dir))...)
	}
	files, err := e.cfg.List(dir)
	errs = append(errs, err)
	if netlog != "" {
		files = append(files, e.cfg.Rel(netlog, netlog+".loads.jsonl")...)
	}
	rec.Artifacts = files
	return errors.Join(errs...)
}

// keyLog collects NSS key log lines from every TLS handshake; safe for concurrent use.
type keyLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends key log lines.
func (k *keyLog) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.buf.Write(p)
}

func (k *keyLog) reset() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.buf.Reset()
}

// take returns the lines so far and clears them.
func (k *keyLog) take() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := bytes.Clone(k.buf.Bytes())
	k.buf.Reset()
	return out
}

// isQUIC reports whether the named protocol runs over QUIC (protocol.Table).
func isQUIC(name string) bool {
	p, err := protocol.Lookup(name)
	return err == nil && p.Transport == protocol.QUIC
}
