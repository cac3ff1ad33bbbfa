package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
)

// runFlags are the flags of 'pltlab run'.
type runFlags struct {
	pages, links     []string
	protocols, modes string
	matrix           string
	runs, warmup     int
	timeout          time.Duration
	seed             int64
	out              string
	name             string
	tcpCC, tls       string
	chrome           string
	noCheck, force   bool
	art              artifactFlags
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run --page SPEC --link LINK [flags]",
		Short: "Measure PLT per protocol over a matrix of pages and links",
		Long: `run loads every page over every link with every protocol (and mode), --runs times per
cell, in a seeded interleaved order, with real Chromium behind the emulated link. Every load is
verified (protocol used, bytes received) and written as one JSON line; a summary table follows.
Links other than "none" need root (network namespaces and TUN devices).` + artifactsHelp,
		Example: `  sudo ./bin/pltlab run --page 10x30KB --link carlucci2015 --runs 5 --out /tmp/r.jsonl
  sudo ./bin/pltlab run --page 10x30KB --page 1x1MB --link rate=10mbit,rtt=20ms --link 3g --protocols h2,h3 --runs 3 --out /tmp/m.jsonl
  ./bin/pltlab run --page 5x10KB --link none --runs 2 --out -
  sudo ./bin/pltlab run --page carlucci2015 --link carlucci2015 --runs 2 --artifacts /tmp/a --out /tmp/a.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.config(cmd)
			if err != nil {
				return err
			}
			c.Version = pltlabVersion()
			summaryTo := cmd.OutOrStdout()
			if f.out == "-" {
				summaryTo = cmd.ErrOrStderr()
			}
			return runExperiment(cmd.Context(), c, f.out, f.force, cmd.OutOrStdout(), cmd.ErrOrStderr(), summaryTo)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.pages, "page", nil, "page SPEC (preset or COUNTxSIZE items); repeat for a matrix")
	fl.StringArrayVar(&f.links, "link", nil, "LINK spec (preset or key=value items); repeat for a matrix")
	fl.StringVar(&f.protocols, "protocols", "h1,h2,h3", "protocols to compare, comma-separated")
	fl.StringVar(&f.modes, "mode", "cold", "cold, warm, or cold,warm")
	fl.StringVar(&f.matrix, "matrix", "", "YAML matrix file (schema in the README, section 'Measure'); replaces --page/--link")
	fl.IntVar(&f.runs, "runs", experiment.DefaultRuns, "measured loads per (page, link, protocol, mode)")
	fl.IntVar(&f.warmup, "warmup", 1, "warm-up loads per cell, recorded with warmup:true")
	fl.DurationVar(&f.timeout, "timeout", experiment.DefaultTimeout, "per-load deadline; a load that hits it is censored")
	fl.Int64Var(&f.seed, "seed", experiment.DefaultSeed, "seed of the interleaved order and of random loss")
	fl.StringVar(&f.out, "out", "-", "JSON Lines output file, - for stdout")
	fl.StringVar(&f.name, "name", "", "experiment name in every record (default run-<UTC time>)")
	fl.StringVar(&f.tcpCC, "tcp-cc", experiment.DefaultTCPCC, "server TCP congestion control: cubic, bbr, reno")
	fl.StringVar(&f.tls, "tls", "1.3", "TLS version of the TCP listeners: 1.2 or 1.3 (QUIC is always 1.3)")
	fl.StringVar(&f.chrome, "chrome", "", "Chromium binary (default: $PLTLAB_CHROME, then chromium on PATH)")
	fl.BoolVar(&f.noCheck, "no-link-check", false, "skip the link self-check before measuring")
	fl.BoolVar(&f.force, "force", false, "overwrite an existing --out file")
	f.art.add(fl, "all")
	return cmd
}

// config builds the experiment from the flags (or the matrix file), as usage errors.
func (f *runFlags) config(cmd *cobra.Command) (experiment.Config, error) {
	var c experiment.Config
	if f.matrix != "" {
		if len(f.pages) > 0 || len(f.links) > 0 {
			return c, usagef("--matrix %s replaces --page and --link: give one or the other", f.matrix)
		}
		file, err := os.Open(f.matrix)
		if err != nil {
			return c, usagef("bad --matrix: %v", err)
		}
		defer file.Close()
		if c, err = experiment.ReadMatrix(file, f.matrix); err != nil {
			return c, asUsage(err)
		}
	} else {
		protocols, err := experiment.ParseProtocols(f.protocols)
		if err != nil {
			return c, usagef("bad --protocols: %v", err)
		}
		var modes []result.Mode
		for s := range strings.SplitSeq(f.modes, ",") {
			m, err := experiment.ParseMode(strings.TrimSpace(s))
			if err != nil {
				return c, usagef("bad --mode: %v", err)
			}
			modes = append(modes, m)
		}
		c = experiment.Config{Pages: f.pages, Links: f.links, Arms: experiment.CrossArms(protocols, modes),
			Runs: f.runs, Warmup: f.warmup, Timeout: f.timeout, Seed: f.seed, TCPCC: f.tcpCC, TLS: f.tls}
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
	if f.name != "" {
		c.Name = f.name
	}
	c.Chrome, c.SkipLinkCheck = f.chrome, f.noCheck
	art, err := f.art.config()
	if err != nil {
		return c, err
	}
	c.Artifacts = art
	if err := c.Validate(); err != nil {
		return c, asUsage(err)
	}
	if err := experiment.CheckSpecs(c); err != nil {
		return c, asUsage(err)
	}
	if err := checkOutFile(f.out, f.force); err != nil {
		return c, err
	}
	if _, err := browser.FindChromium(f.chrome); err != nil {
		return c, usagef("%v", err)
	}
	return c, nil
}

// runExperiment runs c, streaming records to out ("-" = stdout), and prints the summary table to
// summaryTo and progress and the closing line to stderr. An interrupt keeps every written record
// and exits with code 130.
func runExperiment(ctx context.Context, c experiment.Config, out string, force bool, stdout, stderr, summaryTo io.Writer) error {
	tmp, cleanup, err := makeTempRoot()
	if err != nil {
		return err
	}
	defer cleanup()
	c.TempDir = tmp
	sink := stdout
	if out != "-" {
		lf := &lazyFile{name: out}
		defer lf.Close()
		sink = lf
	}
	var recs []*result.Record
	observe, finish := newProgress(stderr, len(experiment.Schedule(c)))
	c.Observer = func(p experiment.Progress) {
		recs = append(recs, p.Record)
		if observe != nil {
			observe(p)
		}
	}
	sum, err := experiment.Run(ctx, c, result.NewWriter(sink))
	finish()
	if len(recs) > 0 {
		if perr := printSummary(summaryTo, recs, baselineOf(c.Arms)); perr != nil {
			err = errors.Join(err, perr)
		}
	}
	fmt.Fprintf(stderr, "pltlab: %d loads (%d valid, %d invalid measured) in %s\n",
		sum.Records, sum.Valid, sum.Invalid, sum.Elapsed.Round(time.Second))
	if ctx.Err() != nil {
		return &exitError{code: 130, err: errors.New("interrupted; the records written so far are kept")}
	}
	return explainSetupError(err)
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

// baselineOf returns the protocol the others are compared with: h1 when measured, else the
// first protocol measured.
func baselineOf(arms []experiment.Arm) string {
	for _, a := range arms {
		if a.Protocol == "h1" {
			return "h1"
		}
	}
	if len(arms) == 0 {
		return ""
	}
	return arms[0].Protocol
}

// printSummary prints the analysis text table of recs to w, comparing with baseline.
func printSummary(w io.Writer, recs []*result.Record, baseline string) error {
	err := analysis.Summary(w, recs, analysis.Options{Baseline: baseline})
	if errors.Is(err, analysis.ErrNoRecords) {
		return nil
	}
	return err
}

// checkOutFile refuses an --out that cannot be written: a directory, a missing directory, or an
// existing regular file without force. "-" is stdout; devices such as /dev/null are fine.
func checkOutFile(out string, force bool) error {
	if out == "-" {
		return nil
	}
	if st, err := os.Stat(filepath.Dir(out)); err != nil || !st.IsDir() {
		return usagef("bad --out %s: directory %s does not exist", out, filepath.Dir(out))
	}
	st, err := os.Stat(out)
	switch {
	case err != nil:
		return nil
	case st.IsDir():
		return usagef("bad --out %s: a directory (accepted a file name, or - for stdout)", out)
	case st.Mode().IsRegular() && !force:
		return usagef("--out %s exists: remove it or add --force", out)
	}
	return nil
}
