package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/artifacts"
	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/device"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/internal/cpushield"
	"github.com/pltlab/pltlab/internal/gcpause"
	"github.com/pltlab/pltlab/internal/hostenv"
	"github.com/pltlab/pltlab/internal/hostload"
	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/selfcheck"
)

// Host is the hostname the browser resolves to the server (through --host-resolver-rules) and
// the name on the server's certificate.
const Host = "plt.test"

// maxHarnessFailures is how many loads in a row may fail in the harness (not in the page load)
// before the experiment gives up.
const maxHarnessFailures = 3

// ErrLinkCheck is returned (wrapped) when a link's self-check finds it outside tolerance
// (selfcheck.ErrFailed, which flows returns too).
var ErrLinkCheck = selfcheck.ErrFailed

// Summary counts what Run did. The measured (non-warm-up) loads are counted by
// result.Classify, as every report table counts them: Valid + TimedOut + NetworkFailed +
// Invalid + EmulatorLate is the number of measured loads (a load made twice counts once, by
// its last attempt).
type Summary struct {
	// Records is the number of load records written (warm-ups included).
	Records int
	// Valid, TimedOut, NetworkFailed and Invalid count the measured loads by outcome (and
	// EmulatorLate, below).
	Valid, TimedOut, NetworkFailed, Invalid int
	// HarnessErrors counts the scheduled loads (warm-ups included) the harness could not make;
	// each left a harness_error line.
	HarnessErrors int
	// EmulatorLate counts the measured loads whose last attempt the emulator was late in
	// (result.OutcomeEmulatorLate), and Redone the measured loads made a second time because
	// it was late in their first (summarised in the record's earlier_attempts).
	EmulatorLate, Redone int
	// Resumed counts the loads skipped because Config.Done holds them.
	Resumed int
	// Scheduled is the number of loads in the schedule (warm-ups included).
	Scheduled int
	// Rechecked names each link whose self-check had to be repeated, with the outcome ("link
	// carlucci2015 passed on its second check (the first failed: ...)"), in link order.
	Rechecked []string
	// ArtifactsFailed counts the evidence files the loads wanted but could not write whole
	// (result.Record.ArtifactsFailed, warm-ups included), each file once.
	ArtifactsFailed int
	// Elapsed is Run's wall time.
	Elapsed time.Duration
}

// page is a generated page set shared by every link.
type page struct {
	spec     pages.Spec
	input    string
	dir      string
	manifest *pages.Manifest
	archive  *pages.Archive // the HAR replayed for a "har:FILE" page (dir is then ""), else nil
}

// RunSchedule makes the loads of p.Left() (its shard's, not made before), from the schedule as computed
// (nothing is scheduled, cut or resumed again), and writes one line per load to w: its record,
// or a harness_error line when the harness could not make it (also for every load of a link
// that failed its self-check or whose harness failed maxHarnessFailures times in a row), plus
// one link_check line per link. Each line's Run is the load's index in the schedule. It returns
// when all loads are done, or early with ctx's error after an interrupt (the load under way is
// abandoned and leaves no line, every written line is kept), or with an error naming the links
// that failed, or at once when w fails (a closed pipe, a full disk). Everything it set up (page
// directories, links, servers, browsers) is torn down before it returns.
func RunSchedule(ctx context.Context, p *Schedule, w *result.Writer) (Summary, error) {
	start := time.Now()
	c := p.Config.withDefaults()
	if err := c.Validate(); err != nil {
		return Summary{}, err
	}
	links, err := parseLinks(c)
	if err != nil {
		return Summary{}, err
	}
	tmp, err := os.MkdirTemp(c.TempDir, "pltlab-pages-")
	if err != nil {
		return Summary{}, fmt.Errorf("make page directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	pgs, err := generatePages(c, tmp)
	if err != nil {
		return Summary{}, err
	}
	r := &runner{c: c, w: w, pages: pgs, links: links, jobs: p.Jobs, env: environment(c), plts: map[Arm][]float64{},
		settings: c.Settings(), keeper: artifacts.NewKeeper(c.Artifacts.For), skip: map[int]bool{}, total: len(p.Mine), hash: ConfigHash(c), units: unitsDigest(c), inputs: InputFiles(c)}
	if r.c.Launch == nil {
		r.c.Launch = browser.Launch
	}
	r.dev, _ = device.Parse(c.Device) // Validate read it
	r.sum.Scheduled = len(r.jobs)
	for i := range r.jobs {
		r.skip[i] = true // another shard's load, or one made before the resume
	}
	left := p.Left()
	for _, i := range left {
		delete(r.skip, i)
	}
	r.sum.Resumed = len(p.Mine) - len(left)
	if c.Shard.Count > 0 && len(c.Done) == 0 { // a resumed shard wrote its plan line when it began
		if err := r.emit(PlanRecord(c, len(p.Mine))); err != nil {
			return Summary{}, err
		}
	}
	err = r.run(ctx)
	r.sum.Elapsed = time.Since(start)
	return r.sum, err
}

func parseLinks(c Config) ([]linkspec.Spec, error) {
	var out []linkspec.Spec
	for _, s := range c.Links {
		spec, err := linkspec.Parse(s)
		if err != nil {
			return nil, err
		}
		spec.Seed = cmp.Or(spec.Seed, c.Seed)
		out = append(out, spec)
	}
	return out, nil
}

func generatePages(c Config, tmp string) ([]*page, error) {
	var out []*page
	for i, s := range c.Pages {
		if pages.IsReplay(s) {
			a, err := c.archive(s)
			if err != nil {
				return nil, fmt.Errorf("page %q: %w", s, err)
			}
			out = append(out, &page{spec: a.ReplaySpec(), input: s, manifest: a.Manifest(), archive: a})
			continue
		}
		spec, err := pages.ParseSpec(s)
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(tmp, fmt.Sprintf("page%d", i))
		m, err := pages.Generate(dir, spec, pages.DefaultSeed)
		if err != nil {
			return nil, fmt.Errorf("generate page %q: %w", s, err)
		}
		out = append(out, &page{spec: spec, input: s, dir: dir, manifest: m})
	}
	return out, nil
}

// runner holds one Run's state.
type runner struct {
	c     Config
	dev   device.Device // c.Device, parsed
	w     *result.Writer
	pages []*page
	links []linkspec.Spec
	jobs  []Job
	env   *result.Env
	sum   Summary
	done  int
	plts  map[Arm][]float64 // valid measured PLTs per arm, for the running medians
	// keeper decides which loads keep their artifacts (Config.Artifacts.For).
	keeper *artifacts.Keeper
	// settings go into every record.
	settings *result.Settings
	// writeErr is the first error writing the output: it stops every link.
	writeErr error
	// skip holds the indexes into jobs not to make: made before (Config.Done) or another shard's.
	skip map[int]bool
	// total is the number of this shard's loads (all loads when not sharded).
	total int
	// hash is ConfigHash(c), on every line.
	hash string
	// units is the digest of the shard's units (shard_units), "" when not sharded.
	units string
	// inputs are the run's input files with their digests (InputFiles), read once.
	inputs []result.InputFile
	// failedSeen holds the evidence files counted in sum.ArtifactsFailed.
	failedSeen map[string]bool
	// checked is one past the index of the last link whose self-check started.
	checked int
	// loadOnce makes one attempt at a load; nil means (*runner).load (a seam for the tests of
	// the one retry rule of loads).
	loadOnce func(ctx context.Context, ls *linkSetup, i int, j Job) (*result.Record, error)
	// selfCheck is the link self-check (nil: selfcheck.Run) and settleBusy how the repeat of a
	// failed check measures the machine's busy share while it waits for a quiet one (nil:
	// selfcheck's own, from /proc/stat): seams for the tests of the retry rule.
	selfCheck  func(context.Context, shaping.Link, selfcheck.Options) (result.LinkCheck, error)
	settleBusy func(ctx context.Context, window time.Duration) (busyPct, stealPct float64)
}

// errWrite marks an error writing the result stream (wrapped in a writeError).
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

func (r *runner) run(ctx context.Context) error {
	var errs []error
	for li := range r.links {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !r.pending(li) {
			continue // resumed, or another shard's: every load of this link is skipped
		}
		err := r.runLink(ctx, li)
		if ctx.Err() != nil {
			return errors.Join(ctx.Err(), err)
		}
		var we *writeError
		if errors.As(err, &we) {
			return err // the output is gone (a closed pipe, a full disk): nothing more can be kept
		}
		if err != nil {
			// A failed link does not stop the other links; Run reports it at the end.
			r.c.Logger.Error("link failed", "link", r.c.Links[li], "err", err)
			errs = append(errs, fmt.Errorf("link %q: %w", r.c.Links[li], err))
		}
	}
	return errors.Join(errs...)
}

// linkSetup is what one link needs: the link, one server serving every page (each under its own
// hostname, PageHost) and one browser per protocol, launched on first use: protocol forcing is
// a per-process Chromium switch, and one browser reaches every page's host.
type linkSetup struct {
	link     shaping.Link
	server   *server.Server
	browsers map[int]*browser.Browser // key: protocol index
	ev       *LoadArtifacts           // per-load artifacts; nil when none are wanted
	cross    *flows.Cross             // cross traffic (Config.Cross), nil without
}

// pending reports whether link li has a load to make here (not made before, in this shard).
func (r *runner) pending(li int) bool {
	for i, j := range r.jobs {
		if j.Link == li && !r.skip[i] {
			return true
		}
	}
	return false
}

// runLink makes the loads of link li. Every scheduled load leaves a line: a load record, or a
// harness_error line when the harness could not make it, including the loads a link that
// fails (its self-check, or maxHarnessFailures in a row) never reaches. Only an interrupt
// leaves loads without a line (a partial run, which --resume continues).
func (r *runner) runLink(ctx context.Context, li int) (err error) {
	next := 0 // index in r.jobs of the next job to consider
	defer func() {
		if err != nil && ctx.Err() == nil && r.writeErr == nil {
			err = errors.Join(err, r.abandon(li, next, err))
		}
	}()
	r.checked = li // the links before li are done
	spec := r.links[li]
	ls := &linkSetup{browsers: map[int]*browser.Browser{}}
	defer func() { err = errors.Join(err, ls.close()) }()
	ls.link, err = shaping.Open(ctx, spec)
	if err != nil {
		return fmt.Errorf("open link: %w", err)
	}
	if ls.ev, err = newEvidence(r.c, r.keeper); err != nil {
		return err
	}
	if err := r.checkLink(ctx, li, ls.link); err != nil {
		return err
	}
	if ls.server, err = r.startServer(ctx, ls.link.HostAddr(), ls.ev.ServerOptions()...); err != nil {
		return err
	}
	if ls.cross, err = startCross(ctx, r.c, ls.link); err != nil {
		return err
	}
	failures := 0
	for i, j := range r.jobs {
		next = i
		if j.Link != li || r.skip[i] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := r.loadAttempts(ctx, ls, i, j)
		if ctx.Err() != nil {
			return ctx.Err() // the load was cut short by the interrupt: not a measurement
		}
		if err != nil {
			failures++
			r.c.Logger.Warn("harness failure", "protocol", j.Arm.Protocol, "err", err)
			if werr := r.writeHarnessError(i, j, err); werr != nil {
				return werr
			}
			if failures >= maxHarnessFailures {
				next = i + 1
				return fmt.Errorf("%d harness failures in a row, last: %w", failures, err)
			}
			continue
		}
		failures = 0
		if err := r.write(i, rec); err != nil {
			return err
		}
	}
	return nil
}

// abandon writes a harness_error line for every load of link li from job index from on that
// was not made, because the link failed with cause.
func (r *runner) abandon(li, from int, cause error) error {
	for i := from; i < len(r.jobs); i++ {
		if j := r.jobs[i]; j.Link == li && !r.skip[i] {
			if err := r.writeHarnessError(i, j, fmt.Errorf("not made: the link failed: %w", cause)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jobRecord returns a record describing job j (index i of the schedule) without measurements.
func (r *runner) jobRecord(i int, j Job) *result.Record {
	p := r.pages[j.Page]
	rec := &result.Record{Experiment: r.c.Name, Run: i, Scheduled: len(r.jobs), Time: time.Now().UTC(),
		Warmup: j.Warmup, Mode: j.Arm.Mode, Protocol: j.Arm.Protocol, Env: r.env, Settings: r.settings,
		DeadlineMs: quantity.Ms(r.c.Timeout),
		Page:       result.Page{Spec: p.input, TotalBytes: p.manifest.TotalBytes, Objects: len(p.manifest.Objects)}}
	rec.Link = r.linkResult(j.Link, r.links[j.Link])
	return rec
}

// linkResult is link li's description for a record, from spec (the open link's, or the parsed
// one): the spec as given and the digests of the files it reads (result.Link.Inputs).
func (r *runner) linkResult(li int, spec linkspec.Spec) result.Link {
	l := spec.Result()
	l.Spec = r.c.Links[li]
	for _, path := range linkspec.InputFiles(r.c.Links[li]) {
		for _, f := range r.inputs {
			if f.Path == path {
				l.Inputs = append(l.Inputs, f)
			}
		}
	}
	return l
}

// writeHarnessError writes the harness_error line of job j (index i) that failed with cause.
func (r *runner) writeHarnessError(i int, j Job, cause error) error {
	rec := r.jobRecord(i, j)
	rec.Kind, rec.Error = result.KindHarnessError, cause.Error()
	if err := r.emit(rec); err != nil {
		return err
	}
	r.done++
	r.sum.HarnessErrors++
	r.observe(rec)
	return nil
}

// emit writes rec with the shard and the config hash; a failure to write is kept in r.writeErr
// and stops the whole run.
func (r *runner) emit(rec *result.Record) error {
	rec.Shard, rec.ShardUnits, rec.ConfigHash = r.c.Shard.String(), r.units, r.hash
	if err := r.w.Write(rec); err != nil {
		r.writeErr = err
		return &writeError{err}
	}
	return nil
}

func (r *runner) observe(rec *result.Record) {
	if r.c.Observer != nil {
		r.c.Observer(Progress{Done: r.done, Total: r.total - r.sum.Resumed, Record: rec, ChecksLeft: r.checksLeft(),
			Medians: r.medians()})
	}
}

// checksLeft counts the shaped links after the last one checked that still have loads to make.
func (r *runner) checksLeft() int {
	if r.c.SkipLinkCheck {
		return 0
	}
	n := 0
	for li := r.checked; li < len(r.links); li++ {
		if r.links[li].Shaped() && r.pending(li) {
			n++
		}
	}
	return n
}

// checkLink self-checks link li by the one retry rule (selfcheck.Retry: up to
// result.Attempts checks), writes each check as a link_check line carrying its attempt
// number, names a link that needed a second check in the summary (Summary.Rechecked) and
// returns an error wrapping ErrLinkCheck when every attempt failed. Every link the LINK grammar
// accepts has a check that can fail; none is advisory.
func (r *runner) checkLink(ctx context.Context, li int, l shaping.Link) error {
	if r.c.SkipLinkCheck || l.Namespace() == "" {
		return nil
	}
	r.checked = li + 1
	note, err := selfcheck.Retry(ctx, l, selfcheck.RetryOptions{
		Check: selfcheck.Options{Quick: true}, Run: r.selfCheck, Busy: r.settleBusy, Name: r.c.Links[li], Logger: r.c.Logger,
		Before: func(int) {
			if r.c.Observer != nil {
				r.c.Observer(Progress{Done: r.done, Total: r.total - r.sum.Resumed, Checking: r.c.Links[li],
					ChecksLeft: r.checksLeft(), Medians: r.medians()})
			}
		},
		Record: func(chk result.LinkCheck) error {
			rec := &result.Record{Kind: result.KindLinkCheck, Experiment: r.c.Name, Run: -1, Time: time.Now().UTC(),
				Link: r.linkResult(li, l.Spec()), Check: &chk, Env: r.env, Settings: r.settings}
			if err := r.emit(rec); err != nil {
				return err
			}
			r.observe(rec)
			return nil
		}})
	if note != "" {
		r.sum.Rechecked = append(r.sum.Rechecked, fmt.Sprintf("link %s %s", r.c.Links[li], note))
	}
	return err
}

// PageHost is the hostname page i of an experiment is served under: Host for the first page
// (so that a one-page experiment's URLs are as they always were), "pI.Host" for the others.
func PageHost(i int) string {
	if i == 0 {
		return Host
	}
	return fmt.Sprintf("p%d.%s", i, Host)
}

// startServer starts the link's one server: every page of the run, page i under PageHost(i).
func (r *runner) startServer(ctx context.Context, host netip.Addr, extra ...server.Option) (*server.Server, error) {
	addr := net.JoinHostPort(host.String(), "0")
	var sites []server.Site
	for i, p := range r.pages {
		sites = append(sites, server.Site{Host: PageHost(i), Dir: p.dir, Archive: p.archive})
	}
	srv, err := server.NewSites(sites, append([]server.Option{
		server.WithHost(Host), server.WithAddr(addr), server.WithH1Addr(addr),
		server.WithTCPCC(r.c.TCPCC), server.WithTLSVersion(r.c.TLS), server.With0RTT(true),
		pageServerH3Stack(r.c), server.WithLogger(r.c.Logger)}, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("server for the pages: %w", err)
	}
	if err := srv.Start(ctx); err != nil {
		return nil, fmt.Errorf("start the pages' server: %w", err)
	}
	info := srv.Info()
	r.env.UDPRcvBuf, r.env.UDPSndBuf = info.UDPRcvBuf, info.UDPSndBuf
	if info.H3Stack != server.StackQUICGo && measuresQUIC(r.c) {
		r.env.QUIC = info.QUICStack // read from the running server
	}
	return srv, nil
}

// pageServerH3Stack is the h3 stack option of the pages' server: c's stack when some arm is
// measured over h3, else quic-go's (the one in process: a run of h1 and h2 only starts no
// ngtcp2 server, and is not bound by its one host per server).
func pageServerH3Stack(c Config) server.Option {
	if !measuresQUIC(c) {
		return server.WithH3Stack(server.StackQUICGo, "")
	}
	return server.WithH3Stack(c.H3Stack, c.QUICCC)
}

func (ls *linkSetup) close() error {
	var errs []error
	if ls.cross != nil {
		errs = append(errs, ls.cross.Close())
	}
	for _, b := range ls.browsers {
		errs = append(errs, b.Close())
	}
	if ls.server != nil {
		errs = append(errs, ls.server.Close())
	}
	if ls.link != nil {
		errs = append(errs, ls.link.Close())
	}
	return errors.Join(errs...)
}

// browserFor returns the browser of protocol proto on this link, launching it on first use: it
// reaches every page's host (PageHost) and every page's other origins (server.SiteInfo.Origins)
// over proto.
func (r *runner) browserFor(ctx context.Context, ls *linkSetup, proto string) (*browser.Browser, error) {
	key := protocol.Index(proto)
	if b := ls.browsers[key]; b != nil {
		return b, nil
	}
	info := ls.server.Info()
	port, err := portOf(info.Addr(proto))
	if err != nil {
		return nil, fmt.Errorf("server address for %s: %w", proto, err)
	}
	var hosts, origins []string
	for i := range r.pages {
		hosts = append(hosts, PageHost(i))
	}
	for _, st := range info.Sites {
		origins = append(origins, st.Origins...)
	}
	b, err := r.c.Launch(ctx, append([]browser.Option{browser.WithPort(port), browser.WithOriginHosts(origins...),
		browser.WithChrome(r.c.Chrome), browser.WithNetNS(ls.link.Namespace()),
		browser.WithProtocol(proto), browser.WithSPKI(info.SPKI),
		browser.WithResolve(Host, ls.link.HostAddr().String()), browser.WithSiteHosts(hosts[1:]...), browser.WithLogger(r.c.Logger),
		browser.WithTempDir(r.c.TempDir), browser.WithDevice(r.dev), browser.WithSitePorts(info.SitePorts(proto))},
		ls.ev.BrowserOptions(r.c.Version)...)...)
	if err != nil {
		return nil, fmt.Errorf("launch browser for %s: %w", proto, err)
	}
	ls.browsers[key] = b
	return b, nil
}

// portOf returns the port of "host:port".
func portOf(addr string) (int, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return 0, err
	}
	return int(ap.Port()), nil
}

// loadAttempts makes the load of job j (index i of the schedule) and, when the emulator was late
// during a measured load's attempt (result.OutcomeEmulatorLate), makes it once more: the one
// retry rule (result.Retry), applied to loads. It returns the last
// attempt's record, which summarises the earlier one (Record.EarlierAttempts): a scheduled load
// leaves one line, whatever its attempts.
func (r *runner) loadAttempts(ctx context.Context, ls *linkSetup, i int, j Job) (*result.Record, error) {
	once := r.loadOnce
	if once == nil {
		once = r.load
	}
	var earlier []result.EarlierAttempt
	var rec *result.Record
	_, err := result.Retry(func(attempt int) (again bool, err error) {
		rec, err = once(ctx, ls, i, j)
		if err != nil || ctx.Err() != nil {
			return false, err
		}
		if attempt > 1 {
			rec.Attempt, rec.EarlierAttempts = attempt, earlier
			r.sum.Redone++
		}
		if j.Warmup || attempt >= result.Attempts || result.Classify(rec) != result.OutcomeEmulatorLate {
			return false, nil
		}
		r.c.Logger.Warn("emulator late during a load: made again", "run", i, "protocol", j.Arm.Protocol,
			"late_ms", rec.Emulator.LateMs(), "bound_ms", rec.Emulator.LateBound(), "reason", rec.InvalidReason)
		earlier = append(earlier, result.Earlier(rec, rec.HostBusyPct, rec.HostStealPct))
		r.countFailed(rec) // the attempt's own evidence that was not written whole
		return true, nil
	})
	return rec, err
}

// load makes one load of job j (index i of the schedule, its run number) and returns its record
// with the run's full context.
func (r *runner) load(ctx context.Context, ls *linkSetup, i int, j Job) (*result.Record, error) {
	p, srv := r.pages[j.Page], ls.server
	b, err := r.browserFor(ctx, ls, j.Arm.Protocol)
	if err != nil {
		return nil, err
	}
	info := srv.Info()
	if err := srv.CloseConnections(); err != nil {
		return nil, fmt.Errorf("close server connections: %w", err)
	}
	endPause := gcpause.Begin() // collect now, not during the load (package gcpause)
	defer endPause()
	ls.link.TakeCounters() // start this load's counters from zero
	t := browser.Target{URL: r.pageURL(info, j), Protocol: j.Arm.Protocol, Manifest: p.manifest,
		Mode: j.Arm.Mode, Timeout: r.c.Timeout, Visual: r.c.Visual, Deterministic: p.archive != nil && r.c.ReplayDeterministic,
		CloseConnections: func() error {
			err := srv.CloseConnections()
			ls.link.TakeCounters() // the priming load's packets are not this load's
			return err
		}}
	if err := ls.ev.Begin(i, ls.link, &t); err != nil {
		return nil, err
	}
	since := time.Now()
	host := hostload.Start()
	rec, err := b.Load(ctx, t)
	counters := ls.link.TakeCounters()
	endPause()
	busy, steal := host.End()
	cell := fmt.Sprintf("%d/%d/%s", j.Page, j.Link, j.Arm)
	if _, eerr := ls.ev.End(srv, rec, cell, b.NetLogPath()); eerr != nil {
		r.c.Logger.Warn("artifacts", "run", i, "err", eerr)
	}
	if err != nil {
		return nil, err
	}
	if counters != nil {
		counters.LateBoundMs = result.LatenessBoundMs
	}
	rec.Emulator = counters
	rec.HostBusyPct, rec.HostStealPct, rec.BrowserProcs = busy, steal, hostload.CountProcs(browser.ProcessNames...)
	rec.Browsers = browser.Instances()
	result.MarkLate(hostload.Describe(busy, steal), rec)
	rec.Experiment, rec.Warmup, rec.Env, rec.Settings = r.c.Name, j.Warmup, r.env, r.settings
	rec.Scheduled = len(r.jobs)
	rec.Page = result.Page{Spec: p.input, TotalBytes: p.manifest.TotalBytes, Objects: len(p.manifest.Objects)}
	rec.Link = r.linkResult(j.Link, ls.link.Spec())
	if ls.cross != nil {
		rec.Cross = ls.cross.Spec().String()
	}
	if err := serverFacts(rec, srv, since, len(p.manifest.OriginHosts()) > 0); err != nil {
		return nil, err
	}
	if p.archive != nil {
		replayFacts(rec, p.archive, srv.ReplayStats(since))
		rec.Replay.Deterministic = r.c.ReplayDeterministic
	}
	return rec, nil
}

// pageURL is the URL a load of job j navigates to: the page's site URL (PageHost) on the
// protocol's port, or, for a replayed HAR whose main document was on another host than every
// page's host, that document's own URL on its recorded host without a port (an origin of the
// site, mapped to the server like every recorded host), so that the page's absolute URLs to its
// own host stay same-origin as they were recorded.
func (r *runner) pageURL(info server.Info, j Job) string {
	p := r.pages[j.Page]
	if a := p.archive; a != nil && !r.isPageHost(a.DocHost) {
		return "https://" + a.DocHost + a.DocPath
	}
	return info.SiteURL(PageHost(j.Page), j.Arm.Protocol)
}

// isPageHost reports whether host is the host of one of the run's pages (PageHost).
func (r *runner) isPageHost(host string) bool {
	for i := range r.pages {
		if PageHost(i) == host {
			return true
		}
	}
	return false
}

// replayFacts records what archive a answered during a load (st) in rec.Replay, and makes a
// load with misses invalid: the reason names the count and the first missed requests, so that
// a replay the archive could not answer whole is never taken as valid.
func replayFacts(rec *result.Record, a *pages.Archive, st server.ReplayStats) {
	rec.Replay = &result.Replay{Archive: a.File, Digest: a.Digest, Hits: st.Hits, QueryMatches: st.QueryMatches,
		Misses: st.Misses, Missed: st.Missed}
	if st.Misses == 0 {
		return
	}
	why := fmt.Sprintf("replay: %d requests not in the archive (%s)", st.Misses, strings.Join(st.Missed, ", "))
	if rec.InvalidReason != "" {
		why += "; " + rec.InvalidReason
	}
	rec.Valid, rec.InvalidReason = false, why
}

// serverFacts copies what the server saw of the page's connection into rec and, for a page with
// objects on other origins, its connections per host (originConns). With the ngtcp2 stack an h3
// load is also checked against its server's own record (checkNgtcp2). The error is a harness
// failure: the ngtcp2 server exited, or a connection of it did not end.
func serverFacts(rec *result.Record, srv *server.Server, since time.Time, origins bool) error {
	if origins {
		originConns(rec, srv.HostConns(since))
	}
	info := srv.Info()
	quic := isQUIC(rec.Protocol)
	rec.CC = info.TCPCC
	if quic {
		rec.CC = info.QUICCC
	}
	conn, ok, err := srv.PageConn(since)
	if err != nil {
		return err
	}
	if ok {
		rec.TLSVersion, rec.Resumed, rec.Used0RTT = conn.TLSVersion, conn.Resumed, conn.Used0RTT
		rec.CC = cmp.Or(conn.TCPCC, rec.CC)
	}
	rec.TCPCC = rec.CC // the v1 field, kept for readers of older records
	if quic && info.H3Stack == server.StackNgtcp2 {
		checkNgtcp2(rec, conn, ok)
	}
	return nil
}

// originConns records the load's connections per host (server.HostConns) in rec.Origins, and
// Coalesced when one connection served several hosts.
func originConns(rec *result.Record, hc []server.HostConns) {
	for _, h := range hc {
		rec.Origins = append(rec.Origins, result.OriginConns{Host: h.Host, Conns: h.Conns, Shared: h.Shared})
		rec.Coalesced = rec.Coalesced || h.Shared > 0
	}
}

// checkNgtcp2 makes an h3 load served by the ngtcp2 stack invalid unless that server's qlog
// shows the page's connection (ok) and that it sent at least the page's bytes on request
// streams (ConnInfo.BodyBytes: response bodies plus HTTP/3 framing). A valid load then proves
// that the page came from ngtcp2, not from some other h3 server on the path.
func checkNgtcp2(rec *result.Record, conn server.ConnInfo, ok bool) {
	why := ""
	switch {
	case !ok:
		why = "no connection of the ngtcp2 server opened during the load (its qlogs show none)"
	case conn.BodyBytes < rec.Page.TotalBytes:
		why = fmt.Sprintf("the ngtcp2 server's page connection sent %d bytes on request streams, the page's objects are %d bytes (qlog %s)",
			conn.BodyBytes, rec.Page.TotalBytes, conn.Qlog)
	}
	if why == "" || !rec.Valid {
		return
	}
	rec.Valid, rec.InvalidReason = false, why
}

// write writes the load record of job index i and counts it.
func (r *runner) write(i int, rec *result.Record) error {
	rec.Run = i
	if err := r.emit(rec); err != nil {
		return err
	}
	r.done++
	r.count(rec)
	r.observe(rec)
	return nil
}

// count adds the load rec to the summary (by result.Classify) and the running medians.
func (r *runner) count(rec *result.Record) {
	r.sum.Records++
	r.countFailed(rec)
	if rec.Warmup {
		return
	}
	switch result.Classify(rec) {
	case result.OutcomeValid:
		r.sum.Valid++
		a := Arm{Protocol: rec.Protocol, Mode: rec.Mode}
		r.plts[a] = append(r.plts[a], rec.PLTMs)
	case result.OutcomeTimedOut:
		r.sum.TimedOut++
	case result.OutcomeNetworkFailed:
		r.sum.NetworkFailed++
	case result.OutcomeEmulatorLate:
		r.sum.EmulatorLate++
	default:
		r.sum.Invalid++
	}
}

// countFailed counts rec's evidence files that were not written whole in the summary, each file
// once however many records list it (a browser's NetLog is listed by every load it covers).
func (r *runner) countFailed(rec *result.Record) {
	for _, f := range rec.ArtifactsFailed {
		if r.failedSeen == nil {
			r.failedSeen = map[string]bool{}
		}
		if !r.failedSeen[f.Path] {
			r.failedSeen[f.Path] = true
			r.sum.ArtifactsFailed++
		}
	}
}

// medians returns the running median PLT per arm.
func (r *runner) medians() []ArmMedian {
	out := make([]ArmMedian, len(r.c.Arms))
	for i, a := range r.c.Arms {
		v := slices.Clone(r.plts[a])
		slices.Sort(v)
		out[i] = ArmMedian{Arm: a, N: len(v)}
		if n := len(v); n > 0 {
			out[i].MedianMs = (v[(n-1)/2] + v[n/2]) / 2
		}
	}
	return out
}

// environment describes the machine and software, once per experiment (hostenv.Local).
func environment(c Config) *result.Env {
	env := hostenv.Local(c.Version, c.Seed)
	env.IdlePollCPUs = idlepoll.Active()
	env.ShieldCPU = cpushield.CPU()
	env.BrowserPer = plan.BrowserPerProtocol
	return env
}
