package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// newMergeCmd builds 'pltlab merge': the union of shard files, checked for completeness.
func newMergeCmd() *cobra.Command {
	var (
		out   string
		force bool
	)
	cmd := &cobra.Command{
		Use:   "merge FILE.jsonl... [--out merged.jsonl]",
		Short: "Join the result files of a sharded run and check that no shard or cell is missing",
		Long: `merge reads the result files of the shards of one sweep ('pltlab run --shard I/N'), refuses
files of different configurations (config_hash), drops lines read twice (a file given twice, or a
rerun shard whose file overlaps its first, partial one), writes the union to --out and says which
shards and which cells (page, link, protocol, mode) are missing or short. It exits with 1 while
any planned load is missing (the union is written all the same), so that a batch job's final
step fails visibly; rerun the named shards and merge again.`,
		Example: `  ./bin/pltlab merge results/shard-*.jsonl --out results/merged.jsonl
  ./bin/pltlab merge shard-0.jsonl shard-1.jsonl shard-1-rerun.jsonl --out merged.jsonl --force`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("merge needs the shard files: FILE.jsonl... (\"-\" = stdin)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, name := range args {
				if err := checkInputFile(name); err != nil {
					return err
				}
			}
			for _, in := range args {
				if in != "-" && out != "-" && sameFile(out, in) {
					return usagef("bad --out %s: it is the input %s (merge never replaces its inputs): choose another file", out, in)
				}
			}
			m, _, comp, err := mergeFiles(args, cmd.InOrStdin(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := writeRecords(cmd.OutOrStdout(), out, force, m.Records); err != nil {
				return err
			}
			if m.Duplicates > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "pltlab: dropped %d lines read in more than one file\n", m.Duplicates)
			}
			if comp == nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "pltlab: %d records merged; none is from a sharded run, so there is no plan to check\n", len(m.Records))
				return nil
			}
			return incomplete(comp)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "-", `merged JSON Lines file ("-" = stdout)`)
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing --out file")
	return cmd
}

// maxCellLines caps the short cells merge and report name one by one.
const maxCellLines = 20

// mergeFiles reads the named files, merges them (experiment.Merge) and checks the merged records
// against their plan, printing the completeness lines to stderr. comp is nil when no record is
// from a sharded run. Files of different configurations are a usage error.
func mergeFiles(names []string, stdin io.Reader, stderr io.Writer) (m experiment.Merged, stats analysis.ReadStats, comp *experiment.Completeness, err error) {
	var srcs []experiment.Source
	skipped := 0
	for _, name := range names {
		recs, st, err := analysis.ReadAll([]string{name}, stdin, slog.Default())
		if err != nil {
			return experiment.Merged{}, analysis.ReadStats{}, nil, err
		}
		stats.Corrupt += st.Corrupt
		stats.Duplicates += st.Duplicates
		stats.Refused = append(stats.Refused, st.Refused...)
		stats.RefusedCount += st.RefusedCount
		skipped += st.Corrupt + st.RefusedCount
		srcs = append(srcs, experiment.Source{Name: name, Records: recs})
	}
	m, err = experiment.Merge(srcs)
	if errors.Is(err, experiment.ErrMixedConfigs) {
		return m, stats, nil, usagef("%v", err)
	}
	if err != nil {
		return m, stats, nil, err
	}
	stats.Duplicates += m.Duplicates
	if skipped > 0 {
		fmt.Fprintf(stderr, "pltlab: skipped %d corrupt or refused lines\n", skipped)
	}
	comp, err = experiment.CheckComplete(m.Records)
	if err != nil {
		return m, stats, nil, err
	}
	if comp != nil {
		for _, line := range comp.Lines(maxCellLines) {
			fmt.Fprintf(stderr, "pltlab: %s\n", line)
		}
	}
	return m, stats, comp, nil
}

// incomplete returns an error (exit code 1) naming the missing and short shards of comp, or nil
// when it is complete.
func incomplete(comp *experiment.Completeness) error {
	if comp.Complete() {
		return nil
	}
	var parts []string
	if s := comp.MissingShards(); len(s) > 0 {
		parts = append(parts, "missing shards "+strings.Join(s, ", "))
	}
	if s := comp.ShortShards(); len(s) > 0 {
		parts = append(parts, "short shards "+strings.Join(s, ", "))
	}
	return &exitError{code: 1, err: fmt.Errorf("incomplete sweep: %s (%d of %d loads missing); rerun them with --shard and merge again",
		strings.Join(parts, "; "), comp.Missing, comp.Loads)}
}

// writeOutput writes with fn to stdout ("-") or to the file out, which may exist only with
// force (openOut checks and locks it).
func writeOutput(stdout io.Writer, out string, force bool, fn func(io.Writer) error) error {
	if out == "-" {
		return fn(stdout)
	}
	mode := outNew
	if force {
		mode = outReplace
	}
	of, err := openOut("--out", out, mode)
	if err != nil {
		return err
	}
	if err := fn(of); err != nil {
		of.Close()
		return fmt.Errorf("write %s: %w", out, err)
	}
	if err := of.Close(); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// writeRecords writes recs as JSON Lines to stdout ("-") or to the file out.
func writeRecords(stdout io.Writer, out string, force bool, recs []*result.Record) error {
	return writeOutput(stdout, out, force, func(w io.Writer) error {
		rw := result.NewWriter(w)
		for _, r := range recs {
			if err := rw.Write(r); err != nil {
				return err
			}
		}
		return nil
	})
}

// analyzeFiles reads and merges the named files (mergeFiles) and analyses the union; it returns
// the completeness of a sharded sweep (nil when none is sharded). Like analysis.AnalyzeFiles it
// fails with analysis.ErrNoRecords when there is no page load.
func analyzeFiles(names []string, stdin io.Reader, stderr io.Writer, opts analysis.Options) (*analysis.Report, *experiment.Completeness, error) {
	m, st, comp, err := mergeFiles(names, stdin, stderr)
	if err != nil {
		return nil, nil, err
	}
	rep := analysis.Analyze(m.Records, opts)
	rep.SetReadStats(st)
	// Shards that shared a node beyond the rule (experiment.CPUsPerShard) may have starved each
	// other's timing: the report says so.
	rep.Warnings = append(rep.Warnings, experiment.NodeOverlaps(m.Records)...)
	if rep.Empty() && !rep.HasFlows() {
		return rep, comp, fmt.Errorf("%s: %w (%d records read, %d corrupt lines skipped, %d records refused)",
			strings.Join(names, ", "), analysis.ErrNoRecords, len(m.Records), st.Corrupt, st.RefusedCount)
	}
	return rep, comp, nil
}
