// Package experiment runs a matrix of page loads (pages x links x protocols x modes x runs) and streams records.
package experiment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/artifacts"
	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/device"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// Defaults of a Config, used where a field is zero.
const (
	// DefaultRuns is the number of measured loads per (page, link, protocol, mode) cell.
	DefaultRuns = 10
	// DefaultTimeout is the per-load deadline; a load that hits it is recorded as censored.
	DefaultTimeout = 60 * time.Second
	// DefaultSeed seeds the run order.
	DefaultSeed = 1
	// DefaultTCPCC is the server's TCP congestion control. CUBIC was Linux's default in 2015 and
	// is what the Carlucci et al. testbed used; this machine's default (BBR) is never inherited.
	DefaultTCPCC = "cubic"
	// DefaultWarmup is the number of warm-up loads per cell, for flags and matrix files alike.
	DefaultWarmup = 1
	// DefaultTLS is the TLS version of the TCP listeners.
	DefaultTLS = "1.3"
)

// Arm is one (protocol, mode) combination measured on every page and link.
type Arm struct {
	// Protocol is a protocol.Table name: "h1", "h2" or "h3".
	Protocol string `yaml:"protocol"`
	// Mode is result.Cold or result.Warm.
	Mode result.Mode `yaml:"mode"`
}

// String returns "h3" for a cold arm and "h3 warm" for a warm one.
func (a Arm) String() string {
	if a.Mode == result.Warm {
		return a.Protocol + " warm"
	}
	return a.Protocol
}

// Config describes one experiment: every page is loaded over every link with every arm, Runs
// times, after Warmup unrecorded-in-statistics loads per cell.
type Config struct {
	// Name names the experiment in every record (default "run-<time>").
	Name string
	// Pages are page SPECs (pages.ParseSpec).
	Pages []string
	// Links are LINK specs (linkspec.Parse).
	Links []string
	// Arms are the (protocol, mode) combinations; see CrossArms.
	Arms []Arm
	// Runs is the number of measured loads per cell (DefaultRuns when 0).
	Runs int
	// Warmup is the number of warm-up loads per cell, recorded with warmup:true.
	Warmup int
	// Timeout is the per-load deadline (DefaultTimeout when 0).
	Timeout time.Duration
	// Seed seeds the interleaved run order and the links' loss generators (DefaultSeed when 0).
	Seed int64
	// TCPCC is the server's TCP congestion control: "cubic", "bbr" or "reno" (DefaultTCPCC when "").
	TCPCC string
	// TLS is the TCP listeners' TLS version, "1.2" or "1.3" (default "1.3"); QUIC always uses 1.3.
	TLS string
	// Device is the emulated client device (device.Parse: "desktop", a preset such as
	// "motog2013", or "cpu=X", optionally ":cgroup", ":cdp" or ":cgroup+cdp"); "" is the desktop.
	// It is hashed (a device changes every measurement) and every record carries it.
	Device string
	// H3Stack is the HTTP/3 stack that serves h3: "quic-go" (the default, also "") or "ngtcp2"
	// (server.H3Stacks). It is hashed when not the default.
	H3Stack string
	// QUICCC is the h3 stack's congestion controller: "" for its default (quic-go: newreno, its
	// only one; ngtcp2: cubic), or one of server.Ngtcp2CCs for ngtcp2. Hashed with H3Stack.
	QUICCC string
	// Chrome is the Chromium binary ("" = search as browser.FindChromium does).
	Chrome string
	// TempDir is where the run's temporary files go (generated pages, Chromium's profiles and
	// Chromium's own TMPDIR); "" means os.TempDir(). The caller owns and removes it.
	TempDir string
	// SkipLinkCheck skips the self-check of each link before it is used.
	SkipLinkCheck bool
	// Cross is a bulk flow (flows.ParseSpec: PROTO[:CC], e.g. "h1:cubic") kept running through
	// each link, after its self-check, while the pages load; "" for none. Records say so (Cross).
	Cross string
	// Version is the pltlab version recorded in every record's env.
	Version string
	// Observer, when set, is called after every record is written (from the running goroutine).
	Observer func(Progress)
	// Logger receives progress and diagnostics (slog.Default() when nil).
	Logger *slog.Logger
	// Artifacts chooses the per-load evidence files to write and keep (none by default); see
	// package artifacts.
	Artifacts artifacts.Config
	// Visual measures visual metrics (SpeedIndex, visual completeness, filmstrip) of every load
	// from a DevTools screencast (browser.Target.Visual).
	Visual bool
	// ReplayDeterministic installs browser.DeterministicJS (a fixed clock, seeded Math.random)
	// in the loads of replayed pages ("har:FILE"; browser.Target.Deterministic); recorded in
	// result.Replay.Deterministic.
	ReplayDeterministic bool
	// Done lists the indexes (in Order(c)) of loads already made, which Run skips: the loads
	// of an earlier, interrupted run of the same Config being resumed (see Schedule.Resume).
	Done map[int]bool
	// Overrides lists the command-line flags that replaced a matrix file's values
	// ("runs=3 (matrix: 20)"); it is copied into every record's settings.
	Overrides []string
	// Launch launches a browser; nil means browser.Launch. It is a seam for tests (a launcher
	// that fails) and for wrappers.
	Launch LaunchFunc
	// Traces are the trace files a matrix's links name (ReadMatrix), relative ones resolved from
	// the matrix file's directory into Links. Not hashed.
	Traces []Trace
	// Units are the IDs of the shard's units (plan.Unit.ID), recorded in its plan line and, by
	// digest, in every line (result.Record.ShardUnits): the caller's (Schedule.Select), else
	// the part of Schedule.Shards (NewSchedule sets them). Not hashed.
	Units []string
	// Study is "STUDY/SCALE" for a part of a study's shard (Schedule.Select); it goes into the plan line
	// (result.Plan.Study).
	Study string
	// Shard, when set, restricts Run to one part of the schedule (see Schedule.Shards); every line
	// written then carries the shard, and the first is a plan line (PlanRecord).
	Shard plan.Shard

	// Archives holds the archives of the replayed pages (har:FILE) read once (ReadArchives),
	// by page; a replayed page without one is read where it is needed.
	Archives map[string]*pages.Archive

	// inputs, when not nil, are the input files' digests to hash instead of reading the
	// files (a Config rebuilt from a plan line: FromPlan).
	inputs []result.InputFile
}

// ReadArchives reads each replayed page of c (har:FILE) once into c.Archives, so that the
// checks, the estimates, the plan's input digests and the run read that one parse (a HAR of
// 100k entries takes seconds to parse). Errors name the page and what is accepted.
func (c *Config) ReadArchives() error {
	for _, s := range c.Pages {
		if !pages.IsReplay(s) || c.Archives[s] != nil {
			continue
		}
		a, err := c.archive(s)
		if err != nil {
			return fmt.Errorf("bad page %q: %w (a page is a SPEC, a preset, or har:FILE, a HAR 1.2 with response bodies)", s, err)
		}
		if c.Archives == nil {
			c.Archives = map[string]*pages.Archive{}
		}
		c.Archives[s] = a
	}
	return nil
}

// archive returns the archive of the replayed page s: c.Archives', or read now.
func (c Config) archive(s string) (*pages.Archive, error) {
	if a := c.Archives[s]; a != nil {
		return a, nil
	}
	src, err := pages.ParseSource(s)
	if err != nil {
		return nil, err
	}
	if !src.Replay() {
		return nil, fmt.Errorf("page %q replays no HAR", s)
	}
	return pages.ReadArchive(src.HAR)
}

// LaunchFunc launches a browser with the options given (browser.Launch's signature).
type LaunchFunc func(ctx context.Context, opts ...browser.Option) (*browser.Browser, error)

// Settings returns the record settings of c: what it asked for that changes a measurement.
func (c Config) Settings() *result.Settings { return c.withDefaults().settings() }

// settings is Settings of a Config whose defaults are applied.
func (c Config) settings() *result.Settings {
	return &result.Settings{TCPCC: c.TCPCC, TLS: c.TLS, TimeoutMs: quantity.Ms(c.Timeout),
		Device: deviceSpec(c.Device), H3Stack: h3Stack(c), QUICCC: quicCC(c), Overrides: c.Overrides}
}

// Progress is what an Observer sees after each record.
type Progress struct {
	// Done and Total count loads, warm-ups included.
	Done, Total int
	// Record is the record just written; nil when Checking is set.
	Record *result.Record
	// Checking, when not "", is the LINK spec whose self-check (about 10 s) is starting; no
	// record was written.
	Checking string
	// ChecksLeft is the number of link self-checks still to come (not counting one starting
	// now), so that an ETA can include them.
	ChecksLeft int
	// Medians is the running median PLT of the valid measured loads per arm so far, in the
	// order of Config.Arms (0 where there is none yet), in ms.
	Medians []ArmMedian
}

// ArmMedian is the running median PLT of one arm.
type ArmMedian struct {
	// Arm is the arm.
	Arm Arm
	// MedianMs is the median PLT of its valid measured loads so far, in ms (0 = none yet).
	MedianMs float64
	// N is the number of loads behind the median.
	N int
}

// CrossArms returns every protocol in every mode: the arms of `pltlab run`.
func CrossArms(protocols []string, modes []result.Mode) []Arm {
	var arms []Arm
	for _, m := range modes {
		for _, p := range protocols {
			arms = append(arms, Arm{Protocol: p, Mode: m})
		}
	}
	return arms
}

// Loads returns the number of loads of c, warm-ups included: len(Order(c)), counted without
// deriving the schedule.
func (c Config) Loads() int {
	return len(c.Links) * len(c.Pages) * len(c.Arms) * (cmp.Or(c.Runs, DefaultRuns) + c.Warmup)
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	c.Runs = cmp.Or(c.Runs, DefaultRuns)
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.Seed = cmp.Or(c.Seed, DefaultSeed)
	c.TCPCC = cmp.Or(c.TCPCC, DefaultTCPCC)
	c.TLS = cmp.Or(c.TLS, DefaultTLS)
	if c.Name == "" && c.Shard.Count > 0 {
		// Every shard of a sweep must name it alike, whenever and wherever it starts.
		c.Name = "sweep-" + configHash(c)
	}
	c.Name = cmp.Or(c.Name, "run-"+time.Now().UTC().Format("20060102T150405Z"))
	c.Logger = cmp.Or(c.Logger, slog.Default())
	return c
}

// Validate checks c's fields that need no parsing of specs; it returns one error naming the bad
// value and what is accepted.
func (c Config) Validate() error {
	var errs []error
	if len(c.Pages) == 0 {
		errs = append(errs, errors.New("no page: give at least one page SPEC"))
	}
	if len(c.Links) == 0 {
		errs = append(errs, errors.New("no link: give at least one LINK spec"))
	}
	if len(c.Arms) == 0 {
		errs = append(errs, fmt.Errorf("no protocol: give at least one of %s", strings.Join(protocol.Names(), ", ")))
	}
	errs = append(errs, duplicate("page", c.Pages), duplicate("link", c.Links))
	for i, a := range c.Arms {
		if slices.Contains(c.Arms[:i], a) {
			errs = append(errs, fmt.Errorf("protocol %s in mode %s given twice: accepted each once", a.Protocol, a.Mode))
		}
		if !protocol.Known(a.Protocol) {
			errs = append(errs, fmt.Errorf("bad protocol %q: accepted %s", a.Protocol, strings.Join(protocol.Names(), ", ")))
		}
		if a.Mode != result.Cold && a.Mode != result.Warm {
			errs = append(errs, fmt.Errorf("bad mode %q: accepted cold, warm", a.Mode))
		}
	}
	if _, err := device.Parse(c.Device); err != nil {
		errs = append(errs, err)
	}
	if c.Runs < 0 || c.Runs > 100000 {
		errs = append(errs, fmt.Errorf("bad runs %d: accepted 1..100000", c.Runs))
	}
	if c.Warmup < 0 || c.Warmup > 100 {
		errs = append(errs, fmt.Errorf("bad warmup %d: accepted 0..100", c.Warmup))
	}
	if c.Timeout < 0 || (c.Timeout > 0 && c.Timeout < time.Second) {
		errs = append(errs, fmt.Errorf("bad timeout %v: accepted 1s or more", c.Timeout))
	}
	switch c.TCPCC {
	case "", "cubic", "bbr", "reno":
	default:
		errs = append(errs, fmt.Errorf("bad tcp-cc %q: accepted cubic, bbr, reno", c.TCPCC))
	}
	if c.Cross != "" {
		if fs, err := flows.ParseSpec(c.Cross); err != nil {
			errs = append(errs, fmt.Errorf("bad cross traffic: %w", err))
		} else if _, err := flows.ResolveQUIC([]flows.Spec{fs}, server.StackQUICGo, ""); err != nil {
			// the cross traffic's own server is quic-go's, whatever the page server's h3 stack
			errs = append(errs, fmt.Errorf("bad cross traffic: %w", err))
		}
	}
	switch c.TLS {
	case "", "1.2", "1.3":
	default:
		errs = append(errs, fmt.Errorf("bad tls %q: accepted 1.2, 1.3", c.TLS))
	}
	if err := server.CheckH3Stack(c.H3Stack, c.QUICCC); err != nil {
		errs = append(errs, err)
	} else if h3Stack(c) == server.StackNgtcp2 && c.Artifacts.Has(artifacts.Qlog) {
		errs = append(errs, errors.New("qlog artifacts are kept for quic-go only: the ngtcp2 server's qlogs are read for the records and removed; accepted: --artifacts without qlog with --h3-stack ngtcp2"))
	}
	return errors.Join(errs...)
}

// duplicate returns an error naming the first value given twice in values, nil if none is.
func duplicate(what string, values []string) error {
	for i, v := range values {
		if slices.Contains(values[:i], v) {
			return fmt.Errorf("%s %q given twice: accepted each %s once", what, v, what)
		}
	}
	return nil
}

// ParseProtocols parses a comma-separated protocol list ("h1,h2,h3"), keeping order and
// refusing duplicates and unknown names.
func ParseProtocols(s string) ([]string, error) {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		p = strings.TrimSpace(p)
		if !protocol.Known(p) {
			return nil, fmt.Errorf("bad protocol %q in %q: accepted a comma-separated list of %s", p, s, strings.Join(protocol.Names(), ", "))
		}
		if slices.Contains(out, p) {
			return nil, fmt.Errorf("protocol %q given twice in %q", p, s)
		}
		out = append(out, p)
	}
	return out, nil
}

// ParseMode parses "cold" or "warm".
func ParseMode(s string) (result.Mode, error) {
	switch m := result.Mode(s); m {
	case result.Cold, result.Warm:
		return m, nil
	}
	return "", fmt.Errorf("bad mode %q: accepted cold, warm", s)
}

// CheckTCPCC tries, on a throwaway socket in this process's context (server.ProbeTCPCC), every
// TCP congestion control c sets: the server's (TCPCC) and a TCP cross flow's. It returns one
// line naming the first refused value and what is accepted, so that a run refuses before any
// setup instead of losing every load to the harness. Call it where the server will run: in a
// rootless run, inside the user namespace.
func CheckTCPCC(c Config) error {
	c = c.withDefaults()
	if err := server.ProbeTCPCC(c.TCPCC); err != nil {
		return err
	}
	if c.Cross != "" {
		if fs, err := flows.ParseSpec(c.Cross); err == nil {
			return flows.CheckCC(fs)
		}
	}
	return nil
}

// measuresQUIC reports whether some arm of c is measured over QUIC (h3).
func measuresQUIC(c Config) bool {
	return slices.ContainsFunc(c.Arms, func(a Arm) bool { return isQUIC(a.Protocol) })
}

// CheckH3Stack refuses, in one line, an HTTP/3 stack this machine cannot run: the ngtcp2 stack
// without gtlsserver on PATH (server.CheckNgtcp2), when some arm is h3.
func CheckH3Stack(c Config) error {
	if h3Stack(c) != server.StackNgtcp2 || !measuresQUIC(c) {
		return nil
	}
	return server.CheckNgtcp2()
}

// CheckSpecs parses every page and link spec of c and returns the first error (one line naming
// the bad spec and what is accepted), so that bad input is refused before anything is set up.
// It reads the replayed pages c.Archives lacks (call c.ReadArchives first to keep that parse).
func CheckSpecs(c Config) error {
	if err := c.ReadArchives(); err != nil {
		return err
	}
	for _, s := range c.Pages {
		if _, err := c.PageSpec(s); err != nil {
			return fmt.Errorf("bad page %q: %w", s, err)
		}
	}
	if err := checkPageHosts(c, h3Stack(c) == server.StackNgtcp2 && measuresQUIC(c)); err != nil {
		return err
	}
	for _, s := range c.Links {
		if _, err := linkspec.Parse(s); err != nil {
			return fmt.Errorf("bad link %q: %w", s, err)
		}
	}
	return nil
}

// CheckDevice tries the CPU budget c.Device needs (a cgroup made and removed at once), so that a
// machine where the kernel refuses one (no cgroup cpu controller, a user without a delegated
// cgroup) is told before anything is set up. Errors name the device and what the kernel said;
// nil for the desktop and for CDP throttling alone.
func CheckDevice(c Config) error {
	d, err := device.Parse(c.Device)
	if err != nil || !d.Budgeted() {
		return err
	}
	g, err := device.NewGroup()
	if err != nil {
		return fmt.Errorf("device %s needs a CPU budget: %w", d, err)
	}
	return g.Close()
}

// h3Stack is c's HTTP/3 stack as records and hashes carry it: "" for quic-go, the default.
func h3Stack(c Config) string {
	if c.H3Stack == server.StackQUICGo {
		return ""
	}
	return c.H3Stack
}

// quicCC is c's QUIC congestion controller as records and hashes carry it: "" for quic-go
// (NewReno, its only one), else the controller, its default filled in.
func quicCC(c Config) string {
	if h3Stack(c) == "" {
		return ""
	}
	return cmp.Or(c.QUICCC, server.DefaultNgtcp2CC)
}

// PageSpec parses one page of c: a page SPEC (pages.ParseSpec), or "har:FILE", a HAR to replay
// (c.Archives', else pages.ReadArchive), which gives the spec of the HAR's shape for cost and
// memory estimates (pages.Archive.ReplaySpec). Errors name what is accepted.
func (c Config) PageSpec(s string) (pages.Spec, error) {
	if !pages.IsReplay(s) {
		return pages.ParseSpec(s)
	}
	a, err := c.archive(s)
	if err != nil {
		return pages.Spec{}, fmt.Errorf("%w (a page is a SPEC, a preset, or har:FILE, a HAR 1.2 with response bodies)", err)
	}
	return a.ReplaySpec(), nil
}

// checkPageHosts refuses pages that would serve one host twice: the one server answers each host
// for one page, so a replayed HAR's hosts (pages.Archive.Hosts) must not be another page's host
// (PageHost) or origin (pages.OriginHost of its @ORIGIN labels), nor another HAR's. Two HARs
// recorded from the same page share their hosts: replay them in separate runs.
//
// With oneHost (the ngtcp2 stack serving h3, which serves one host per server) a page with
// objects on other hosts than its own is refused too, naming what is accepted.
func checkPageHosts(c Config, oneHost bool) error {
	pgs := c.Pages
	owner := map[string]string{}
	claim := func(host, page string) error {
		if o, ok := owner[host]; ok && o != page {
			return fmt.Errorf("pages %q and %q both serve host %s: one server answers each host for one page (a HAR pltlab recorded names plt.test: give it as the first --page; replay two such HARs in separate runs)", o, page, host)
		}
		owner[host] = page
		return nil
	}
	for i, s := range pgs {
		hosts := []string{PageHost(i)}
		if pages.IsReplay(s) {
			a, err := c.archive(s)
			if err != nil {
				return fmt.Errorf("bad page %q: %w", s, err)
			}
			hosts = append(hosts, a.Hosts...)
		} else if spec, err := pages.ParseSpec(s); err == nil {
			id := pages.PageID(spec.String(), pages.DefaultSeed)
			for _, it := range spec.Items {
				if it.Origin != "" {
					hosts = append(hosts, pages.OriginHost(it.Origin, id))
				}
			}
		}
		for _, h := range hosts {
			if err := claim(h, s); err != nil {
				return err
			}
		}
		others := slices.DeleteFunc(slices.Clone(hosts[1:]), func(h string) bool { return h == hosts[0] })
		if oneHost && len(others) > 0 {
			return fmt.Errorf("page %q has objects on other origins (%s): the %s h3 stack serves one host per server; accepted with it: pages on one origin, or --protocols without h3 (else --h3-stack %s)",
				s, strings.Join(others, ", "), server.StackNgtcp2, server.StackQUICGo)
		}
	}
	return nil
}
