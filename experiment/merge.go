package experiment

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

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

// CheckComplete compares the records of a sharded experiment (one configuration, as plan.Merge
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
			continue // another shard count is refused by plan.Merge
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
			return ShardPlan{}, false, fmt.Errorf("%w: lines of shard %s carry shard_units %s, which is not the digest of the units its plan line lists: a shard was rerun into the same file with a pltlab that cut the sweep otherwise; merge one cut's files", plan.ErrMixedConfigs, r.Shard, r.ShardUnits)
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
		return ShardPlan{}, false, fmt.Errorf("%w: the shards' plan lines list unit(s) %s, which the plan of %d links x %d runs does not have", plan.ErrMixedConfigs, strings.Join(cov.Unknown, ", "), len(whole.c.Links), whole.c.Runs)
	case len(cov.Twice) > 0:
		return ShardPlan{}, false, fmt.Errorf("%w: two shards hold the same block(s): %s: the shards were cut by two different cost models; merge the shards of one cut", plan.ErrMixedConfigs, strings.Join(cov.Twice, ", "))
	}
	sp := ShardPlan{Loads: len(whole.Jobs), Estimate: whole.Total()}
	for k := range count {
		sp.Parts = append(sp.Parts, Part{Shard: plan.Shard{Index: k, Count: count}})
	}
	for _, m := range ms {
		jobs, err := whole.JobsOf("", m.Units)
		if err != nil {
			return ShardPlan{}, false, fmt.Errorf("%w: shard %s: %v", plan.ErrMixedConfigs, m.Shard, err)
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
