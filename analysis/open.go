package analysis

import (
	"cmp"
	"fmt"
	"io"
	"log/slog"

	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// Opened is a set of result files read and merged the one way every reader of results uses
// (Open): 'pltlab report', 'pltlab merge' and the view (package view) read the same records and
// say the same things of them.
type Opened struct {
	// Names are the files as given ("-" is stdin).
	Names []string
	// Records are the merged records (plan.Merge): lines read twice kept once, every shard's
	// warm-ups kept, files of one configuration pooled side by side.
	Records []*result.Record
	// Stats counts what reading skipped or refused, and the duplicates the merge dropped.
	Stats ReadStats
	// Merge is what the merge did: conflicts settled, lines superseded, pooled files.
	Merge plan.Merged
	// Warnings are what the records say of the run itself that every report repeats: shards
	// that shared a node beyond the rule (plan.NodeOverlaps), a sweep that lacks loads its
	// shards owe, and a completeness that could not be checked.
	Warnings []string
	// Completeness is what a sharded sweep's records hold of what its shards recorded they owe
	// (plan.CheckRecorded); nil when no record is sharded, or when the shards are an older
	// pltlab's that record no units (Unrecorded: only 'pltlab merge', which can recompute their
	// cut with the cost model, checks them).
	Completeness *plan.Completeness
	// Unrecorded is true for sharded records whose plan lines list no units.
	Unrecorded bool
	// CompletenessErr is why the completeness could not be checked (plan.CheckRecorded's error:
	// shards without a plan line, a plan line that does not hash to its config hash, lines of two
	// cuts); it is also one of Warnings. 'pltlab merge' and 'pltlab report' refuse such files, the
	// view shows them with the warning.
	CompletenessErr error
}

// Open reads the named files (ReadFile; "-" reads stdin) and merges them (plan.Merge with mo):
// the one entry point of every reader of result files; a sharded sweep's records are checked
// against what their shards recorded they owe (Completeness). Errors: a file that cannot be read
// (as ReadFile returns it), or a *MergeError: records of different configurations
// (plan.ErrMixedConfigs), two different lines for one slot that mo does not settle
// (plan.ErrConflict) or a bad mo.Prefer. Shards whose records contradict their plan lines are
// read all the same, with CompletenessErr.
func Open(names []string, stdin io.Reader, log *slog.Logger, mo plan.MergeOptions) (*Opened, error) {
	log = cmp.Or(log, slog.Default())
	o := &Opened{Names: names}
	var srcs []plan.Source
	for _, name := range names {
		recs, lines, st, err := ReadFile(name, stdin, log)
		if err != nil {
			return nil, err
		}
		o.Stats.Corrupt += st.Corrupt
		o.Stats.Duplicates += st.Duplicates
		o.Stats.Refused = append(o.Stats.Refused, st.Refused...)
		o.Stats.RefusedCount += st.RefusedCount
		srcs = append(srcs, plan.Source{Name: name, Records: recs, Lines: lines})
	}
	m, err := plan.Merge(srcs, mo)
	if err != nil {
		return nil, &MergeError{Err: err}
	}
	o.Merge, o.Records = m, m.Records
	o.Stats.Duplicates += m.Duplicates
	o.Warnings = plan.NodeOverlaps(m.Records)
	comp, recorded, err := plan.CheckRecorded(m.Records)
	o.Completeness, o.Unrecorded, o.CompletenessErr = comp, !recorded && err == nil, err
	if err != nil {
		o.Warnings = append(o.Warnings, "completeness not checked: "+err.Error())
	}
	if comp != nil && !comp.Complete() {
		lines := comp.Lines(1)
		o.Warnings = append(o.Warnings, "INCOMPLETE SWEEP: "+lines[len(lines)-1]+" (pltlab merge names the shards and cells)")
	}
	return o, nil
}

// Notes are the lines a reader prints about how the files were joined, in order: each conflict
// settled by mo.Prefer, the lines not kept, each pooled configuration and the lines skipped.
func (o *Opened) Notes(prefer string) []string {
	var out []string
	for _, c := range o.Merge.Conflicts {
		out = append(out, fmt.Sprintf("conflict settled by --prefer %s: %s", prefer, c))
	}
	if n := len(o.Merge.Conflicts) + o.Merge.Superseded; n > 0 {
		out = append(out, fmt.Sprintf("%d lines not kept: %d conflicting lines settled by --prefer, %d repeated harness_error lines of one slot",
			n, len(o.Merge.Conflicts), o.Merge.Superseded))
	}
	for _, p := range o.Merge.Pooled {
		out = append(out, p.String())
	}
	if skipped := o.Stats.Corrupt + o.Stats.RefusedCount; skipped > 0 {
		out = append(out, fmt.Sprintf("skipped %d corrupt or refused lines", skipped))
	}
	return out
}

// Analyze analyses the opened records (Analyze) with the read statistics and the run's warnings
// (Warnings) in the report, as every reader shows them.
func (o *Opened) Analyze(opts Options) *Report {
	rep := Analyze(o.Records, opts)
	rep.SetReadStats(o.Stats)
	rep.Warnings = append(rep.Warnings, o.Warnings...)
	return rep
}

// MergeError is Open's error when the files cannot be merged as given (the input's fault, not
// the reading's): it wraps plan.Merge's error and reads the same.
type MergeError struct{ Err error }

func (e *MergeError) Error() string { return e.Err.Error() }

// Unwrap returns plan.Merge's error.
func (e *MergeError) Unwrap() error { return e.Err }
