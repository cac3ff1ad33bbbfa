package browser

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
)

// DefaultTimeout is the per-load deadline when Target.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// setupTimeout bounds the creation of a load's BrowserContext and tab.
const setupTimeout = 30 * time.Second

// partialTimeout bounds the reading of the timings of a load that hit its deadline.
const partialTimeout = 2 * time.Second

// WarmSettle is the pause between closing the priming load's connections and the measured warm
// load, so that Chromium has seen the closes (FIN or CONNECTION_CLOSE) before it reuses nothing.
const WarmSettle = 100 * time.Millisecond

// Target is one page load to make.
type Target struct {
	// URL is the page's https URL; its host must be the browser's mapped host (WithResolve) and,
	// when WithPort was given, its port that port.
	URL string
	// Protocol is the requested protocol ("h1", "h2", "h3"); "" means the browser's. It must be
	// the browser's: one Browser per protocol.
	Protocol string
	// Manifest lists the page's objects; every one must arrive whole for a valid load.
	Manifest *pages.Manifest
	// Mode is result.Cold (default) or result.Warm.
	Mode result.Mode
	// Timeout is the deadline of each navigation (the priming load and the measured load each
	// get one in warm mode); 0 means DefaultTimeout.
	Timeout time.Duration
	// CloseConnections, in warm mode, is called between the priming and the measured load; it
	// must close every connection of the server (server.CloseConnections). May be nil.
	CloseConnections func() error
	// HARPath, when set, is where the measured load's HAR 1.2 file is written (see HAR). A HAR
	// that cannot be built or written is logged and left out; the load stays as it was.
	HARPath string
	// Label names the load in the NetLog load index (WithNetLog), e.g. "run-0003".
	Label string
	// Visual captures the measured load's screencast frames and computes its visual metrics
	// (result.Record.Visual): SpeedIndex, visual completeness, filmstrip. It adds VisualSettle to
	// the load's wall time; its effect on the PLT is measured in the README.
	Visual bool
	// Deterministic installs DeterministicJS in every document of the load before its scripts
	// run: a fixed clock and seeded random numbers (for replayed HARs, run
	// --replay-deterministic). Default off.
	Deterministic bool
	// eventsPath, set by tests, receives the recorded network events (JSON Lines) with the HAR.
	eventsPath string
}

// outcome is what one navigation gave.
type outcome struct {
	w        *watch       // the navigation's network events
	frames   []frame      // screencast frames (Target.Visual), in time order
	tm       *pageTimings // nil when nothing could be read
	timedOut bool
	err      error             // load failure (nil for a load that finished)
	failed   map[string]string // URL path -> network error of the requests that failed
}

// Load makes one load of t in a fresh BrowserContext (new connections, empty cache, no TLS or
// QUIC session) with the HTTP cache disabled, and returns its record: timings, resources,
// observed protocol and the verification against t.Manifest (Valid, InvalidReason). A load that
// hits the deadline gives TimedOut with PLTMs = the deadline (censored). A bad load, a timeout
// or a Chromium crash gives a record with Valid false and a nil error; after a crash the next
// Load relaunches Chromium. The error is only for harness failures: a bad Target, ctx
// cancelled, Chromium that cannot be (re)launched, a tab that cannot be opened, or
// CloseConnections failing. Time is when the measured load started; WallMs covers the whole call
// (BrowserContext and tab set-up and teardown, the priming load in warm mode).
func (b *Browser) Load(ctx context.Context, t Target) (*result.Record, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.checkTarget(&t); err != nil {
		return nil, err
	}
	if err := b.ensure(); err != nil {
		return nil, err
	}
	begin := time.Now()
	rec := b.newRecord(t, begin)
	if err := b.load(ctx, t, rec); err != nil {
		return nil, err
	}
	rec.WallMs = quantity.Ms(time.Since(begin))
	b.indexNetLog(t.Label, t.URL, begin, time.Now())
	if !rec.Valid && !b.proc.healthy() {
		b.proc.broken = true // relaunch before the next load
	}
	return rec, nil
}

// load runs the loads of t in a new BrowserContext and fills rec.
func (b *Browser) load(ctx context.Context, t Target, rec *result.Record) error {
	tab, cancelTab := chromedp.NewContext(b.proc.ctx, chromedp.WithNewBrowserContext())
	defer cancelTab() // closes the tab and disposes of the BrowserContext: the next load is clean
	stop := context.AfterFunc(ctx, cancelTab)
	defer stop()
	scripts := []string{resourceBufferJS}
	if t.Deterministic {
		scripts = append(scripts, DeterministicJS)
	}
	if err := setupTab(tab, cancelTab, b.emulate, scripts); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("load %s: %w", t.URL, ctx.Err())
		}
		if !b.proc.alive() {
			invalid(rec, fmt.Sprintf("browser crashed before the load: %v", err))
			return nil
		}
		return fmt.Errorf("load %s: open a tab: %w", t.URL, err)
	}
	if t.Mode == result.Warm {
		done, err := b.prime(ctx, tab, t, rec)
		if done || err != nil {
			return err
		}
		rec.Time = time.Now().UTC() // the measured load's start
	}
	cpu := b.watchCPU()
	out := measure(tab, t, true)
	if ctx.Err() != nil {
		return fmt.Errorf("load %s: %w", t.URL, ctx.Err())
	}
	b.finish(rec, t, out)
	cpu.finish(rec, b.device)
	if t.Visual && len(out.frames) > 0 {
		v, err := visualMetrics(out.frames)
		if err != nil {
			b.cfg.logger.Warn("visual metrics left out", "url", t.URL, "err", err)
		}
		rec.Visual = v
	}
	if t.HARPath != "" && out.w != nil {
		b.saveHAR(t, rec, out.w)
	}
	return nil
}

// prime makes the warm-up load, leaves the page and closes the server's connections. done is
// true when rec is already final (the priming load failed).
func (b *Browser) prime(ctx context.Context, tab context.Context, t Target, rec *result.Record) (done bool, err error) {
	out := measure(tab, t, false)
	if ctx.Err() != nil {
		return true, fmt.Errorf("load %s: %w", t.URL, ctx.Err())
	}
	var msg string
	switch {
	case out.timedOut:
		msg = fmt.Sprintf("timed out at the %v deadline", t.Timeout)
	case out.err != nil:
		msg = b.failure(out.err)
	default:
		msg = reason(verify(t.Protocol, out.tm.Nav, resources(out.tm), t.Manifest, out.failed))
	}
	if msg != "" {
		invalid(rec, "warm priming load: "+msg)
		return true, nil
	}
	blank, cancel := context.WithTimeout(tab, setupTimeout)
	defer cancel()
	if err := chromedp.Do(blank, chromedp.Navigate("about:blank")); err != nil {
		return true, fmt.Errorf("load %s: leave the priming page: %w", t.URL, err)
	}
	if t.CloseConnections != nil {
		if err := t.CloseConnections(); err != nil {
			return true, fmt.Errorf("load %s: close the server's connections: %w", t.URL, err)
		}
	}
	time.Sleep(WarmSettle)
	return false, nil
}

// setupTab creates the tab (the first Run of tab, without a deadline: docs/design.md, "Forcing a
// protocol"), disables the HTTP cache and installs scripts (resourceBufferJS, which raises the Resource
// Timing buffer, and optionally DeterministicJS) to run first in every document. cancel ends a
// set-up that takes too long.
func setupTab(tab context.Context, cancel context.CancelFunc, emulate func(context.Context, *chromedp.Target) error, scripts []string) error {
	timer := time.AfterFunc(setupTimeout, cancel)
	defer timer.Stop()
	return chromedp.Do(tab, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if err := emulate(ctx, t); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, t, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
			return fmt.Errorf("disable the cache: %w", err)
		}
		for _, src := range scripts {
			if _, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: src}); err != nil {
				return err
			}
		}
		return nil
	}))
}

// measure navigates the tab to t.URL under a deadline on a child context and reads the timings
// once loadEventEnd > 0, adding the objects that Chromium keeps out of Resource Timing from
// the Network events (netResources). On the deadline it reads what the page has so far. For the measured load
// (not a warm priming load) it also records the network events for t.HARPath and the screencast
// for t.Visual.
func measure(tab context.Context, t Target, measured bool) outcome {
	rctx, cancel := context.WithTimeout(tab, t.Timeout)
	defer cancel()
	w := newWatch(measured && t.HARPath != "")
	err := chromedp.Listen(rctx, w.event)
	var sc *screencast
	if err == nil && t.Visual && measured {
		sc, err = startScreencast(rctx)
	}
	if err == nil {
		err = chromedp.Do(rctx, chromedp.Navigate(t.URL))
	}
	var tm pageTimings
	if err == nil {
		tm, err = chromedp.Run(rctx, chromedp.Evaluate[pageTimings](collectJS(true), chromedp.EvalAwaitPromise))
	}
	switch {
	case err == nil:
		tm.Resources = append(tm.Resources, netResources(&tm, t.Manifest, w.finishedRequests())...)
		w.readBodies(rctx)
		out := outcome{w: w, tm: &tm, failed: w.failures()}
		if sc != nil {
			out.frames = sc.stop(rctx, tm.TimeOrigin)
		}
		return out
	case tab.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded):
		ptm := partial(tab, t.URL)
		if ptm != nil {
			ptm.Resources = append(ptm.Resources, netResources(ptm, t.Manifest, w.finishedRequests())...)
		}
		return outcome{w: w, tm: ptm, timedOut: true, err: err, failed: w.failures()}
	default:
		return outcome{w: w, err: err}
	}
}

// partial reads the timings of a page that has not finished loading (best effort).
func partial(tab context.Context, pageURL string) *pageTimings {
	ctx, cancel := context.WithTimeout(tab, partialTimeout)
	defer cancel()
	tm, err := chromedp.Run(ctx, chromedp.Evaluate[pageTimings](collectJS(false), chromedp.EvalAwaitPromise))
	if err != nil {
		return nil
	}
	if tm.Nav != nil && tm.Nav.Name != pageURL {
		tm.Nav = nil // still the previous document
	}
	return &tm
}

// finish fills rec from the outcome: timings, then Valid / InvalidReason / TimedOut.
func (b *Browser) finish(rec *result.Record, t Target, out outcome) {
	if out.tm != nil {
		fill(rec, out.tm)
		if out.w != nil {
			setConnections(rec, out.w.connections())
		}
	}
	switch {
	case out.timedOut:
		rec.TimedOut = true
		rec.PLTMs = rec.DeadlineMs
		msg := fmt.Sprintf("timed out at the %v deadline", t.Timeout)
		if out.tm != nil {
			if probs := verify(t.Protocol, out.tm.Nav, rec.Resources, t.Manifest, out.failed); len(probs) > 0 {
				msg += ": " + reason(probs)
			}
		}
		invalid(rec, msg)
	case out.err != nil:
		invalid(rec, b.failure(out.err))
	default:
		probs := verify(t.Protocol, out.tm.Nav, rec.Resources, t.Manifest, out.failed)
		rec.Valid = len(probs) == 0
		rec.InvalidReason = reason(probs)
	}
}

// failure describes a load that ended with an error.
func (b *Browser) failure(err error) string {
	var le *chromedp.LoadError
	switch {
	case !b.proc.alive():
		return fmt.Sprintf("browser crashed: %v", err)
	case errors.As(err, &le):
		return "navigation failed: " + le.ErrorText
	default:
		return fmt.Sprintf("load failed: %v", err)
	}
}

// checkTarget validates t and fills its defaults.
func (b *Browser) checkTarget(t *Target) error {
	t.Protocol = cmp.Or(t.Protocol, b.cfg.protocol)
	if t.Protocol != b.cfg.protocol {
		return fmt.Errorf("browser: target protocol %q on a browser launched for %s (one Browser per protocol)", t.Protocol, b.cfg.protocol)
	}
	t.Mode = cmp.Or(t.Mode, result.Cold)
	if t.Mode != result.Cold && t.Mode != result.Warm {
		return fmt.Errorf("browser: bad mode %q: accepted cold, warm", t.Mode)
	}
	if t.Timeout <= 0 {
		t.Timeout = DefaultTimeout
	}
	if t.Manifest == nil {
		return fmt.Errorf("browser: target %s has no manifest to verify the load against", t.URL)
	}
	return b.checkURL(t.URL)
}

// checkURL checks that u is an https URL on the browser's mapped host (and port, if given), or
// on one of its origin hosts (WithOriginHosts) at port 443.
func (b *Browser) checkURL(u string) error {
	pu, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("browser: bad target URL: %w", err)
	}
	if pu.Scheme != "https" {
		return fmt.Errorf("browser: target URL %q: accepted https URLs only", u)
	}
	if slices.Contains(b.cfg.origins, pu.Hostname()) && (pu.Port() == "" || pu.Port() == "443") {
		return nil // an origin host, named without a port and mapped to the server (WithOriginHosts): a replayed page on its recorded host
	}
	if !slices.Contains(b.cfg.allHosts(), pu.Hostname()) {
		return fmt.Errorf("browser: target URL %q: host must be one of %s (the hosts the browser maps to %s), or an origin host without a port", u, strings.Join(b.cfg.allHosts(), ", "), b.cfg.ip)
	}
	if want := b.cfg.portOf(pu.Hostname()); want != 0 {
		port := pu.Port()
		port = cmp.Or(port, "443")
		if port != strconv.Itoa(want) {
			return fmt.Errorf("browser: target URL %q: port must be %d (the port the browser was launched for)", u, want)
		}
	}
	return nil
}

// newRecord starts the record of a load of t made at begin.
func (b *Browser) newRecord(t Target, begin time.Time) *result.Record {
	m := t.Manifest
	return &result.Record{
		V: result.Version, Time: begin.UTC(), Mode: t.Mode, Protocol: t.Protocol,
		Browser: b.version, DeadlineMs: quantity.Ms(t.Timeout), Device: b.deviceCopy(),
		Page:      result.Page{Spec: m.Spec, TotalBytes: m.TotalBytes, Objects: len(m.Objects)},
		Resources: []result.Resource{},
	}
}

// invalid marks rec invalid with reason.
func invalid(rec *result.Record, reason string) {
	rec.Valid = false
	rec.InvalidReason = reason
}

// resources converts the resource timings the way fill does.
func resources(tm *pageTimings) []result.Resource {
	var rec result.Record
	fill(&rec, tm)
	return rec.Resources
}

// saveHAR builds the HAR of the measured load from w's events and writes it to t.HARPath.
func (b *Browser) saveHAR(t Target, rec *result.Record, w *watch) {
	info := harPageInfo{URL: t.URL, Browser: b.version, Creator: b.cfg.creator, DCLMs: -1, PLTMs: -1, Bodies: w.responseBodies()}
	if rec.DCLMs > 0 {
		info.DCLMs = rec.DCLMs
	}
	if rec.PLTMs > 0 && !rec.TimedOut {
		info.PLTMs = rec.PLTMs
	}
	events := w.recorded()
	h, err := buildHAR(events, info)
	if err == nil {
		err = writeHAR(t.HARPath, h)
	}
	if err == nil && t.eventsPath != "" {
		err = writeEventsFile(t.eventsPath, events)
	}
	if err != nil {
		b.cfg.logger.Warn("HAR left out", "url", t.URL, "err", err)
		rec.ArtifactsFailed = append(rec.ArtifactsFailed, result.ArtifactFailure{Path: t.HARPath, Error: err.Error()})
	}
}

// setConnections sets the connection ID of the document and of every resource by URL.
func setConnections(rec *result.Record, conns map[string]string) {
	for i := range rec.Resources {
		rec.Resources[i].ConnectionID = conns[rec.Resources[i].URL]
	}
	if rec.Document != nil {
		rec.Document.ConnectionID = conns[rec.Document.URL]
	}
}
