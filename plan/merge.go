package plan

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/result"
)

// ErrMixedConfigs is returned (wrapped) by Merge when sharded records of more than one
// configuration are given.
var ErrMixedConfigs = errors.New("records of different configurations")

// ErrConflict is returned (wrapped) by Merge when two different lines claim one schedule slot
// and MergeOptions.Prefer does not say which to keep.
var ErrConflict = errors.New("two different lines for one schedule slot")

// Source is one input of Merge: a result file's name and its records.
type Source struct {
	// Name names the file in messages.
	Name string
	// Records are its records, in file order.
	Records []*result.Record
	// Lines are the records' line numbers in the file (from 1), parallel to Records; nil when
	// unknown (messages then give the record's index from 1).
	Lines []int
}

// MergeOptions says how Merge settles conflicts.
type MergeOptions struct {
	// Prefer settles two different lines for one slot: "" refuses (ErrConflict), "newest" keeps
	// the line with the later time (on a tie, the one of the later source), any other value is
	// a source name whose line is kept (a conflict between two other sources is still refused).
	Prefer string
}

// PreferNewest is the MergeOptions.Prefer value that keeps the newer of two conflicting lines.
const PreferNewest = "newest"

// LineRef names one line of one source.
type LineRef struct {
	// File is the source's name; Line its line number (from 1).
	File string
	Line int
}

func (l LineRef) String() string { return fmt.Sprintf("%s:%d", l.File, l.Line) }

// Conflict is two different lines for one schedule slot.
type Conflict struct {
	// Slot names the slot: "config_hash H run N" for a scheduled load of a sharded sweep, or
	// "experiment E run N at TIME" for other lines.
	Slot string
	// First and Second are the two lines, in input order.
	First, Second LineRef
	// Diffs names the fields whose values differ, "plt_ms 150.4 vs 120.5", at most maxDiffs.
	Diffs []string
	// Kept is the line kept when MergeOptions.Prefer settled it (zero when refused).
	Kept LineRef
}

// String describes c in one line.
func (c Conflict) String() string {
	s := fmt.Sprintf("%s: %s and %s differ (%s)", c.Slot, c.First, c.Second, strings.Join(c.Diffs, "; "))
	if c.Kept.File != "" {
		s += "; kept " + c.Kept.String()
	}
	return s
}

// Pool is one experiment configuration whose loads came from several sources or experiments
// that were not sharded: independent runs with the same settings, whose loads Merge keeps side
// by side (and a report pools, since their settings match).
type Pool struct {
	// ConfigHash is their configuration.
	ConfigHash string
	// Experiments and Files name the experiments and the sources holding its loads, in input order.
	Experiments, Files []string
	// Loads counts the load lines kept.
	Loads int
}

// String describes p in one line.
func (p Pool) String() string {
	return fmt.Sprintf("config_hash %s: %d loads of %d experiments (%s) from %d files pooled (same configuration, not shards of one sweep)",
		p.ConfigHash, p.Loads, len(p.Experiments), strings.Join(p.Experiments, ", "), len(p.Files))
}

// Merged is the union of shard files.
type Merged struct {
	// Records are the inputs' records in input order, without duplicates.
	Records []*result.Record
	// Duplicates counts the lines dropped because an earlier input held the same line: the same
	// measurement (every field equal), or the plan line of a shard given again.
	Duplicates int
	// Superseded counts the harness_error lines of a sharded slot dropped because another
	// harness_error line of the same slot was kept (a shard rerun that failed it again).
	Superseded int
	// Conflicts lists the conflicts MergeOptions.Prefer settled.
	Conflicts []Conflict
	// Pooled lists the configurations whose unsharded loads came from several files or
	// experiments.
	Pooled []Pool
	// ConfigHash is the configuration of the sharded records ("" when none is sharded).
	ConfigHash string
}

// mergeKey identifies a slot across files: for a scheduled line of a sharded sweep its config
// hash, kind and run (its index in the schedule); for any other line its experiment, kind,
// run, time, protocol and flow index.
type mergeKey struct {
	hash, experiment, shard string
	kind                    result.Kind
	run                     int
	time                    int64
	protocol                string
	flow                    int
}

// maxDiffs caps the differing fields a Conflict names.
const maxDiffs = 4

// kept is a record Merge keeps, with where it came from and its encoding.
type kept struct {
	rec  *result.Record
	ref  LineRef
	src  int
	json []byte
	drop bool
}

// Merge joins the records of srcs. A line equal in every field to one read before (a file given
// twice, or a rerun shard whose file overlaps its first, partial one) is dropped and counted in
// Duplicates. Two different lines for one slot (a scheduled load of a sharded sweep measured
// twice, or two different lines of one experiment, run and time) are a conflict: Merge returns
// an error wrapping ErrConflict naming both lines, the slot and the differing values, unless
// opts.Prefer picks one. Loads of one unsharded configuration from several files or
// experiments are kept side by side and listed in Pooled. When any record belongs to a
// sharded run, every record that carries a config hash must carry the same one: otherwise
// Merge returns an error wrapping ErrMixedConfigs that names both hashes and a file of each.
func Merge(srcs []Source, opts MergeOptions) (Merged, error) {
	var m Merged
	hash, err := shardedConfigHash(srcs)
	if err != nil {
		return m, err
	}
	m.ConfigHash = hash
	if opts.Prefer != "" && opts.Prefer != PreferNewest && !slices.ContainsFunc(srcs, func(s Source) bool { return s.Name == opts.Prefer }) {
		return m, fmt.Errorf("prefer %q: accepted %q or one of the files given", opts.Prefer, PreferNewest)
	}
	out, conflicts, err := m.keep(srcs, opts.Prefer)
	if err != nil {
		return m, err
	}
	if len(conflicts) > 0 {
		return Merged{}, conflictError(conflicts)
	}
	for _, k := range out {
		if !k.drop {
			m.Records = append(m.Records, k.rec)
		}
	}
	m.Pooled = pools(srcs, m.Records)
	return m, nil
}

// shardedConfigHash is the one config hash of srcs when any record belongs to a sharded run
// ("" when none does, or when no record carries a hash: sharded flow lines carry none), or an
// error wrapping ErrMixedConfigs when a sharded run's records carry two hashes; it names a study's
// merge command when one of the files is a study's shard.
func shardedConfigHash(srcs []Source) (string, error) {
	sharded := false
	hashFile := map[string]string{} // config hash -> first file holding it
	var hashes []string
	for _, s := range srcs {
		for _, r := range s.Records {
			sharded = sharded || r.Shard != "" || r.Kind == result.KindPlan
			if r.ConfigHash != "" && hashFile[r.ConfigHash] == "" {
				hashFile[r.ConfigHash] = s.Name
				hashes = append(hashes, r.ConfigHash)
			}
		}
	}
	if !sharded || len(hashes) == 0 {
		return "", nil
	}
	if len(hashes) == 1 {
		return hashes[0], nil
	}
	for _, src := range srcs {
		for _, r := range src.Records {
			if r.Kind == result.KindPlan && r.Plan != nil && r.Plan.Study != "" {
				st, sc, _ := strings.Cut(r.Plan.Study, "/")
				return "", fmt.Errorf("%w: %s holds a shard of study %s, whose parts have configurations of their own: merge the study's shards with 'pltlab reproduce %s --scale %s --merge FILE...'",
					ErrMixedConfigs, src.Name, r.Plan.Study, st, sc)
			}
		}
	}
	return "", fmt.Errorf("%w: config_hash %s (%s) and %s (%s); give the shards of one sweep only",
		ErrMixedConfigs, hashes[0], hashFile[hashes[0]], hashes[1], hashFile[hashes[1]])
}

// keep walks the records of srcs in order and returns the lines Merge keeps (a line dropped
// later for a preferred one is marked drop) and the conflicts that prefer (the MergeOptions.Prefer
// value) did not settle; it counts duplicates and superseded harness errors in m and records the
// settled conflicts in m.Conflicts. The error is a record that does not encode.
func (m *Merged) keep(srcs []Source, preferred string) ([]*kept, []Conflict, error) {
	var out []*kept
	seen := map[mergeKey]*kept{}
	var conflicts []Conflict
	for si, s := range srcs {
		for i, r := range s.Records {
			line := i + 1
			if i < len(s.Lines) {
				line = s.Lines[i]
			}
			k, slot := slotOf(r)
			b, err := json.Marshal(r)
			if err != nil {
				return nil, nil, fmt.Errorf("%s:%d: %w", s.Name, line, err)
			}
			cur := &kept{rec: r, ref: LineRef{s.Name, line}, src: si, json: b}
			prev := seen[k]
			switch {
			case prev == nil:
				seen[k] = cur
				out = append(out, cur)
				continue
			case bytes.Equal(prev.json, b), k.kind == result.KindPlan:
				m.Duplicates++ // the same line, or the same shard's plan (its hash fixes it) written again
				continue
			case k.kind == result.KindHarnessError && k.hash != "":
				m.Superseded++ // not a measurement: one harness_error line per slot is enough
				continue
			}
			c := Conflict{Slot: slot, First: prev.ref, Second: cur.ref, Diffs: diffFields(prev.json, b)}
			win := prefer(preferred, prev, cur)
			if win == nil {
				conflicts = append(conflicts, c)
				continue
			}
			c.Kept = win.ref
			m.Conflicts = append(m.Conflicts, c)
			if win == cur {
				prev.drop = true
				seen[k] = cur
				out = append(out, cur)
			}
		}
	}
	return out, conflicts, nil
}

// conflictError is Merge's error wrapping ErrConflict for the unsettled conflicts, naming the
// first maxConflictLines of them and how to settle them.
func conflictError(conflicts []Conflict) error {
	var lines []string
	for i, c := range conflicts {
		if i == maxConflictLines {
			lines = append(lines, fmt.Sprintf("and %d more", len(conflicts)-maxConflictLines))
			break
		}
		lines = append(lines, c.String())
	}
	return fmt.Errorf("%w: %d slots measured twice with different values: %s; keep one with --prefer newest or --prefer FILE, or give one of the files",
		ErrConflict, len(conflicts), strings.Join(lines, " | "))
}

// maxConflictLines caps the conflicts a Merge error names one by one.
const maxConflictLines = 5

// interopCell is the cell of an interop case line ("CLIENT>SERVER|CASE", from the case's own
// record, package interop's JSON), false for any other line or one whose record does not
// decode.
func interopCell(r *result.Record) (string, bool) {
	if r.Kind != result.KindInterop || len(r.Interop) == 0 {
		return "", false
	}
	var id struct {
		Case   string `json:"case"`
		Client string `json:"client"`
		Server string `json:"server"`
	}
	if json.Unmarshal(r.Interop, &id) != nil || id.Case == "" {
		return "", false
	}
	return id.Client + ">" + id.Server + "|" + id.Case, true
}

// slotOf returns the slot key of r and its description.
func slotOf(r *result.Record) (mergeKey, string) {
	k := mergeKey{kind: r.Kind, run: r.Run, flow: -1}
	if r.Kind == "" {
		k.kind = result.KindLoad
	}
	switch {
	case r.ConfigHash != "" && r.Kind == result.KindPlan:
		k.hash, k.shard = r.ConfigHash, r.Shard
		return k, fmt.Sprintf("plan of shard %s (config_hash %s)", r.Shard, r.ConfigHash)
	case r.ConfigHash != "" && r.Shard != "" && r.Run >= 0 && (k.kind == result.KindLoad || k.kind == result.KindHarnessError):
		k.hash = r.ConfigHash // a scheduled load of a sharded sweep: its run is its index in the schedule
		if r.Warmup {
			k.shard = r.Shard // a warm-up is made by the shard that brings its link up: one slot per shard
			return k, fmt.Sprintf("config_hash %s run %d (%s, warm-up of shard %s)", r.ConfigHash, r.Run, k.kind, r.Shard)
		}
		return k, fmt.Sprintf("config_hash %s run %d (%s)", r.ConfigHash, r.Run, k.kind)
	}
	if id, ok := interopCell(r); ok && r.Shard != "" {
		// An interop case line of a sharded study (evolution): its cell (client, server, case)
		// and repetition make the slot, never its time, so two shards' lines of one cell are a
		// conflict however far apart they ran. (An unsharded interop file may hold a case's runs
		// one after another, each at its own time.)
		k.experiment, k.protocol = r.Experiment, id
		return k, fmt.Sprintf("experiment %s run %d, interop case %s (%s)", r.Experiment, r.Run, id, k.kind)
	}
	k.experiment, k.time, k.protocol = r.Experiment, r.Time.UnixNano(), r.Protocol
	if r.Flow != nil {
		k.flow = r.FlowIndex
	}
	return k, fmt.Sprintf("experiment %s run %d at %s (%s)", r.Experiment, r.Run, r.Time.Format(time.RFC3339Nano), k.kind)
}

// prefer returns the line opts keeps of two conflicting ones, nil when it keeps neither.
func prefer(p string, a, b *kept) *kept {
	switch {
	case p == "":
		return nil
	case p == PreferNewest:
		if a.rec.Time.After(b.rec.Time) {
			return a
		}
		return b
	case a.ref.File == p && b.ref.File != p:
		return a
	case b.ref.File == p && a.ref.File != p:
		return b
	}
	return nil
}

// diffFields names the top-level JSON fields whose values differ between a and b (at most
// maxDiffs, then a count), with both values when they are short.
func diffFields(a, b []byte) []string {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return []string{"the lines differ"}
	}
	keys := slices.Concat(slices.Collect(maps.Keys(ma)), slices.Collect(maps.Keys(mb)))
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var out []string
	n := 0
	for _, k := range keys {
		va, vb := ma[k], mb[k]
		if bytes.Equal(va, vb) {
			continue
		}
		n++
		if len(out) == maxDiffs {
			continue
		}
		if len(va)+len(vb) <= 80 {
			out = append(out, fmt.Sprintf("%s %s vs %s", k, orAbsent(va), orAbsent(vb)))
		} else {
			out = append(out, k)
		}
	}
	if n > maxDiffs {
		out = append(out, fmt.Sprintf("%d more fields", n-maxDiffs))
	}
	return out
}

func orAbsent(v json.RawMessage) string {
	if v == nil {
		return "(absent)"
	}
	return string(v)
}

// pools finds the configurations whose kept unsharded load lines come from several sources or
// experiments.
func pools(srcs []Source, kept []*result.Record) []Pool {
	keep := map[*result.Record]bool{}
	for _, r := range kept {
		keep[r] = true
	}
	byHash := map[string]*Pool{}
	var order []string
	for _, s := range srcs {
		for _, r := range s.Records {
			if !keep[r] || !r.IsLoad() || r.Shard != "" || r.ConfigHash == "" {
				continue
			}
			p := byHash[r.ConfigHash]
			if p == nil {
				p = &Pool{ConfigHash: r.ConfigHash}
				byHash[r.ConfigHash] = p
				order = append(order, r.ConfigHash)
			}
			p.Loads++
			if !slices.Contains(p.Experiments, r.Experiment) {
				p.Experiments = append(p.Experiments, r.Experiment)
			}
			if !slices.Contains(p.Files, s.Name) {
				p.Files = append(p.Files, s.Name)
			}
		}
	}
	var out []Pool
	for _, h := range order {
		if p := byHash[h]; len(p.Experiments) > 1 || len(p.Files) > 1 {
			out = append(out, *p)
		}
	}
	return out
}

// Versions counts the load lines of recs per pltlab version (Env.Pltlab) and per browser
// (Record.Browser); a line without the field counts under "unknown".
type Versions struct {
	// Pltlab and Browser map a version to its number of load lines.
	Pltlab, Browser map[string]int
}

// CountVersions returns the Versions of the load lines of recs.
func CountVersions(recs []*result.Record) Versions {
	v := Versions{Pltlab: map[string]int{}, Browser: map[string]int{}}
	for _, r := range recs {
		if !r.IsLoad() {
			continue
		}
		p := "unknown"
		if r.Env != nil && r.Env.Pltlab != "" {
			p = r.Env.Pltlab
		}
		v.Pltlab[p]++
		v.Browser[cmp.Or(r.Browser, "unknown")]++
	}
	return v
}

// Mixed describes, one line per kind, the versions of v when there is more than one of a kind
// ("pltlab versions v1 (40 loads), v2 (44 loads)"); nil when every load line was made by one
// pltlab and one browser version.
func (v Versions) Mixed() []string {
	var out []string
	for _, kind := range []struct {
		name string
		m    map[string]int
	}{{"pltlab", v.Pltlab}, {"browser", v.Browser}} {
		if len(kind.m) < 2 {
			continue
		}
		names := slices.Sorted(maps.Keys(kind.m))
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%s (%d loads)", n, kind.m[n])
		}
		out = append(out, fmt.Sprintf("%s versions %s", kind.name, strings.Join(parts, ", ")))
	}
	return out
}
