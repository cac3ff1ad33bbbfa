package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/protocol"
)

// reportFlags are the flags of 'pltlab report'.
type reportFlags struct {
	format, out, plot, plotKind, baseline, metric string
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
p < 0.01. Timed-out loads are censored (shown as ">= deadline"). Warm-up loads are excluded.
Corrupt lines are skipped with a warning; an input without page loads is an error.`,
		Example: `  ./bin/pltlab report results.jsonl
  ./bin/pltlab report results.jsonl --format html --out report.html
  ./bin/pltlab report results.jsonl --plot plt.png --metric plt_ms --baseline h1
  cat results.jsonl | ./bin/pltlab report - --format json`,
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
	fl.StringVar(&f.plotKind, "plot-kind", "ecdf", "figure for --plot: ecdf, box or heatmap")
	fl.StringVar(&f.baseline, "baseline", analysis.DefaultBaseline, "protocol the others are compared with: h1, h2 or h3")
	fl.StringVar(&f.metric, "metric", string(analysis.PLT), "metric: plt_ms, ttfb_ms, fcp_ms or dcl_ms")
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
	if !protocol.Known(f.baseline) {
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
	for _, out := range []string{f.out, f.plot} {
		if out == "" || out == "-" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(out)); err != nil || !st.IsDir() {
			return usagef("bad output %s: directory %s does not exist", out, filepath.Dir(out))
		}
	}
	rep, err := analysis.AnalyzeFiles(args, cmd.InOrStdin(), opts, slog.Default())
	if err != nil {
		return err
	}
	if !hasProtocol(rep, opts.Baseline) {
		slog.Warn("baseline protocol has no loads: no comparisons", "baseline", opts.Baseline)
	}
	if err := writeReport(cmd.OutOrStdout(), f.out, func(w io.Writer) error { return rep.Write(w, format) }); err != nil {
		return err
	}
	if f.plot != "" {
		if err := rep.SavePlot(f.plot, kind); err != nil {
			return fmt.Errorf("plot %s: %w", f.plot, err)
		}
	}
	return nil
}

func hasProtocol(rep *analysis.Report, p string) bool {
	for _, g := range rep.Groups {
		if g.Protocol == p {
			return true
		}
	}
	return false
}

// writeReport writes with fn to stdout ("-") or to the file out.
func writeReport(stdout io.Writer, out string, fn func(io.Writer) error) error {
	if out == "-" || out == "" {
		return fn(stdout)
	}
	file, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("create report: %w", err)
	}
	if err := fn(file); err != nil {
		file.Close()
		return fmt.Errorf("write report %s: %w", out, err)
	}
	if err := file.Close(); err != nil {
		return fmt.Errorf("write report %s: %w", out, err)
	}
	return nil
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
