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
			if err := checkOutFile(out, force); err != nil {
				return err
			}
			m, comp, err := mergeFiles(args, cmd.InOrStdin(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if err := writeRecords(cmd.OutOrStdout(), out, m.Records); err != nil {
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

// mergeFiles reads the named files, merges them (experiment.Merge) and checks the merged records
// against their plan, printing the completeness lines to stderr. comp is nil when no record is
// from a sharded run. Files of different configurations are a usage error.
func mergeFiles(names []string, stdin io.Reader, stderr io.Writer) (experiment.Merged, *experiment.Completeness, error) {
	var srcs []experiment.Source
	skipped := 0
	for _, name := range names {
		recs, n, err := analysis.ReadFiles([]string{name}, stdin, slog.Default())
		if err != nil {
			return experiment.Merged{}, nil, err
		}
		skipped += n
		srcs = append(srcs, experiment.Source{Name: name, Records: recs})
	}
	m, err := experiment.Merge(srcs)
	if errors.Is(err, experiment.ErrMixedConfigs) {
		return m, nil, usagef("%v", err)
	}
	if err != nil {
		return m, nil, err
	}
	if skipped > 0 {
		fmt.Fprintf(stderr, "pltlab: skipped %d corrupt or repeated lines within files\n", skipped)
	}
	comp, err := experiment.CheckComplete(m.Records)
	if err != nil {
		return m, nil, err
	}
	if comp != nil {
		for _, line := range comp.Lines() {
			fmt.Fprintf(stderr, "pltlab: %s\n", line)
		}
	}
	return m, comp, nil
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

// writeRecords writes recs as JSON Lines to stdout ("-") or to the file out.
func writeRecords(stdout io.Writer, out string, recs []*result.Record) error {
	return writeReport(stdout, out, func(w io.Writer) error {
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
	m, comp, err := mergeFiles(names, stdin, stderr)
	if err != nil {
		return nil, nil, err
	}
	rep := analysis.Analyze(m.Records, opts)
	rep.SkippedLines = m.Duplicates
	if rep.Empty() {
		return rep, comp, fmt.Errorf("%s: %w (%d records read)", strings.Join(names, ", "), analysis.ErrNoRecords, len(m.Records))
	}
	return rep, comp, nil
}
