package experiment

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/plan"
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
	if sharded && len(hashes) > 1 {
		for _, src := range srcs {
			for _, r := range src.Records {
				if r.Kind == result.KindPlan && r.Plan != nil && r.Plan.Study != "" {
					st, sc, _ := strings.Cut(r.Plan.Study, "/")
					return m, fmt.Errorf("%w: %s holds a shard of study %s, whose parts have configurations of their own: merge the study's shards with 'pltlab reproduce %s --scale %s --merge FILE...'",
						ErrMixedConfigs, src.Name, r.Plan.Study, st, sc)
				}
			}
		}
		return m, fmt.Errorf("%w: config_hash %s (%s) and %s (%s); give the shards of one sweep only",
			ErrMixedConfigs, hashes[0], hashFile[hashes[0]], hashes[1], hashFile[hashes[1]])
	}
	if sharded && len(hashes) > 0 {
		m.ConfigHash = hashes[0] // sharded flow lines carry no config hash
	}
	if opts.Prefer != "" && opts.Prefer != PreferNewest && !slices.ContainsFunc(srcs, func(s Source) bool { return s.Name == opts.Prefer }) {
		return m, fmt.Errorf("prefer %q: accepted %q or one of the files given", opts.Prefer, PreferNewest)
	}
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
				return m, fmt.Errorf("%s:%d: %w", s.Name, line, err)
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
			win := prefer(opts.Prefer, prev, cur)
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
	if len(conflicts) > 0 {
		var lines []string
		for i, c := range conflicts {
			if i == maxConflictLines {
				lines = append(lines, fmt.Sprintf("and %d more", len(conflicts)-maxConflictLines))
				break
			}
			lines = append(lines, c.String())
		}
		return Merged{}, fmt.Errorf("%w: %d slots measured twice with different values: %s; keep one with --prefer newest or --prefer FILE, or give one of the files",
			ErrConflict, len(conflicts), strings.Join(lines, " | "))
	}
	for _, k := range out {
		if !k.drop {
			m.Records = append(m.Records, k.rec)
		}
	}
	m.Pooled = pools(srcs, m.Records)
	return m, nil
}

// maxConflictLines caps the conflicts a Merge error names one by one.
const maxConflictLines = 5

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
	var keys []string
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
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

// ShardStatus is what the records hold of one shard.
type ShardStatus struct {
	// Shard names it.
	Shard plan.Shard
	// Expected is the number of its loads in the plan (warm-ups included); Made the number
	// with a load line.
	Expected, Made int
	// Started is true when its plan line or any of its loads is present.
	Started bool
}

// Cell is one (page, link, mode, protocol) of an experiment with fewer measured loads than
// planned.
type Cell struct {
	// Page and Link are the specs; Mode and Protocol the arm.
	Page, Link string
	Mode       result.Mode
	Protocol   string
	// Want is the planned number of measured loads, Got those with a load line.
	Want, Got int
	// Shards are the shards ("I/N") that owe the missing loads.
	Shards []string
}

// Completeness says what a sharded experiment's records hold of its plan.
type Completeness struct {
	// ConfigHash identifies the experiment's configuration; Experiment is its name.
	ConfigHash, Experiment string
	// Shards has one entry per shard of the plan, in order.
	Shards []ShardStatus
	// Loads is the number of loads the shards owe (the schedule's, plus each link's warm-ups
	// once more for every further shard that brings the link up); Missing those without a load
	// line (a load that left only a harness_error line is missing).
	Loads, Missing int
	// MissingWarmups counts the missing loads that are warm-ups.
	MissingWarmups int
	// Short lists the cells with missing measured loads, in schedule order of (link, page, arm).
	Short []Cell
}

// Complete reports whether every planned load has a load line.
func (c *Completeness) Complete() bool { return c.Missing == 0 }

// MissingShards returns the shards ("I/N") that left no line at all.
func (c *Completeness) MissingShards() []string {
	var out []string
	for _, s := range c.Shards {
		if !s.Started {
			out = append(out, s.Shard.String())
		}
	}
	return out
}

// ShortShards returns the shards ("I/N") that started but made fewer loads than planned.
func (c *Completeness) ShortShards() []string {
	var out []string
	for _, s := range c.Shards {
		if s.Started && s.Made < s.Expected {
			out = append(out, s.Shard.String())
		}
	}
	return out
}

// Lines describes c in lines of text: one per shard that is missing or short, one per short
// cell (at most maxCells of them, then one line counting the rest; all when maxCells <= 0),
// and a closing line.
func (c *Completeness) Lines(maxCells int) []string {
	var out []string
	for _, s := range c.Shards {
		switch {
		case !s.Started && s.Expected == 0: // recorded membership: its blocks are known only by the gap it left
			out = append(out, fmt.Sprintf("shard %s missing: no line (its blocks are the short cells below; rerun it: --shard %s)", s.Shard, s.Shard))
		case !s.Started:
			out = append(out, fmt.Sprintf("shard %s missing: none of its %d loads (rerun it: --shard %s)", s.Shard, s.Expected, s.Shard))
		case s.Made < s.Expected:
			out = append(out, fmt.Sprintf("shard %s short: %d of %d loads", s.Shard, s.Made, s.Expected))
		}
	}
	for i, cell := range c.Short {
		if maxCells > 0 && i == maxCells {
			out = append(out, fmt.Sprintf("... and %d more short cells", len(c.Short)-maxCells))
			break
		}
		out = append(out, fmt.Sprintf("cell page %s, link %s, %s %s: %d of %d measured loads (owed by shard %s)",
			cell.Page, cell.Link, cell.Protocol, cell.Mode, cell.Got, cell.Want, strings.Join(cell.Shards, ", ")))
	}
	if c.Complete() {
		return append(out, fmt.Sprintf("complete: %d shards, %d of %d loads (config_hash %s)", len(c.Shards), c.Loads, c.Loads, c.ConfigHash))
	}
	return append(out, fmt.Sprintf("incomplete: %d of %d loads missing (%d warm-ups) in %d shards (config_hash %s)",
		c.Missing, c.Loads, c.MissingWarmups, len(c.MissingShards())+len(c.ShortShards()), c.ConfigHash))
}

// CheckComplete compares the records of a sharded experiment (one configuration, as Merge
// leaves them) with its plan, recomputed from a plan line (PlanRecord): which shards and which
// cells are missing or short. It returns nil when no record is sharded. Loads are matched by
// their run number (their index in the schedule), so shards of different runs of the same
// configuration combine. Errors: sharded records without any plan line, or a plan whose
// configuration does not hash to the records' config hash.
func CheckComplete(recs []*result.Record) (*Completeness, error) {
	var line *result.Record
	count := 0
	sharded := false
	for _, r := range recs {
		sharded = sharded || r.Shard != ""
		if r.Kind == result.KindPlan && r.Plan != nil && line == nil {
			line = r
		}
		if r.Shard != "" && count == 0 {
			if _, n, ok := strings.Cut(r.Shard, "/"); ok {
				fmt.Sscan(n, &count)
			}
		}
	}
	if !sharded && line == nil {
		return nil, nil
	}
	if line != nil && line.Plan.Study != "" {
		st, _, _ := strings.Cut(line.Plan.Study, "/")
		return nil, fmt.Errorf("these are shards of study %s (plan line of experiment %s): merge them with 'pltlab reproduce %s --scale SCALE --merge FILES'", line.Plan.Study, line.Experiment, st)
	}
	if line == nil {
		return nil, errors.New("sharded records without a plan line: give the shards' own files, whose first line is their plan")
	}
	c := FromPlan(line.Plan)
	if h := ConfigHash(c); h != line.ConfigHash {
		return nil, fmt.Errorf("plan line of shard %s hashes to %s, not its config_hash %s: the file was edited or written by another pltlab version", line.Shard, h, line.ConfigHash)
	}
	if sh, err := plan.ParseShard(line.Shard, func(string) string { return "" }); err == nil {
		count = sh.Count
	}
	whole, err := NewPlan(c)
	if err != nil {
		return nil, fmt.Errorf("plan of %d shards: %w", count, err)
	}
	p, recorded, err := recordedParts(recs, line.ConfigHash, whole, count)
	if err != nil {
		return nil, err
	}
	if !recorded { // shards of an older pltlab: the cut recomputed, and checked against their plan lines
		if p, err = whole.Shards(count); err != nil {
			return nil, fmt.Errorf("plan of %d shards: %w", count, err)
		}
		if err := samePlan(recs, line.ConfigHash, p); err != nil {
			return nil, err
		}
	}
	made := map[madeKey]bool{}
	started := map[string]bool{}
	for _, r := range recs {
		if r.ConfigHash != line.ConfigHash {
			continue
		}
		if r.Shard != "" {
			started[r.Shard] = true
		}
		if r.IsLoad() && r.Run >= 0 {
			made[madeKey{r.Run, r.Shard}] = true
			made[madeKey{r.Run, ""}] = true
		}
	}
	return completeness(whole, p, line, made, started), nil
}

// samePlan checks that every plan line of the configuration hash lists as many loads as this
// pltlab's plan gives its shard: the shards are cut by the cost model, so shards cut by another
// version's model would be judged against shares they never had.
func samePlan(recs []*result.Record, hash string, p ShardPlan) error {
	for _, r := range recs {
		if r.Kind != result.KindPlan || r.Plan == nil || r.ConfigHash != hash {
			continue
		}
		sh, err := plan.ParseShard(r.Shard, func(string) string { return "" })
		if err != nil || sh.Count != len(p.Parts) {
			continue // another shard count is refused by Merge
		}
		if want := len(p.Parts[sh.Index].Jobs); r.Plan.Loads != want {
			version := "another version"
			if r.Env != nil && r.Env.Pltlab != "" {
				version = "pltlab " + r.Env.Pltlab
			}
			return fmt.Errorf("shard %s's plan line lists %d loads, and this pltlab's plan gives it %d: the shards were cut by the cost model of %s; merge them with that version", r.Shard, r.Plan.Loads, want, version)
		}
	}
	return nil
}

// madeKey is a load made: its index in the schedule and the shard that made it ("" for any).
type madeKey struct {
	run   int
	shard string
}

// completeness fills a Completeness from the plan (the whole schedule and its shards) and the
// runs made.
// A warm-up load is counted once per shard that owes it (every shard brings up its links with
// their warm-ups), a measured load once.
func completeness(whole *Plan, p ShardPlan, line *result.Record, made map[madeKey]bool, started map[string]bool) *Completeness {
	c, jobs := whole.Config, whole.Jobs
	out := &Completeness{ConfigHash: line.ConfigHash, Experiment: line.Experiment}
	owner := make([]string, len(jobs))
	for _, part := range p.Parts {
		sh := part.Shard.String()
		st := ShardStatus{Shard: part.Shard, Expected: len(part.Jobs), Started: started[sh]}
		out.Loads += len(part.Jobs)
		for _, i := range part.Jobs {
			if !jobs[i].Warmup {
				owner[i] = sh
			}
			key := madeKey{i, sh}
			if !jobs[i].Warmup {
				key.shard = "" // a measured load counts whichever run of the sweep made it
			}
			if made[key] {
				st.Made++
				st.Started = true
			} else if jobs[i].Warmup {
				out.Missing++
				out.MissingWarmups++
			}
		}
		out.Shards = append(out.Shards, st)
	}
	type cellKey struct{ link, page, arm int }
	cells := map[cellKey]*Cell{}
	var order []cellKey
	for i, j := range jobs {
		if j.Warmup || made[madeKey{i, ""}] {
			continue
		}
		out.Missing++
		k := cellKey{j.Link, j.Page, slices.Index(c.Arms, j.Arm)}
		cell := cells[k]
		if cell == nil {
			cell = &Cell{Page: c.Pages[j.Page], Link: c.Links[j.Link], Mode: j.Arm.Mode, Protocol: j.Arm.Protocol, Want: c.withDefaults().Runs}
			cells[k] = cell
			order = append(order, k)
		}
		cell.Got-- // counts missing for now
		o := owner[i]
		if o == "" {
			o = "a shard that left no line"
		}
		if !slices.Contains(cell.Shards, o) {
			cell.Shards = append(cell.Shards, o)
		}
	}
	slices.SortFunc(order, func(a, b cellKey) int {
		return cmp.Or(cmp.Compare(a.link, b.link), cmp.Compare(a.page, b.page), cmp.Compare(a.arm, b.arm))
	})
	for _, k := range order {
		cell := cells[k]
		cell.Got += cell.Want
		out.Short = append(out.Short, *cell)
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
		names := make([]string, 0, len(kind.m))
		for n := range kind.m {
			names = append(names, n)
		}
		slices.Sort(names)
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%s (%d loads)", n, kind.m[n])
		}
		out = append(out, fmt.Sprintf("%s versions %s", kind.name, strings.Join(parts, ", ")))
	}
	return out
}

// recordedParts returns the count shards of the whole plan as the shards' plan lines (of config
// hash hash) record them (result.Plan.Units; recorded true): each present shard's loads are those
// of its recorded blocks (Plan.JobsOf), every line of the shard checked to carry their digest, so
// that refitting the cost model never changes what a shard in flight owes. A shard that left no
// line gets no loads here; completeness then counts the blocks no shard holds as missing. Plan
// lines without units (an older pltlab's) give recorded false. Errors: a line whose shard_units
// is not its shard's plan line's digest (two cuts of one shard index), a block two shards hold,
// or a unit that is not a block of the plan.
func recordedParts(recs []*result.Record, hash string, whole *Plan, count int) (ShardPlan, bool, error) {
	units := map[string][]string{}
	for _, r := range recs {
		if r.Kind == result.KindPlan && r.Plan != nil && r.ConfigHash == hash && len(r.Plan.Units) > 0 {
			if _, ok := units[r.Shard]; !ok {
				units[r.Shard] = r.Plan.Units
			}
		}
	}
	if len(units) == 0 {
		return ShardPlan{}, false, nil
	}
	for _, r := range recs {
		if r.ConfigHash != hash || r.Shard == "" || r.ShardUnits == "" {
			continue
		}
		ids, ok := units[r.Shard]
		if !ok || plan.Digest(ids) != r.ShardUnits {
			return ShardPlan{}, false, fmt.Errorf("%w: lines of shard %s carry shard_units %s, which is not the digest of the units its plan line lists: a shard was rerun into the same file with a pltlab that cut the sweep otherwise; merge one cut's files", ErrMixedConfigs, r.Shard, r.ShardUnits)
		}
	}
	all := make([]string, 0, len(whole.c.Links)*whole.c.Runs)
	for _, u := range whole.Units("") {
		all = append(all, u.ID)
	}
	var ms []plan.Membership
	for name, ids := range units {
		sh, err := plan.ParseShard(name, func(string) string { return "" })
		if err != nil {
			return ShardPlan{}, false, err
		}
		if sh.Count == count {
			ms = append(ms, plan.Membership{Shard: sh, Units: ids})
		}
	}
	cov := plan.Cover(all, ms)
	switch {
	case len(cov.Unknown) > 0:
		return ShardPlan{}, false, fmt.Errorf("%w: the shards' plan lines list unit(s) %s, which the plan of %d links x %d runs does not have", ErrMixedConfigs, strings.Join(cov.Unknown, ", "), len(whole.c.Links), whole.c.Runs)
	case len(cov.Twice) > 0:
		return ShardPlan{}, false, fmt.Errorf("%w: two shards hold the same block(s): %s: the shards were cut by two different cost models; merge the shards of one cut", ErrMixedConfigs, strings.Join(cov.Twice, ", "))
	}
	sp := ShardPlan{Loads: len(whole.Jobs), Estimate: whole.Total()}
	for k := range count {
		sp.Parts = append(sp.Parts, Part{Shard: plan.Shard{Index: k, Count: count}})
	}
	for _, m := range ms {
		jobs, err := whole.JobsOf("", m.Units)
		if err != nil {
			return ShardPlan{}, false, fmt.Errorf("%w: shard %s: %v", ErrMixedConfigs, m.Shard, err)
		}
		part := &sp.Parts[m.Shard.Index]
		part.Jobs, part.Units = jobs, m.Units
		for _, i := range jobs {
			if !whole.Jobs[i].Warmup {
				part.Measured++
			}
		}
	}
	return sp, true, nil
}
