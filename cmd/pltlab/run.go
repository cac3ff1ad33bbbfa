package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/device"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// runFlags are the flags of 'pltlab run'.
type runFlags struct {
	setup               *measureSetup // the command's set-up and link probe (nil: the kernel's)
	pages, links        []string
	protocols, modes    string
	matrix              string
	runs, warmup        int
	timeout             time.Duration
	seed                int64
	out                 string
	name                string
	replayDeterministic bool
	tcpCC, tls          string
	h3Stack, quicCC     string
	chrome              string
	device              string
	noCheck, force      bool
	launchTimeout       time.Duration
	art                 artifactFlags
	cross               string
	resume              bool
	shard               string
	dryRun              bool
	view                string
}

func newRunCmd(setup *measureSetup) *cobra.Command { return newRunCmdWith(&runFlags{}, setup) }

// newRunCmdWith builds 'pltlab run' on the flag values f (tests read them back), making setup
// once the flags are checked.
func newRunCmdWith(f *runFlags, setup *measureSetup) *cobra.Command {
	f.setup = setup
	cmd := &cobra.Command{
		Use:   "run --page SPEC --link LINK [flags]",
		Short: "Measure PLT per protocol over a matrix of pages and links",
		Long: `run loads every page over every link with every protocol (and mode), --runs times per
cell, in a seeded interleaved order, with real Chromium behind the emulated link. Every load is
verified (protocol used, bytes received) and written as one JSON line; a summary table follows.
Links other than "none" need root (network namespaces and TUN devices).` + artifactsHelp,
		Example: `  sudo ./bin/pltlab run --page 10x30KB --link carlucci2015 --runs 5 --out /tmp/r.jsonl
  sudo ./bin/pltlab run --page 10x30KB --link carlucci2015 --runs 5 --out /tmp/r.jsonl --resume
  sudo ./bin/pltlab run --page 10x30KB --page 1x1MB --link rate=10mbit,rtt=20ms --link 3g --protocols h2,h3 --runs 3 --out /tmp/m.jsonl
  ./bin/pltlab run --page 5x10KB --link none --runs 2 --out -
  sudo ./bin/pltlab run --page carlucci2015 --link carlucci2015 --runs 2 --artifacts /tmp/a --out /tmp/a.jsonl
  sudo ./bin/pltlab run --page carlucci2015 --link carlucci2015 --protocols h2 --cross h1:cubic --runs 3 --out /tmp/cross.jsonl
  ./bin/pltlab run --matrix grid.yaml --shard 0/8 --dry-run
  ./bin/pltlab run --page 5x10KB --link none --runs 4 --shard 1/2 --out /tmp/shard-1.jsonl
  sudo ./bin/pltlab run --page '1x20KB:css,2x30KB@o1' --link rate=10mbit,rtt=40ms --protocols h2 --runs 1 --warmup 0 --name rec --artifacts /tmp/a --out /tmp/rec.jsonl
  sudo ./bin/pltlab run --page har:/tmp/a/rec/run-0000/load.har --link rate=10mbit,rtt=40ms --protocols h1,h2,h3 --runs 3 --out /tmp/replay.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			sched, err := f.config(cmd)
			if err != nil {
				return err
			}
			if f.dryRun {
				return printDryRun(cmd.OutOrStdout(), sched)
			}
			if err := setup.begin(cmd); err != nil {
				return err
			}
			sched.Config.Version = pltlabVersion()
			stopView, err := startViewBeside(cmd.Context(), f.view, f.out, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer stopView()
			return runExperiment(cmd, sched, f.out, f.outMode(), nil)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.pages, "page", nil, "page SPEC (preset or [COUNTx]SIZE[:TYPE][@ORIGIN] items), or har:FILE to replay a HAR 1.2 with response bodies; repeat for a matrix")
	fl.BoolVar(&f.replayDeterministic, "replay-deterministic", false, "for har:FILE pages: a fixed clock (Date) and seeded Math.random in every document, installed before its scripts (README, 'Replay a HAR')")
	fl.StringArrayVar(&f.links, "link", nil, "LINK spec (preset or key=value items); repeat for a matrix")
	fl.StringVar(&f.protocols, "protocols", "h1,h2,h3", "protocols to compare, comma-separated")
	fl.StringVar(&f.modes, "mode", "cold", "cold, warm, or cold,warm")
	fl.StringVar(&f.matrix, "matrix", "", "YAML matrix file (schema in the README, section 'Measure'); replaces --page/--link; other flags given override its values (recorded in every record)")
	fl.IntVar(&f.runs, "runs", experiment.DefaultRuns, "measured loads per (page, link, protocol, mode)")
	fl.IntVar(&f.warmup, "warmup", experiment.DefaultWarmup, "warm-up loads per cell, recorded with warmup:true")
	fl.DurationVar(&f.timeout, "timeout", experiment.DefaultTimeout, "per-load deadline; a load that hits it is censored")
	fl.Int64Var(&f.seed, "seed", experiment.DefaultSeed, "seed of the interleaved order and of random loss")
	fl.StringVar(&f.out, "out", "-", "JSON Lines output file, - for stdout")
	fl.StringVar(&f.name, "name", "", "experiment name in every record (default run-<UTC time>)")
	fl.StringVar(&f.tcpCC, "tcp-cc", experiment.DefaultTCPCC, "server TCP congestion control: cubic, bbr, reno")
	fl.StringVar(&f.tls, "tls", "1.3", "TLS version of the TCP listeners: 1.2 or 1.3 (QUIC is always 1.3)")
	fl.StringVar(&f.h3Stack, "h3-stack", server.StackQUICGo, "HTTP/3 stack serving h3: "+strings.Join(server.H3Stacks, ", ")+" (ngtcp2: Debian's gtlsserver, one process per page)")
	fl.StringVar(&f.quicCC, "quic-cc", "", "the h3 stack's congestion controller: quic-go has "+server.QUICGoCC+" only; ngtcp2 "+strings.Join(server.Ngtcp2CCs, ", ")+" (default "+server.DefaultNgtcp2CC+")")
	fl.StringVar(&f.device, "device", "desktop", "emulated client device: "+strings.Join(device.Names(), ", ")+" or cpu=X (a slowdown), optionally :cgroup (a CPU budget for the whole browser, the default), :cdp (DevTools throttling of the renderer only) or :cgroup+cdp")
	fl.StringVar(&f.chrome, "chrome", "", "Chromium binary (default: $PLTLAB_CHROME, then chromium on PATH)")
	fl.BoolVar(&f.noCheck, "no-link-check", false, "skip the link self-check before measuring")
	fl.DurationVar(&f.launchTimeout, "launch-timeout", browser.DefaultLaunchTimeout, "how long to wait for Chromium to start and answer (minutes on a slow machine such as a qemu TCG guest)")
	fl.BoolVar(&f.force, "force", false, "overwrite an existing --out file")
	f.art.add(fl, "all")
	fl.BoolVar(&f.resume, "resume", false, "continue the interrupted run whose records are in --out (same flags): loads already made are not redone")
	fl.StringVar(&f.cross, "cross", "", "cross traffic: a bulk flow PROTO[:CC] (e.g. h1:cubic) kept running through the link during the loads")
	fl.StringVar(&f.shard, "shard", "", "run part I of N of the schedule: I/N (0 <= I < N), auto (Slurm array) or auto/N (Kubernetes JOB_COMPLETION_INDEX)")
	addViewFlag(fl, &f.view)
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the loads and estimated time (per shard with --shard) and exit")
	return cmd
}

// config builds the experiment from the flags (or the matrix file) and computes its schedule once
// (experiment.NewSchedule: the schedule, the shard's share, the cost model's times), as usage
// errors; then it checks what must hold before anything is set up.
func (f *runFlags) config(cmd *cobra.Command) (*experiment.Schedule, error) {
	c, err := f.experiment(cmd)
	if err != nil {
		return nil, err
	}
	if err := checkViewFlag(f.view, f.out); err != nil {
		return nil, err // --dry-run too: it shows what the flags would do
	}
	sched, err := shardSchedule(c, f.shard)
	if err != nil || f.dryRun {
		return sched, err
	}
	return sched, f.check(c)
}

// experiment builds the experiment from the flags (or the matrix file), as usage errors.
func (f *runFlags) experiment(cmd *cobra.Command) (experiment.Config, error) {
	var c experiment.Config
	if f.matrix != "" {
		if len(f.pages) > 0 || len(f.links) > 0 {
			return c, usagef("--matrix %s replaces --page and --link: give one or the other", f.matrix)
		}
		var err error
		if c, err = experiment.OpenMatrix(f.matrix, cmd.InOrStdin()); err != nil {
			return c, usagef("bad --matrix: %v", err)
		}
		if c, err = f.override(cmd, c); err != nil {
			return c, err
		}
	} else {
		protocols, modes, err := f.arms()
		if err != nil {
			return c, err
		}
		c = experiment.Config{Pages: f.pages, Links: f.links, Arms: experiment.CrossArms(protocols, modes),
			Runs: f.runs, Warmup: f.warmup, Timeout: f.timeout, Seed: f.seed, TCPCC: f.tcpCC, TLS: f.tls, Device: f.device,
			H3Stack: f.h3Stack, QUICCC: f.quicCC}
		if len(f.pages) == 0 {
			return c, usagef("missing --page: give a page SPEC such as carlucci2015 or 10x30KB")
		}
		if len(f.links) == 0 {
			return c, usagef("missing --link: give a LINK spec such as carlucci2015, none or rate=3mbit,rtt=50ms")
		}
		if f.runs < 1 {
			return c, usagef("bad --runs %d: accepted 1 or more", f.runs)
		}
		if f.timeout < time.Second {
			return c, usagef("bad --timeout %v: accepted 1s or more", f.timeout)
		}
	}
	c.Name = cmp.Or(f.name, c.Name)
	c.Chrome, c.SkipLinkCheck = f.chrome, f.noCheck
	c.Launch = launchWithin(f.launchTimeout)
	art, err := f.art.config()
	if err != nil {
		return c, err
	}
	c.Artifacts, c.Visual = art, f.art.visual
	if c.ReplayDeterministic = f.replayDeterministic; c.ReplayDeterministic && !slices.ContainsFunc(c.Pages, pages.IsReplay) {
		return c, usagef("--replay-deterministic applies to replayed pages only: give a --page har:FILE")
	}
	if f.cross != "" {
		c.Cross = f.cross
		raiseProcsForLink() // the cross flow's server and client run next to the links
	}
	if err := c.Validate(); err != nil {
		return c, asUsage(err)
	}
	if err := c.ReadArchives(); err != nil { // once: the checks, the plan and the run read them
		return c, asUsage(err)
	}
	if err := experiment.CheckSpecs(c); err != nil {
		return c, asUsage(err)
	}
	for _, l := range c.Links {
		if err := linkAvailable(f.setup, l); err != nil {
			return c, err
		}
		if w := linkspec.PartialNote(l); w != "" {
			slog.Warn(w)
		}
	}
	return c, nil
}

// launchWithin is browser.Launch waiting up to d for Chromium's answer (--launch-timeout).
func launchWithin(d time.Duration) experiment.LaunchFunc {
	return func(ctx context.Context, opts ...browser.Option) (*browser.Browser, error) {
		return browser.Launch(ctx, append(opts, browser.WithLaunchTimeout(d))...)
	}
}

// linkAvailable refuses, as a usage error before anything is set up, a link this machine cannot
// open (setup.available: shaper=netem without sch_netem); a bad spec is left to its parser.
func linkAvailable(setup *measureSetup, link string) error {
	spec, err := linkspec.Parse(link)
	if err != nil {
		return nil
	}
	if err := setup.available(spec); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// check refuses, as usage errors, what cannot run: --resume without a file, a TCP congestion
// control this host refuses, an --out path that cannot be written, no Chromium.
func (f *runFlags) check(c experiment.Config) error {
	if f.resume && (f.force || f.out == "-") {
		return usagef("--resume continues the run in an --out file: give --out FILE, without --force")
	}
	if err := experiment.CheckTCPCC(c); err != nil {
		return asUsage(err) // tried here, where the server will run (inside the user namespace when rootless)
	}
	if err := experiment.CheckDevice(c); err != nil {
		return asUsage(err) // a CPU budget the kernel refuses here (rootless, a read-only cgroupfs)
	}
	if err := experiment.CheckH3Stack(c); err != nil {
		return asUsage(err) // gtlsserver missing
	}
	if f.out != "-" {
		if _, err := checkOutPath("--out", f.out, f.outMode()); err != nil {
			return err // before looking for Chromium: the first thing to fix is named first
		}
	}
	if _, err := browser.FindChromium(f.chrome); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// outMode is what --force and --resume allow to happen to an existing --out file.
func (f *runFlags) outMode() outMode {
	switch {
	case f.resume:
		return outAppend
	case f.force:
		return outReplace
	}
	return outNew
}

// override applies the flags given on the command line over the matrix file's values, and
// lists each override in c.Overrides ("runs=3 (matrix: 20)") for the records.
func (f *runFlags) override(cmd *cobra.Command, c experiment.Config) (experiment.Config, error) {
	fl := cmd.Flags()
	note := func(name string, now, was any) {
		c.Overrides = append(c.Overrides, fmt.Sprintf("%s=%v (matrix: %v)", name, now, was))
	}
	if fl.Changed("protocols") || fl.Changed("mode") {
		protocols, modes, err := f.arms()
		if err != nil {
			return c, err
		}
		if !fl.Changed("protocols") {
			protocols = armProtocols(c.Arms)
		}
		if !fl.Changed("mode") {
			modes = armModes(c.Arms)
		}
		arms := experiment.CrossArms(protocols, modes)
		note("arms", arms, c.Arms)
		c.Arms = arms
	}
	overrideFlag(fl, note, "runs", f.runs, &c.Runs)
	overrideFlag(fl, note, "warmup", f.warmup, &c.Warmup)
	overrideFlag(fl, note, "timeout", f.timeout, &c.Timeout)
	overrideFlag(fl, note, "seed", f.seed, &c.Seed)
	overrideFlag(fl, note, "tcp-cc", f.tcpCC, &c.TCPCC)
	overrideFlag(fl, note, "tls", f.tls, &c.TLS)
	overrideFlag(fl, note, "device", f.device, &c.Device)
	overrideFlag(fl, note, "h3-stack", f.h3Stack, &c.H3Stack)
	overrideFlag(fl, note, "quic-cc", f.quicCC, &c.QUICCC)
	if fl.Changed("name") {
		note("name", f.name, c.Name)
	}
	return c, nil
}

// overrideFlag sets *dst to now, noting it under the flag's name with - as _ ("tcp_cc"), when
// the flag was given on the command line.
func overrideFlag[T any](fl *pflag.FlagSet, note func(name string, now, was any), flag string, now T, dst *T) {
	if fl.Changed(flag) {
		note(strings.ReplaceAll(flag, "-", "_"), now, *dst)
		*dst = now
	}
}

// arms parses --protocols and --mode.
func (f *runFlags) arms() ([]string, []result.Mode, error) {
	protocols, err := experiment.ParseProtocols(f.protocols)
	if err != nil {
		return nil, nil, usagef("bad --protocols: %v", err)
	}
	var modes []result.Mode
	for s := range strings.SplitSeq(f.modes, ",") {
		m, err := experiment.ParseMode(strings.TrimSpace(s))
		if err != nil {
			return nil, nil, usagef("bad --mode: %v", err)
		}
		modes = append(modes, m)
	}
	return protocols, modes, nil
}

func armProtocols(arms []experiment.Arm) []string {
	var out []string
	for _, a := range arms {
		if !slices.Contains(out, a.Protocol) {
			out = append(out, a.Protocol)
		}
	}
	return out
}

func armModes(arms []experiment.Arm) []result.Mode {
	var out []result.Mode
	for _, a := range arms {
		if !slices.Contains(out, a.Mode) {
			out = append(out, a.Mode)
		}
	}
	return out
}

// runExperiment runs the plan (its shard's loads not made before), streaming records to out
// ("-" = stdout; mode says what may happen to an existing file, which is checked and locked
// before anything is set up), and prints the summary table to summaryTo (nil: stdout; stderr
// when the records go to stdout). An interrupt keeps every written record and exits with 130; a reader of stdout that goes away (broken pipe)
// stops the run in order, with everything torn down, and exits with code 141.
func runExperiment(cmd *cobra.Command, xp *experiment.Schedule, out string, mode outMode, summaryTo io.Writer) error {
	ctx, stderr := cmd.Context(), cmd.ErrOrStderr()
	var sink io.Writer = cmd.OutOrStdout()
	if summaryTo == nil {
		summaryTo = cmd.OutOrStdout()
	}
	if out == "-" {
		summaryTo = stderr
	} else {
		of, err := openOut("--out", out, mode)
		if err != nil {
			return err
		}
		defer of.Close()
		sink = of
	}
	var recs []*result.Record
	if mode == outAppend {
		old, _, err := analysis.ReadFiles([]string{out}, nil, nil)
		if err != nil {
			return fmt.Errorf("--resume: read %s: %w", out, err)
		}
		if err := xp.Resume(old); err != nil {
			return usagef("--resume %s: %v: give the flags of the interrupted run", out, err)
		}
		recs = old
		fmt.Fprintf(stderr, "pltlab: resuming %s: %d of %d loads already made\n", xp.Config.Name, len(xp.Config.Done), len(xp.Mine))
	}
	if os.Geteuid() == 0 && os.Getenv(rootlessEnv) == "" {
		shaping.CleanStale(slog.Default()) // namespaces and devices of killed runs, even for --link none
		for _, dir := range device.CleanStale() {
			slog.Info("removed the CPU budget of a killed run", "cgroup", dir)
		}
	}
	tmp, cleanup, err := makeTempRoot()
	if err != nil {
		return err
	}
	defer cleanup()
	xp.Config.TempDir = tmp
	left := xp.Left()
	observe, finish := newProgress(len(left), stderr, isTerminal(stderr))
	xp.Config.Observer = func(p experiment.Progress) {
		if p.Record != nil {
			recs = append(recs, p.Record)
		}
		observe(p)
	}
	est, _ := xp.Estimate(left) // the loads still to make, in this shard
	est += plan.StartCost
	sum, err := experiment.RunSchedule(ctx, xp, result.NewWriter(sink))
	finish()
	if len(recs) > 0 {
		if perr := printSummary(summaryTo, recs); perr != nil && !isBrokenPipe(perr) {
			err = errors.Join(err, perr)
		}
	}
	fmt.Fprintf(stderr, "pltlab: %s; estimated %s, took %s\n", summaryLine(sum), quantity.FormatEstimate(est), quantity.FormatEstimate(sum.Elapsed))
	return artifactsExit(explainSetupError(stopError(ctx, err, "the records written so far are kept (continue with --resume)")), sum.ArtifactsFailed)
}

// artifactsExit returns err, or, when it is nil and n artifacts were not written whole, exit
// code exitArtifacts saying so.
func artifactsExit(err error, n int) error {
	if err != nil || n == 0 {
		return err
	}
	return &exitError{code: exitArtifacts, err: fmt.Errorf("%d artifacts not written whole: the records list them in artifacts_failed", n)}
}

// summaryLine says what a run did, counting the measured loads as every report table does.
func summaryLine(s experiment.Summary) string {
	late := ""
	if s.EmulatorLate > 0 {
		late = fmt.Sprintf(", %d emulator late", s.EmulatorLate)
	}
	line := fmt.Sprintf("%d loads (measured: %d valid, %d timed out, %d network failures, %d invalid%s), %d lost to harness",
		s.Records, s.Valid, s.TimedOut, s.NetworkFailed, s.Invalid, late, s.HarnessErrors)
	if s.Redone > 0 {
		line += fmt.Sprintf(", %d made again because the emulator was late (lateness bound %.0f ms)", s.Redone, result.LatenessBoundMs)
	}
	if s.Resumed > 0 {
		line += fmt.Sprintf(", %d made before (resumed)", s.Resumed)
	}
	if s.ArtifactsFailed > 0 {
		line += fmt.Sprintf(", %d artifacts not written whole (artifacts_failed)", s.ArtifactsFailed)
	}
	line += " in " + s.Elapsed.Round(time.Second).String()
	for _, rc := range s.Rechecked {
		line += "; " + rc
	}
	return line
}

// explainSetupError adds the fix to errors whose cause the user can remove.
func explainSetupError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, shaping.ErrNotRoot):
		return fmt.Errorf("%w (emulated links need root: run with sudo, or use --link none)", err)
	case errors.Is(err, experiment.ErrLinkCheck):
		return fmt.Errorf("%w (see 'pltlab link check --link LINK'; --no-link-check measures anyway)", err)
	}
	return err
}

// printSummary prints the analysis text table of recs to w, comparing with the default
// baseline (analysis.BaselineFor), as `report` does.
func printSummary(w io.Writer, recs []*result.Record) error {
	err := analysis.Summary(w, recs, analysis.Options{})
	if errors.Is(err, analysis.ErrNoRecords) {
		return nil
	}
	return err
}
