// Package browser drives real Chromium through one verified page load and returns one result record.
package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/pltlab/pltlab/device"
	"github.com/pltlab/pltlab/result"
)

// DefaultLaunchTimeout is how long Launch waits for Chromium to start and answer unless
// WithLaunchTimeout says otherwise: 60 s.
const DefaultLaunchTimeout = 60 * time.Second

// closeTimeout bounds the graceful close of the browser before it is killed.
const closeTimeout = 5 * time.Second

// TempDirPrefix starts the name of every temporary user-data-dir (under os.TempDir()); Close
// removes the directory.
const TempDirPrefix = "pltlab-chromium-"

// Browser is one Chromium process forced to one protocol, in one network namespace, reused for
// many loads (each load gets a fresh BrowserContext). Load calls are serialized. A Browser whose
// Chromium died is relaunched by the next Load.
type Browser struct {
	cfg    config
	parent context.Context

	mu      sync.Mutex // serializes Load, Close and relaunch
	proc    *process
	version string
	closed  bool
	// launches counts started processes; netlogPath is the running one's NetLog (WithNetLog).
	launches   int
	netlogPath string
	// joinFiles are the cgroup files the next launch's process joins (WithDevice's budget).
	joinFiles []string
	// device is the emulated device as calibrated at the last launch; nil for the desktop.
	device *result.Device
}

// process is one running Chromium with its chromedp contexts and its temporary profile.
type process struct {
	dir         string
	allocCancel context.CancelFunc
	ctx         context.Context // the browser's chromedp context (the first tab)
	cancel      context.CancelFunc
	cdp         *chromedp.Browser
	broken      bool          // set when the browser failed a health check: relaunch before the next load
	out         *lineLogger   // Chromium's stdout and stderr
	group       *device.Group // the CPU budget's cgroup holding the process tree (WithDevice); nil without one
}

// Launch starts Chromium with the options and waits until it answers. ctx bounds the browser's
// life: when it is cancelled Chromium is killed (call Close anyway to remove the profile).
// Chromium also dies with this process (Pdeathsig). Errors: ErrNoChromium (wrapped) when no
// executable is found; a one-line configuration error; or the start failure.
func Launch(ctx context.Context, opts ...Option) (*Browser, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	chrome, err := FindChromium(cfg.chrome)
	if err != nil {
		return nil, err
	}
	cfg.chrome = chrome
	b := &Browser{cfg: cfg, parent: ctx}
	if err := b.start(); err != nil {
		return nil, err
	}
	return b, nil
}

// Version returns Chromium's product and version as DevTools reports it, e.g.
// "HeadlessChrome/156.0.8078.108".
func (b *Browser) Version() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.version
}

// Close ends Chromium (gracefully, then by force), kills any child process left and removes the
// temporary profile. It is safe to call more than once.
func (b *Browser) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return b.stop()
}

// start launches a new Chromium process into b.proc.
func (b *Browser) start() error {
	if err := b.parent.Err(); err != nil {
		return fmt.Errorf("launch chromium: %w", err)
	}
	dir, err := os.MkdirTemp(b.cfg.tempDir, TempDirPrefix)
	if err != nil {
		return fmt.Errorf("launch chromium: temporary profile: %w", err)
	}
	begin := time.Now()
	p := &process{dir: dir, out: &lineLogger{l: b.cfg.logger}}
	b.joinFiles = nil
	if b.cfg.device.Budgeted() {
		g, err := device.NewGroup()
		if err != nil {
			_ = os.RemoveAll(dir)
			return fmt.Errorf("launch chromium: device %s: %w", b.cfg.device.Name, err)
		}
		p.group, b.joinFiles = g, g.JoinFiles()
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(b.parent, b.allocatorOptions(dir, p.out)...)
	p.allocCancel = allocCancel
	logf := func(format string, args ...any) { b.cfg.logger.Debug("chromedp: " + fmt.Sprintf(format, args...)) }
	p.ctx, p.cancel = chromedp.NewContext(allocCtx, chromedp.WithLogf(logf), chromedp.WithErrorf(logf))
	timer := time.AfterFunc(b.cfg.launchTimeout, p.cancel)
	err = chromedp.Do(p.ctx) // starts the browser; no deadline on this context (docs/design.md, "Forcing a protocol")
	stopped := timer.Stop()
	var ver cdpbrowser.GetVersionResult
	if err == nil {
		ver, err = chromedp.CallBrowser(p.ctx, cdpbrowser.GetVersion, cdp.Empty{})
	}
	if err == nil && !b.cfg.device.IsDesktop() {
		b.version = ver.Product // the user agent names it
		p.cdp = chromedp.FromContext(p.ctx).Browser
		err = b.calibrate(p)
	}
	if err != nil {
		b.proc = p
		serr := b.stop()
		if !stopped {
			err = fmt.Errorf("no answer within %v: %w", b.cfg.launchTimeout, err)
		}
		if tail := p.out.tail(); tail != "" {
			err = fmt.Errorf("%w; chromium said: %s", err, tail)
		}
		return errors.Join(fmt.Errorf("launch %s: %w", b.cfg.chrome, err), serr)
	}
	p.cdp = chromedp.FromContext(p.ctx).Browser
	b.proc, b.version = p, ver.Product
	b.cfg.logger.Debug("chromium launched", "version", ver.Product, "protocol", b.cfg.protocol,
		"netns", b.cfg.netns, "pid", pid(p.cdp), "took", time.Since(begin).Round(time.Millisecond))
	return nil
}

// allocatorOptions builds the chromedp exec options for a profile in dir.
func (b *Browser) allocatorOptions(dir string, out io.Writer) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(b.cfg.chrome),
		chromedp.UserDataDir(dir),
		chromedp.ModifyCmdFunc(b.modifyCmd),
		chromedp.CombinedOutput(out),
	}
	if b.cfg.tempDir != "" {
		opts = append(opts, chromedp.Env("TMPDIR="+b.cfg.tempDir))
	}
	for _, f := range append(b.cfg.args(), b.nextNetLog()...) {
		name, value, hasValue := splitFlag(f)
		if hasValue {
			opts = append(opts, chromedp.Flag(name, value))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	return opts
}

// modifyCmd makes Chromium die with its parent, with WithNetNS run inside the namespace, and
// with WithDevice's budget join the budget's cgroup before it starts.
func (b *Browser) modifyCmd(cmd *exec.Cmd) {
	dieWithParent(cmd)
	if b.cfg.netns != "" {
		ip, err := exec.LookPath("ip")
		if err != nil {
			ip = "/usr/sbin/ip"
		}
		cmd.Args = append([]string{"ip", "netns", "exec", b.cfg.netns, cmd.Path}, cmd.Args[1:]...)
		cmd.Path = ip
	}
	if len(b.joinFiles) > 0 {
		// outermost: `ip netns exec` mounts a sysfs of the namespace's own, without the cgroup
		// filesystems, so the group is joined before it
		device.JoinCommand(cmd, b.joinFiles)
	}
}

// stop ends the current process (if any), kills its leftovers and removes its profile.
func (b *Browser) stop() error {
	p := b.proc
	if p == nil {
		return nil
	}
	b.proc = nil
	cctx, ccancel := context.WithTimeout(p.ctx, closeTimeout)
	_ = chromedp.Cancel(cctx) // graceful Browser.close; errors are expected for a dead browser
	ccancel()
	p.cancel()
	p.allocCancel() // kills the process if still running and waits for chromedp's goroutines
	killLeftovers(p.dir)
	var gerr error
	if p.group != nil {
		gerr = p.group.Close()
	}
	if err := removeAllRetry(p.dir); err != nil {
		return errors.Join(fmt.Errorf("close chromium: remove profile: %w", err), gerr)
	}
	return gerr
}

// ensure relaunches Chromium when it died or failed a health check.
func (b *Browser) ensure() error {
	if b.closed {
		return errors.New("browser: load on a closed browser")
	}
	if b.proc != nil && !b.proc.broken && b.proc.alive() {
		return nil
	}
	b.cfg.logger.Warn("relaunching chromium", "protocol", b.cfg.protocol)
	if err := b.stop(); err != nil {
		b.cfg.logger.Warn("cleaning up the dead chromium", "err", err)
	}
	return b.start()
}

// alive reports whether the connection to Chromium is up.
func (p *process) alive() bool {
	if p.cdp == nil {
		return false
	}
	select {
	case <-p.cdp.LostConnection:
		return false
	default:
		return true
	}
}

// healthy asks Chromium for its version within a short time.
func (p *process) healthy() bool {
	if !p.alive() {
		return false
	}
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	_, err := chromedp.CallBrowser(ctx, cdpbrowser.GetVersion, cdp.Empty{})
	return err == nil
}

func pid(b *chromedp.Browser) int {
	if b == nil || b.Process() == nil {
		return 0
	}
	return b.Process().Pid
}

// removeAllRetry removes dir, retrying briefly while late child processes still write in it.
func removeAllRetry(dir string) error {
	var err error
	for range 20 {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// lineLogger logs each line of Chromium's output at debug level and keeps the last few.
type lineLogger struct {
	l    *slog.Logger
	mu   sync.Mutex
	buf  []byte
	last []string
}

// tailLines is how many of Chromium's last output lines a launch error quotes.
const tailLines = 5

// tail returns the last lines Chromium wrote, joined by " | ".
func (w *lineLogger) tail() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.last, " | ")
}

// Write logs every complete line of p and keeps the rest for the next call.
func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if line := strings.TrimSpace(string(w.buf[:i])); line != "" {
			w.l.Debug("chromium: " + line)
			w.last = append(w.last, line)
			if len(w.last) > tailLines {
				w.last = w.last[1:]
			}
		}
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 {
		w.buf = w.buf[:0]
	}
	return len(p), nil
}
