package experiment

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/result"
)

// ErrMixedConfigs is returned (wrapped) by Merge when sharded records of more than one
// configuration are given.
var ErrMixedConfigs = errors.New("records of different configurations")

// Source is one input of Merge: a result file's name and its records.
type Source struct {
	// Name names the file in messages.
	Name string
	// Records are its records, in file order.
	Records []*result.Record
}

// Merged is the union of shard files.
type Merged struct {
	// Records are the inputs' records in input order, without duplicates.
	Records []*result.Record
	// Duplicates counts the records dropped because an earlier input held the same line: for
	// sharded records the same (config hash, kind, run, and shard for plan lines), for others the
	// same (experiment, run, time, protocol, kind).
	Duplicates int
	// ConfigHash is the configuration of the sharded records ("" when none is sharded).
	ConfigHash string
}

// mergeKey identifies a line across files.
type mergeKey struct {
	hash, experiment, shard string
	kind                    result.Kind
	run                     int
	time                    int64
	protocol                string
}

// Merge joins the records of srcs, dropping duplicates (a file given twice, or a shard rerun
// whose file overlaps its first, partial one: the first line of a load wins). A warm-up load is
// made by every shard that brings up its link (PlanShards), so its lines of different shards are
// all kept. When any record
// belongs to a sharded run, every record that carries a config hash must carry the same one:
// otherwise Merge returns an error wrapping ErrMixedConfigs that names both hashes and a file
// of each.
func Merge(srcs []Source) (Merged, error) {
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
	seen := map[mergeKey]bool{}
	for _, s := range srcs {
		for _, r := range s.Records {
			k := mergeKey{kind: r.Kind, run: r.Run}
			if r.Kind == "" {
				k.kind = result.KindLoad
			}
			switch {
			case r.ConfigHash != "" && r.Kind == result.KindPlan:
				k.hash, k.shard = r.ConfigHash, r.Shard
			case r.ConfigHash != "" && r.Run >= 0 && (k.kind == result.KindLoad || k.kind == result.KindHarnessError):
				k.hash = r.ConfigHash // a scheduled load: its run is its index in the schedule
				if r.Warmup {
					k.shard = r.Shard // every shard makes its links' warm-ups (PlanShards)
				}
			default:
				k.experiment, k.time, k.protocol = r.Experiment, r.Time.UnixNano(), r.Protocol
			}
			if seen[k] {
				m.Duplicates++
				continue
			}
			seen[k] = true
			m.Records = append(m.Records, r)
		}
	}
	return m, nil
}

// ShardStatus is what the records hold of one shard.
type ShardStatus struct {
	// Shard names it.
	Shard Shard
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
	var plan *result.Record
	count := 0
	sharded := false
	for _, r := range recs {
		sharded = sharded || r.Shard != ""
		if r.Kind == result.KindPlan && r.Plan != nil && plan == nil {
			plan = r
		}
		if r.Shard != "" && count == 0 {
			if _, n, ok := strings.Cut(r.Shard, "/"); ok {
				fmt.Sscan(n, &count)
			}
		}
	}
	if !sharded && plan == nil {
		return nil, nil
	}
	if plan != nil && plan.Plan.Study != "" {
		st, _, _ := strings.Cut(plan.Plan.Study, "/")
		return nil, fmt.Errorf("these are shards of study %s (plan line of experiment %s): merge them with 'pltlab reproduce %s --scale SCALE --merge FILES'", plan.Plan.Study, plan.Experiment, st)
	}
	if plan == nil {
		return nil, errors.New("sharded records without a plan line: give the shards' own files, whose first line is their plan")
	}
	c := FromPlan(plan.Plan)
	if h := ConfigHash(c); h != plan.ConfigHash {
		return nil, fmt.Errorf("plan line of shard %s hashes to %s, not its config_hash %s: the file was edited or written by another pltlab version", plan.Shard, h, plan.ConfigHash)
	}
	if sh, err := ParseShard(plan.Shard, func(string) string { return "" }); err == nil {
		count = sh.Count
	}
	p, err := PlanShards(c, count)
	if err != nil {
		return nil, fmt.Errorf("plan of %d shards: %w", count, err)
	}
	made := map[madeKey]bool{}
	started := map[string]bool{}
	for _, r := range recs {
		if r.ConfigHash != plan.ConfigHash {
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
	return completeness(c, p, plan, made, started), nil
}

// madeKey is a load made: its index in the schedule and the shard that made it ("" for any).
type madeKey struct {
	run   int
	shard string
}

// completeness fills a Completeness from the plan and the runs made.
// A warm-up load is counted once per shard that owes it (every shard brings up its links with
// their warm-ups), a measured load once.
func completeness(c Config, p Plan, plan *result.Record, made map[madeKey]bool, started map[string]bool) *Completeness {
	jobs := Schedule(c)
	out := &Completeness{ConfigHash: plan.ConfigHash, Experiment: plan.Experiment}
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
		if !slices.Contains(cell.Shards, owner[i]) {
			cell.Shards = append(cell.Shards, owner[i])
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
