package artifacts

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/capture"
)

// maxAttempts bounds the folders Begin tries for one load (LoadDir, LoadDir.2, ...).
const maxAttempts = 1000

// MinFreeBytes is the free space below which a filesystem counts as full when a load's files
// are judged: a file written while its filesystem ran out of space may be cut short although no
// writer reported it (Chromium's NetLog, quic-go's qlogs), so every file of such a load is
// listed as failed.
const MinFreeBytes = 64 << 10

// Recorder is the one lifecycle of per-load (or per-flow-run) evidence, used by 'run', 'load'
// and 'flows': it makes each load's folder empty and fresh, starts and stops the link capture,
// collects the servers' TLS key log and points their qlogs at the folder, and at the end lists
// in the records the files written whole and, as failed with the error, those that were not.
// A nil *Recorder (no artifacts wanted) does nothing. Not safe for concurrent loads: one load
// at a time.
type Recorder struct {
	cfg        Config
	keeper     *Keeper
	experiment string
	expDir     string
	log        *slog.Logger
	keys       keyLog
	qlogDir    atomic.Pointer[string]

	dir     string // the load under way's folder ("" between loads)
	capture capture.Capturer
	failed  []result.ArtifactFailure
	noPcap  bool // the link cannot capture (already logged)
}

// NewRecorder returns nil when cfg wants no artifact; otherwise it creates the experiment's
// folder (checking it is writable) and warns about incomplete files a killed earlier process
// left under cfg.Dir (StaleParts). keeper decides which loads keep their files (NewKeeper(cfg.For)
// when nil); log gets the warnings (slog.Default() when nil).
func NewRecorder(cfg Config, experiment string, keeper *Keeper, log *slog.Logger) (*Recorder, error) {
	if !cfg.Enabled() {
		return nil, nil
	}
	log = cmp.Or(log, slog.Default())
	if keeper == nil {
		keeper = NewKeeper(cfg.For)
	}
	r := &Recorder{cfg: cfg, keeper: keeper, experiment: experiment, expDir: cfg.ExperimentDir(experiment), log: log}
	if err := CheckWritable(r.expDir); err != nil {
		return nil, err
	}
	if cut := CutNetLogs(cfg.Dir); len(cut) > 0 {
		log.Warn(fmt.Sprintf("%d NetLogs of pltlab processes that were killed are incomplete (a NetLog is whole only once its browser closed); their loads' records list them: renamed to *%s, so that no record lists a file that is not whole", len(cut), CutSuffix),
			"first", cut[0])
	}
	if parts, err := StaleParts(cfg.Dir); err == nil && len(parts) > 0 {
		log.Warn(fmt.Sprintf("%d incomplete artifact files (*%s) under %s: left by a killed process (unless another pltlab process writes into this folder now); no record lists them, they can be removed", len(parts), PartSuffix, cfg.Dir),
			"first", parts[0])
	}
	return r, nil
}

// Config returns the recorder's configuration (the zero Config for nil).
func (r *Recorder) Config() Config {
	if r == nil {
		return Config{}
	}
	return r.cfg
}

// ExperimentDir is the experiment's folder, where per-process files (NetLogs) go; "" for nil.
func (r *Recorder) ExperimentDir() string {
	if r == nil {
		return ""
	}
	return r.expDir
}

// ServerOptions are the options a server needs for the chosen artifacts: the TLS key log for
// pcap, the qlog folder of the load under way for qlog.
func (r *Recorder) ServerOptions() []server.Option {
	if r == nil {
		return nil
	}
	var opts []server.Option
	if r.cfg.Has(Pcap) {
		opts = append(opts, server.WithKeyLog(&r.keys))
	}
	if r.cfg.Has(Qlog) {
		opts = append(opts, server.WithQlogDir(func() string {
			if p := r.qlogDir.Load(); p != nil {
				return *p
			}
			return ""
		}))
	}
	return opts
}

// Begin makes a new, empty folder for load run and starts the recordings; link is nil when no
// link is in this process (then no capture). The folder is LoadDir(experiment, run), or, when
// that exists already (an earlier attempt of the same load by a process that was killed, which
// --resume redoes; or another process using the same experiment name), the first free
// LoadDir.N (N = 2, 3, ...), claimed with one mkdir(2) so that two processes never share one:
// a redone load starts from an empty folder and no other attempt's files are touched or listed.
// The taken folder is named in a warning. It returns the folder ("" for nil). When the capture
// cannot start, the folder is removed and the error returned.
func (r *Recorder) Begin(run int, link shaping.Link) (string, error) {
	if r == nil {
		return "", nil
	}
	base := r.cfg.LoadDir(r.experiment, run)
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", fmt.Errorf("artifacts: %w", err)
	}
	dir := base
	for n := 2; ; n++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || n > maxAttempts {
			return "", fmt.Errorf("artifacts: %w", err)
		}
		dir = fmt.Sprintf("%s.%d", base, n)
	}
	if dir != base {
		r.log.Warn("artifacts: this load's folder is taken by an earlier attempt (a killed run, unless another process uses this experiment name); using a new one",
			"taken", base, "dir", dir)
	}
	r.dir, r.failed = dir, nil
	if r.cfg.Has(Qlog) {
		r.qlogDir.Store(&dir)
	}
	r.keys.take()
	if !r.cfg.Has(Pcap) || link == nil {
		return dir, nil
	}
	c, ok := link.(capture.Capturer)
	if !ok || link.Namespace() == "" {
		if !r.noPcap {
			r.noPcap = true
			r.log.Warn("no pcap artifacts: only emulated links (shaper emu) are captured", "link", link.Spec().Input)
		}
		return dir, nil
	}
	if err := c.StartCapture(filepath.Join(dir, LoadFilePcap)); err != nil {
		r.qlogDir.Store(nil)
		r.dir = ""
		return "", errors.Join(fmt.Errorf("artifacts: start capture: %w", err), os.RemoveAll(dir))
	}
	r.capture = c
	return dir, nil
}

// Fail records that file (absolute, or relative to the load's folder) of the load under way was
// not written whole; End lists it as failed.
func (r *Recorder) Fail(file string, err error) {
	if r == nil || r.dir == "" || err == nil {
		return
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(r.dir, file)
	}
	r.failed = append(r.failed, result.ArtifactFailure{Path: file, Error: err.Error()})
}

// StopQlogs stops pointing new QUIC connections at the load's folder (call before closing the
// server's connections, which ends their qlogs).
func (r *Recorder) StopQlogs() {
	if r != nil {
		r.qlogDir.Store(nil)
	}
}

// End stops the recordings of the load under way. keep says whether its files are kept (see
// Keep); recs are the load's records (one page load, or every flow of a flow run; none after a
// harness failure, when the folder is removed). Each record gets the same Artifacts (files
// written whole) and ArtifactsFailed (with the reason: a writer's error given to Fail or
// carried in a record's ArtifactsFailed, a capture that lost packet events, an unfinished
// *.part file, an empty file, or a full filesystem). shared are files outside the folder the load also wrote into (the
// browser's NetLog and its index). The error is what went wrong stopping the recordings.
func (r *Recorder) End(keep bool, recs []*result.Record, shared ...string) error {
	if r == nil || r.dir == "" {
		return nil
	}
	var errs []error
	r.qlogDir.Store(nil)
	if r.capture != nil {
		st, err := r.capture.StopCapture(r.keys.take())
		r.capture = nil
		pcap := filepath.Join(r.dir, LoadFilePcap)
		switch {
		case err != nil:
			r.Fail(pcap, err)
		case st.Lost > 0:
			r.Fail(pcap, fmt.Errorf("capture lost %d of %d packet events", st.Lost, st.Lost+st.Packets))
		}
	}
	dir := r.dir
	r.dir = ""
	if len(recs) == 0 || !keep {
		for _, rec := range recs {
			rec.Artifacts, rec.ArtifactsFailed = nil, nil // nothing kept, nothing claimed
		}
		return errors.Join(append(errs, os.RemoveAll(dir))...)
	}
	failed := r.failed
	for _, rec := range recs {
		failed = append(failed, rec.ArtifactsFailed...)
	}
	files, err := r.cfg.List(dir)
	errs = append(errs, err)
	files = append(files, r.cfg.Rel(shared...)...)
	full := ""
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) == nil {
		if free := int64(st.Bavail) * int64(st.Bsize); free < MinFreeBytes {
			full = fmt.Sprintf("the filesystem was full (%d bytes free): the file may be cut short", free)
		}
	}
	bad := map[string]string{}
	for _, f := range failed {
		bad[r.rel(f.Path)] = f.Error
	}
	var whole []string
	for _, f := range files {
		if _, ok := bad[f]; ok {
			continue
		}
		switch fi, err := os.Stat(filepath.Join(r.cfg.Dir, filepath.FromSlash(f))); {
		case err != nil:
			bad[f] = err.Error()
		case strings.HasSuffix(f, PartSuffix):
			if why, ok := bad[strings.TrimSuffix(f, PartSuffix)]; ok {
				// The writer reported the file it meant to finish (a capture that failed): one
				// failure, under the name its part stands on disk.
				delete(bad, strings.TrimSuffix(f, PartSuffix))
				bad[f] = why
				continue
			}
			bad[f] = "incomplete: its writer did not finish it"
		case fi.Size() == 0:
			bad[f] = "empty file"
		case full != "":
			bad[f] = full
		default:
			whole = append(whole, f)
		}
	}
	slices.Sort(whole)
	var out []result.ArtifactFailure
	for f, e := range bad {
		out = append(out, result.ArtifactFailure{Path: f, Error: e})
	}
	sortFailures(out)
	artDir := ""
	if len(whole) > 0 || len(out) > 0 {
		if abs, err := filepath.Abs(r.cfg.Dir); err == nil {
			artDir = abs
		}
	}
	for _, rec := range recs {
		rec.Artifacts, rec.ArtifactsFailed, rec.ArtifactsDir = whole, out, artDir
	}
	return errors.Join(errs...)
}

// Discard removes files (and, when that leaves it empty, the experiment's folder): files a load
// wrote outside its folder that belong to no other load, when its artifacts are not kept (the
// NetLog of the one browser of 'pltlab load'). Missing files are not an error.
func (r *Recorder) Discard(files ...string) error {
	if r == nil {
		return nil
	}
	var errs []error
	for _, f := range files {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	os.Remove(r.expDir) // only when empty
	return errors.Join(errs...)
}

// rel makes an absolute path relative to the artifacts directory (slash-separated).
func (r *Recorder) rel(p string) string {
	if filepath.IsAbs(p) {
		if rel, err := filepath.Rel(r.cfg.Dir, p); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	if !filepath.IsAbs(r.cfg.Dir) {
		if rel, err := filepath.Rel(r.cfg.Dir, p); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(p)
}

func sortFailures(fs []result.ArtifactFailure) {
	slices.SortFunc(fs, func(a, b result.ArtifactFailure) int { return strings.Compare(a.Path, b.Path) })
}

// Keep reports whether a load keeps its files (Keeper.Keep); true for nil.
func (r *Recorder) Keep(cell string, valid bool, plt float64) bool {
	return r == nil || r.keeper.Keep(cell, valid, plt)
}

// PartSuffix ends the name of a file still being written (the link capture writes
// link.pcapng.part and renames it when complete).
const PartSuffix = ".part"

// StaleParts returns the *.part files under dir (at most three folders deep: DIR/EXPERIMENT/
// run-NNNN/FILE), sorted. Between runs there are none; one found at a start was left by a process
// that was killed while writing it.
func StaleParts(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && strings.Count(strings.TrimPrefix(p, dir), string(filepath.Separator)) >= 3 {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, PartSuffix) {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// CutSuffix is added to the name of a NetLog that a killed process left incomplete (CutNetLogs).
const CutSuffix = ".cut"

// netlogName matches the NetLogs browser.WithNetLog writes: netlog-PROTOCOL-PID-N.json.
var netlogName = regexp.MustCompile(`^netlog-[a-z0-9]+-([0-9]+)-[0-9]+\.json$`)

// CutNetLogs finds, in the experiment folders under dir, the NetLogs whose writing process (the
// PID in the name) is gone while the file is not complete JSON (a browser killed with its
// pltlab: Chromium completes the file only when it closes), renames each to NAME+CutSuffix and
// returns their new paths. The records of the killed run still list the old name, which then no
// longer exists: a reader finds no file rather than a truncated one listed as whole.
func CutNetLogs(dir string) []string {
	var out []string
	matches, _ := filepath.Glob(filepath.Join(dir, "*", "netlog-*.json"))
	for _, p := range matches {
		m := netlogName.FindStringSubmatch(filepath.Base(p))
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if pid == os.Getpid() || processAlive(pid) {
			continue
		}
		if b, err := os.ReadFile(p); err != nil || json.Valid(b) {
			continue
		}
		if os.Rename(p, p+CutSuffix) == nil {
			out = append(out, p+CutSuffix)
		}
	}
	return out
}

// processAlive reports whether a process with this PID exists (kill(pid, 0) does not fail with
// ESRCH).
func processAlive(pid int) bool {
	return pid > 0 && unix.Kill(pid, 0) != unix.ESRCH
}

// CheckWritable creates dir (and its parents) and writes, syncs and removes a probe file in
// it, so that a read-only or full filesystem is found before any load runs. The error names
// dir.
func CheckWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("artifacts folder %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, ".pltlab-write-check-*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is dir's, named already
		}
		return fmt.Errorf("artifacts folder %s is not writable: %w", dir, err)
	}
	_, werr := f.Write(make([]byte, 4096))
	serr := f.Sync()
	cerr := f.Close()
	rerr := os.Remove(f.Name())
	if err := errors.Join(werr, serr, cerr, rerr); err != nil {
		return fmt.Errorf("artifacts folder %s is not writable: %w", dir, err)
	}
	return nil
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

// take returns the lines so far and clears them.
func (k *keyLog) take() []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := bytes.Clone(k.buf.Bytes())
	k.buf.Reset()
	return out
}
