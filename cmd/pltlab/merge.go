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
	"github.com/pltlab/pltlab/internal/fileout"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// newMergeCmd builds 'pltlab merge': the union of shard files, checked for completeness.
func newMergeCmd() *cobra.Command {
	var (
		out, prefer       string
		force, allowMixed bool
	)
	cmd := &cobra.Command{
		Use:   "merge FILE.jsonl... [--out merged.jsonl]",
		Short: "Join the result files of a sharded run and check that no shard or cell is missing",
		Long: `merge reads the result files of the shards of one sweep ('pltlab run --shard I/N'), refuses
files of different configurations (config_hash), drops lines read twice (equal in every field: a
file given twice, or a rerun shard whose file overlaps its first, partial one; counted), writes
the union to --out and says which shards and which cells (page, link, protocol, mode) are
missing or short. It exits with 1 while any planned load is missing (the union is written all
the same), so that a batch job's final step fails visibly; rerun the named shards and merge again.
Two different lines for one schedule slot (a shard rerun over loads it had made) are a conflict:
merge names both (file:line), the slot and the differing values and exits with 2, writing
nothing, unless --prefer newest (the later load) or --prefer FILE (that file's line) picks one;
the lines not kept are counted. Loads made by different pltlab or browser versions are refused
the same way (exit 2, naming the versions and their loads) unless --allow-mixed-versions, which
merges them with a warning (reports keep each version in its own groups). Unsharded files of
one configuration are kept side by side and said to be pooled.`,
		Example: `  ./bin/pltlab merge results/shard-*.jsonl --out results/merged.jsonl
  ./bin/pltlab merge shard-0.jsonl shard-1.jsonl shard-1-rerun.jsonl --out merged.jsonl --force
  ./bin/pltlab merge shard-0.jsonl shard-1.jsonl shard-1-rerun.jsonl --prefer shard-1-rerun.jsonl --out merged.jsonl`,
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
			o, comp, err := mergeFiles(args, cmd.InOrStdin(), cmd.ErrOrStderr(), plan.MergeOptions{Prefer: prefer})
			if err != nil {
				return err
			}
			m := o.Merge
			if mixed := plan.CountVersions(m.Records).Mixed(); len(mixed) > 0 {
				if !allowMixed {
					return usagef("loads of different versions: %s: they are not one sweep; rerun the odd shards with one version, or give --allow-mixed-versions", strings.Join(mixed, "; "))
				}
				for _, line := range mixed {
					fmt.Fprintf(cmd.ErrOrStderr(), "pltlab: WARNING: merged loads of different %s (--allow-mixed-versions)\n", line)
				}
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
	cmd.Flags().StringVar(&prefer, "prefer", "", `settle two different lines for one slot: "newest" (the later load) or FILE (one of the inputs); default: refuse`)
	cmd.Flags().BoolVar(&allowMixed, "allow-mixed-versions", false, "merge loads made by different pltlab or browser versions (with a warning) instead of refusing")
	return cmd
}

// maxCellLines caps the short cells merge and report name one by one.
const maxCellLines = 20

// mergeFiles reads the named files, merges them (plan.Merge) and checks the merged records
// against their plan, printing to stderr the completeness lines, the conflicts opts settled and
// the configurations pooled from several files. comp is nil when no record is from a sharded
// run. Files of different configurations and unsettled conflicts are usage errors (exit 2).
func mergeFiles(names []string, stdin io.Reader, stderr io.Writer, opts plan.MergeOptions) (*analysis.Opened, *plan.Completeness, error) {
	o, err := analysis.Open(names, stdin, slog.Default(), opts)
	if me := (*analysis.MergeError)(nil); errors.As(err, &me) {
		return nil, nil, usagef("%v", err) // files of different configurations, an unsettled conflict, a bad --prefer
	}
	if err != nil {
		return nil, nil, err
	}
	for _, line := range o.Notes(opts.Prefer) {
		fmt.Fprintf(stderr, "pltlab: %s\n", line)
	}
	if o.CompletenessErr != nil {
		return nil, nil, o.CompletenessErr
	}
	if _, _, err := plan.PlanLineOf(o.Records); err != nil {
		return nil, nil, err // a study's shards: 'pltlab reproduce STUDY --merge'
	}
	comp := o.Completeness
	if o.Unrecorded { // shards of an older pltlab: their cut recomputed by this pltlab's cost model
		if comp, err = experiment.CheckComplete(o.Records); err != nil {
			return nil, nil, err
		}
	}
	if comp != nil {
		for _, line := range comp.Lines(maxCellLines) {
			fmt.Fprintf(stderr, "pltlab: %s\n", line)
		}
	}
	return o, comp, nil
}

// incomplete returns an error (exit code 1) naming the missing and short shards of comp, or nil
// when it is complete.
func incomplete(comp *plan.Completeness) error {
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
	return fileout.Fill(out, of, fn)
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
func analyzeFiles(names []string, stdin io.Reader, stderr io.Writer, opts analysis.Options, mopts plan.MergeOptions) (*analysis.Report, *plan.Completeness, error) {
	o, comp, err := mergeFiles(names, stdin, stderr, mopts)
	if err != nil {
		return nil, nil, err
	}
	rep := o.Analyze(opts) // with the node overlaps: shards that shared a node beyond the rule
	if rep.Empty() && !rep.HasFlows() {
		return rep, comp, fmt.Errorf("%s: %w (%d records read, %d corrupt lines skipped, %d records refused)",
			strings.Join(names, ", "), analysis.ErrNoRecords, len(o.Records), o.Stats.Corrupt, o.Stats.RefusedCount)
	}
	return rep, comp, nil
}
