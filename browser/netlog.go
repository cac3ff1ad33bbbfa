package browser

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// NetLog capture modes (Chromium's --net-log-capture-mode).
const (
	// NetLogDefault leaves out cookies, credentials and bytes.
	NetLogDefault = "Default"
	// NetLogSensitive adds cookies and credentials.
	NetLogSensitive = "IncludeSensitive"
	// NetLogEverything adds the bytes sent and received (large: about the page's size again).
	NetLogEverything = "Everything"
)

// WithNetLog makes every Chromium process this Browser launches write a NetLog (Chromium's
// --log-net-log, read with netlog-viewer or chrome://net-export) in dir, named
// "netlog-PROTOCOL-PID-N.json" (PID is this process's id, so that a resumed or parallel process
// never rewrites another's NetLog; N counts the launches of this Browser: 1, then 2 after a
// relaunch),
// with capture mode mode (NetLogDefault when ""). The file is complete JSON only after the
// browser exits cleanly: Close does a graceful Browser.close. Load boundaries are kept in a
// sidecar index, the NetLog path + ".loads.jsonl" (see NetLogIndexEntry), because a NetLog has no
// place for them.
func WithNetLog(dir, mode string) Option {
	return func(c *config) {
		c.netlogDir, c.netlogMode = dir, mode
		c.netlogMode = cmp.Or(c.netlogMode, NetLogDefault)
	}
}

// WithCreator names the program version written into HAR files' creator (default "-").
func WithCreator(version string) Option { return func(c *config) { c.creator = version } }

// NetLogIndexEntry is one line of a NetLog's load index: one load made by that Chromium process.
// NetLog event times are ms on Chromium's TimeTicks clock; constants.timeTickOffset in the NetLog
// converts them to ms since the Unix epoch (time + timeTickOffset), comparable with StartUnixMs
// and EndUnixMs.
type NetLogIndexEntry struct {
	// Label names the load (Target.Label), e.g. "run-0003".
	Label string `json:"label"`
	// URL is the page loaded.
	URL string `json:"url,omitempty"`
	// StartUnixMs and EndUnixMs bound the whole Load call (new BrowserContext to its disposal),
	// in ms since the Unix epoch.
	StartUnixMs float64 `json:"start_unix_ms"`
	EndUnixMs   float64 `json:"end_unix_ms"`
}

// NetLogPath returns the NetLog file of the running Chromium process ("" without WithNetLog).
func (b *Browser) NetLogPath() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.netlogPath
}

// nextNetLog returns the NetLog switches for a new process and remembers its path.
func (b *Browser) nextNetLog() []string {
	if b.cfg.netlogDir == "" {
		return nil
	}
	b.launches++
	b.netlogPath = filepath.Join(b.cfg.netlogDir, fmt.Sprintf("netlog-%s-%d-%d.json", b.cfg.protocol, os.Getpid(), b.launches))
	return []string{"--log-net-log=" + b.netlogPath, "--net-log-capture-mode=" + b.cfg.netlogMode}
}

// indexNetLog appends a load's boundaries to the NetLog's index (best effort: a failure is logged).
func (b *Browser) indexNetLog(label, url string, start, end time.Time) {
	if b.netlogPath == "" {
		return
	}
	line, _ := json.Marshal(NetLogIndexEntry{Label: label, URL: url, StartUnixMs: unixMs(start), EndUnixMs: unixMs(end)})
	f, err := os.OpenFile(b.netlogPath+".loads.jsonl", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err == nil {
		_, err = f.Write(append(line, '\n'))
		err = joinClose(err, f)
	}
	if err != nil {
		b.cfg.logger.Warn("NetLog load index", "err", err)
	}
}

func unixMs(t time.Time) float64 { return float64(t.UnixMicro()) / 1000 }

func joinClose(err error, f *os.File) error {
	if cerr := f.Close(); err == nil {
		return cerr
	}
	return err
}
