package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

// reportFlags are the flags of 'pltlab report'.
type reportFlags struct {
	format, out, plot, plotKind, baseline, metric, prefer string
	force, check                                          bool
}

// newReportCmd builds 'pltlab report': statistics, comparisons, plots and reports from result files.
func newReportCmd() *cobra.Command {
	var f reportFlags
	cmd := &cobra.Command{
		Use:   "report FILE.jsonl... [--format text|markdown|csv|json|html] [--out FILE] [--plot FILE.png|FILE.svg]",
		Short: "Summarise result files: per-protocol statistics, comparisons with a baseline, plots",
		Long: `report reads one or more result files (JSON Lines, "-" = stdin), groups the page loads by
(page, link, mode, protocol) and prints per group: runs, valid, invalid (by reason), timeouts,
median with a 95% distribution-free CI, mean, sd, cv and quantiles (Hyndman & Fan type 7). Each
protocol is compared with the baseline in the same page, link and mode: ratio of medians with a
95% bootstrap CI, percent difference, Mann-Whitney U and Welch p-values; significant only at
p < 0.01. Timed-out loads and network failures are censored (shown as ">= deadline"); loads
the harness could not make are counted as "lost to harness". Warm-up loads are excluded.
Loads made with different settings (congestion control, TLS, browser, pltlab version, cross
traffic ('run --cross'), emulated device ('run --device')) are reported in separate groups. Corrupt lines are skipped and out-of-range records refused, with
warnings. Bulk-flow lines ('pltlab flows') get their own tables: per link, mix and flow the
median across runs with a 95% CI of goodput, loss ratio, utilization and Jain's index, then
every run; --plot-kind goodput and queue draw them over time. An input without page loads and
without flows is an error. --out and --plot never replace an input,
and replace an existing file only with --force.
Shard files of one sweep ('pltlab run --shard') are checked against their plan: files of
different configurations are refused, and missing or short shards and cells are named on
stderr (with --check, they make the exit code 1). A line is dropped as a duplicate only when it
is equal in every field to one read before; two different lines for one slot of a sharded sweep
are refused (exit 2, both named) unless --prefer picks one, as in 'pltlab merge'. Loads of
different experiments or files whose settings match are pooled in one group, and the report
says so (experiments and files pooled); loads of different settings are never pooled.`,
		Example: `  ./bin/pltlab report results.jsonl
  ./bin/pltlab report results.jsonl --format html --out report.html
  ./bin/pltlab report results.jsonl --plot plt.png --metric plt_ms --baseline h1
  cat results.jsonl | ./bin/pltlab report - --format json
  ./bin/pltlab report /tmp/flows.jsonl --plot /tmp/goodput.png --plot-kind goodput`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("report needs at least one result file: FILE.jsonl... (\"-\" = stdin)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd, args, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "text", "output format: text, markdown, csv, json or html")
	fl.StringVarP(&f.out, "out", "o", "-", `output file ("-" = stdout)`)
	fl.StringVar(&f.plot, "plot", "", "also write a figure to this .png or .svg file")
	fl.StringVar(&f.plotKind, "plot-kind", "ecdf", "figure for --plot: ecdf, box, heatmap, goodput or queue (flows; the default draws goodput for an input of flows only)")
	fl.StringVar(&f.baseline, "baseline", "", "protocol the others are compared with: h1, h2 or h3 (default h1 if measured, else the first measured in h1, h2, h3 order)")
	fl.BoolVar(&f.force, "force", false, "replace an existing --out or --plot file")
	fl.StringVar(&f.metric, "metric", string(analysis.PLT), "metric: plt_ms, ttfb_ms, fcp_ms or dcl_ms")
	fl.StringVar(&f.prefer, "prefer", "", `settle two different lines for one slot of a sharded sweep: "newest" or FILE (see 'pltlab merge'); default: refuse`)
	fl.BoolVar(&f.check, "check", false, "exit with 1 when the shard files of a sweep miss a shard or a load (see 'pltlab merge')")
	return cmd
}

// parseReportFlags checks the flags and returns the analysis options, format and plot kind.
func parseReportFlags(f reportFlags) (analysis.Options, analysis.Format, analysis.PlotKind, error) {
	format, err := analysis.ParseFormat(f.format)
	if err != nil {
		return analysis.Options{}, "", "", usagef("--format: %v", err)
	}
	metric, err := analysis.ParseMetric(f.metric)
	if err != nil {
		return analysis.Options{}, "", "", usagef("--metric: %v", err)
	}
	if f.baseline != "" && !protocol.Known(f.baseline) {
		return analysis.Options{}, "", "", usagef("bad --baseline %q: accepted %s", f.baseline, strings.Join(protocol.Names(), ", "))
	}
	kind, err := analysis.ParsePlotKind(f.plotKind)
	if err != nil {
		return analysis.Options{}, "", "", usagef("--plot-kind: %v", err)
	}
	if f.plot != "" {
		if _, err := analysis.ImageFormat(f.plot); err != nil {
			return analysis.Options{}, "", "", usagef("--plot: %v", err)
		}
	}
	return analysis.Options{Metric: metric, Baseline: f.baseline}, format, kind, nil
}

func runReport(cmd *cobra.Command, args []string, f reportFlags) error {
	opts, format, kind, err := parseReportFlags(f)
	if err != nil {
		return err
	}
	for _, name := range args {
		if err := checkInputFile(name); err != nil {
			return err
		}
	}
	outs, err := openReportOutputs(args, cmd.InOrStdin(), f)
	if err != nil {
		return err
	}
	defer func() {
		for _, o := range outs {
			o.Close()
		}
	}()
	rep, comp, err := analyzeFiles(args, cmd.InOrStdin(), cmd.ErrOrStderr(), opts, plan.MergeOptions{Prefer: f.prefer})
	if err != nil {
		return reportInputError(err)
	}
	for _, w := range rep.Warnings {
		slog.Warn(w)
	}
	if opts.Baseline != "" && !slices.ContainsFunc(rep.Groups, func(g *analysis.Group) bool { return g.Protocol == opts.Baseline }) {
		slog.Warn("baseline protocol has no loads: no comparisons", "baseline", opts.Baseline)
	}
	var w io.Writer = cmd.OutOrStdout()
	if o := outs[f.out]; o != nil {
		w = o
	}
	if err := rep.Write(w, format); err != nil {
		return fmt.Errorf("write report %s: %w", f.out, err)
	}
	if o := outs[f.plot]; o != nil {
		format, _ := analysis.ImageFormat(f.plot) // checked by parseReportFlags
		var buf bytes.Buffer                      // render first: a failed plot leaves the file empty, then removed
		err := rep.WritePlot(&buf, kind, format)
		if err == nil {
			_, err = o.Write(buf.Bytes())
		}
		if err != nil {
			return fmt.Errorf("plot %s: %w", f.plot, err)
		}
	}
	if f.check && comp != nil {
		return incomplete(comp)
	}
	return nil
}

// reportInputError marks an input report cannot use as a usage error (exit 2): one without
// page loads or flows (empty, or other lines only) and one of another schema version; other
// errors stay as they are.
func reportInputError(err error) error {
	switch {
	case errors.Is(err, analysis.ErrNoRecords):
		return usagef("%v; accepted: result files of 'pltlab run', 'reproduce' or 'flows' (JSON Lines of schema v%d) with page loads or flows", err, result.Version)
	case errors.Is(err, result.ErrVersion):
		return asUsage(err) // it names the version read and the one accepted
	}
	return err
}

// openReportOutputs checks and locks --out and --plot before any input is read: neither may
// be one of the inputs (by file identity, whatever the names; "-" is stdin, when it is a file),
// and an existing file is replaced only with --force. It returns the open files by name.
func openReportOutputs(inputs []string, stdin io.Reader, f reportFlags) (map[string]*outFile, error) {
	outs := map[string]*outFile{}
	mode := outNew
	if f.force {
		mode = outReplace
	}
	for _, o := range []struct{ flag, name string }{{"--out", f.out}, {"--plot", f.plot}} {
		if o.name == "" || o.name == "-" {
			continue
		}
		for _, in := range inputs {
			if (in == "-" && stdinIs(stdin, o.name)) || (in != "-" && sameFile(o.name, in)) {
				closeAll(outs)
				return nil, usagef("bad %s %s: it is the input %s (a report never replaces its results): choose another file", o.flag, o.name, in)
			}
		}
		if outs[o.name] != nil {
			closeAll(outs)
			return nil, usagef("bad --plot %s: it is also --out: choose another file", o.name)
		}
		of, err := openOut(o.flag, o.name, mode)
		if err != nil {
			closeAll(outs)
			return nil, err
		}
		outs[o.name] = of
	}
	return outs, nil
}

// stdinIs reports whether stdin is the file name (report - --out F < F).
func stdinIs(stdin io.Reader, name string) bool {
	f, ok := stdin.(*os.File)
	if !ok {
		return false
	}
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(name)
	return err == nil && os.SameFile(a, b)
}

func closeAll(outs map[string]*outFile) {
	for _, o := range outs {
		o.Close()
	}
}

// checkInputFile refuses an input that is missing or not a regular file (a directory, a device
// such as /dev/zero); "-" is stdin.
func checkInputFile(name string) error {
	if name == "-" {
		return nil
	}
	st, err := os.Stat(name)
	if err != nil {
		return usagef("bad input %s: %v", name, errors.Unwrap(err))
	}
	if !st.Mode().IsRegular() {
		return usagef("bad input %s: not a regular file (accepted: .jsonl files, or - for stdin)", name)
	}
	return nil
}
