package studies

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// PartShare is one page-load part's share of a study shard: the part's schedule's Share of the
// shard's blocks of it (Jobs, Links, Measured and its Estimate; Shard and Units are the study
// shard's, in ShardSlice).
type PartShare struct {
	// Part indexes Plan.Parts.
	Part int
	experiment.ShardSlice
}

// ShardSlice is one shard's share of a study's plan (Prepared.Shards), as experiment.ShardSlice
// is of one experiment's schedule.
type ShardSlice struct {
	// Shard names it, "I/N".
	Shard plan.Shard
	// Parts are the page-load parts it makes loads of, in plan order.
	Parts []PartShare
	// Flows index Plan.Flows: the flow parts it runs whole.
	Flows []int
	// Custom index Plan.Custom.Units: the units of the plan's Custom schedule it runs whole
	// (CustomAll: the whole of a schedule without units).
	Custom []int
	// Units are the IDs of its units in plan order (plan.BlockID, plan.FlowID, plan.CustomID):
	// what its lines record (the study's plan line lists them, every line carries their digest).
	Units []string
	// Estimate is the cost model's time of the shard in one process (plan.StartCost
	// included).
	Estimate time.Duration
}

// Share returns the shard's share of part i (nil when it makes no load of it).
func (s ShardSlice) Share(i int) *PartShare {
	for k := range s.Parts {
		if s.Parts[k].Part == i {
			return &s.Parts[k]
		}
	}
	return nil
}

// CustomAll in ShardSlice.Custom stands for the whole of a Custom schedule without units.
const CustomAll = -1

// place is where a unit of a study's plan sits (Prepared.places, by the unit's index in
// Prepared.units): a measured block of one part's link, a whole flow part, or a unit of the
// Custom schedule.
type place struct {
	part, flow int // part index or -1; flow index or -1 (both -1: the plan's Custom)
	block      int // index into the part schedule's Units, or -1
	custom     int // index into Custom.Units (CustomAll: the whole schedule)
}

// units lists the plan's work in plan order (plan.Units) and where each unit sits: every part's
// measured blocks (Units of its experiment plan, link after link), then every flow part, then
// the Custom schedule.
func (p Plan) units(parts []*experiment.Schedule) (plan.Units, []place, error) {
	var us plan.Units
	var at []place
	for i, pp := range parts {
		for b, u := range pp.Units(p.Parts[i].Name) {
			us, at = append(us, u), append(at, place{part: i, flow: -1, block: b})
		}
	}
	for f, fp := range p.Flows {
		d, err := plan.EstimateFlows(len(fp.Mixes)*fp.Runs, fp.Duration, fp.Link)
		if err != nil {
			return nil, nil, fmt.Errorf("part %s: %w", fp.Name, err)
		}
		us, at = append(us, plan.Unit{ID: plan.FlowID(fp.Name), Cost: d, Boundary: true}), append(at, place{part: -1, flow: f, block: -1})
	}
	if c := p.Custom; c != nil && len(c.Units) == 0 {
		us, at = append(us, plan.Unit{ID: plan.CustomID, Cost: c.Estimate(), Boundary: true}), append(at, place{part: -1, flow: -1, block: -1, custom: CustomAll})
	} else if c != nil {
		for i, cu := range c.Units {
			cost := time.Duration(c.Reps*cu.Arms) * c.RunCost
			us, at = append(us, plan.Unit{ID: plan.CustomID + ":" + cu.Name, Cost: cost, Boundary: true}), append(at, place{part: -1, flow: -1, block: -1, custom: i})
		}
	}
	return us, at, nil
}

// partSchedules derives every part's schedule (unsharded) with o's Runs and Seed applied, each
// once, through o.Schedule (experiment.NewSchedule when nil).
func (p Plan) partSchedules(o RunOptions) ([]*experiment.Schedule, error) {
	derive := o.Schedule
	if derive == nil {
		derive = experiment.NewSchedule
	}
	cs := p.Configs(o)
	out := make([]*experiment.Schedule, len(cs))
	for i, c := range cs {
		c.Shard = plan.Shard{}
		pp, err := derive(c)
		if err != nil {
			return nil, fmt.Errorf("part %s: %w", p.Parts[i].Name, err)
		}
		out[i] = pp
	}
	return out, nil
}

// Shards splits the prepared plan into n shards: its parts' schedules as one list of units (every
// part's measured randomized complete blocks and every flow part, in plan order) cut into n
// consecutive runs of whole units balanced by the cost model (plan.CutPoints, cuts moved to a
// boundary between links or parts within plan.LinkSnap of the target). Every shard measures something, and makes the warm-up
// blocks of every link it brings up (so no shard starts cold on a fresh node; see
// experiment.Schedule.Shards), brings up and self-checks its own links, and runs its flow parts whole.
// Errors: n outside 1..plan.MaxShards or more shards than units, naming the largest useful
// count; or a plan with a Custom schedule (ErrNotShardable) asked for more than one shard.
func (pr *Prepared) Shards(n int) ([]ShardSlice, error) {
	p, us := pr.Plan, pr.units
	if err := p.Shardable(); err != nil && n > 1 {
		return nil, err
	}
	cut, err := us.Cut(n, fmt.Sprintf("%s at scale %s has %d measured blocks and flow parts", p.Study, p.Scale, len(us)))
	if err != nil {
		return nil, err
	}
	out := make([]ShardSlice, n)
	for k, idx := range cut {
		out[k] = assemble(us, pr.places, pr.Parts, plan.Shard{Index: k, Count: n}, idx)
	}
	return out, nil
}

// ErrNotShardable is returned (wrapped) when a study's plan cannot be split into shards: its
// Custom schedule has no units (CustomPart.Units) and runs whole in one process.
var ErrNotShardable = errors.New("not shardable")

// Shardable returns nil when the plan can run in shards (pltlab reproduce --shard, --merge,
// the Slurm and Kubernetes jobs), and otherwise one line wrapping ErrNotShardable that says why:
// a plan with a Custom schedule without units runs it whole, in one process.
func (p Plan) Shardable() error {
	if p.Custom == nil || len(p.Custom.Units) > 0 {
		return nil
	}
	return fmt.Errorf("%s is %w: its %d bulk runs are one schedule without units, run whole in one process: run it without --shard",
		p.Study, ErrNotShardable, p.Custom.Runs())
}

// assemble makes shard sh of the units with indexes idx (ascending): each part's share of its
// blocks (experiment.Schedule.Share: the warm-ups of every link it brings up, then its blocks), the
// flow parts, Custom, the unit IDs and the estimate.
func assemble(us plan.Units, places []place, parts []*experiment.Schedule, sh plan.Shard, idx []int) ShardSlice {
	s := ShardSlice{Shard: sh, Estimate: plan.StartCost}
	blocks := map[int][]int{} // part -> its blocks in the shard
	var order []int
	for _, i := range idx {
		u, pl := us[i], places[i]
		s.Units = append(s.Units, u.ID)
		switch {
		case pl.part >= 0:
			if _, ok := blocks[pl.part]; !ok {
				order = append(order, pl.part)
			}
			blocks[pl.part] = append(blocks[pl.part], pl.block)
		case pl.flow >= 0:
			s.Flows = append(s.Flows, pl.flow)
			s.Estimate += u.Cost
		default:
			s.Custom = append(s.Custom, pl.custom)
			s.Estimate += u.Cost
		}
	}
	for _, i := range order {
		share := parts[i].Share(blocks[i])
		s.Parts = append(s.Parts, PartShare{Part: i, ShardSlice: share})
		s.Estimate += share.Estimate
	}
	return s
}

// MaxShards returns the largest useful shard count of the prepared plan: its measured blocks
// plus its flow parts (1 when it is not shardable).
func (pr *Prepared) MaxShards() int {
	if pr.Plan.Shardable() != nil {
		return 1 // see ErrNotShardable
	}
	return len(pr.units)
}

// EstimateOn returns the prepared plan's time on nodes machines, one shard each, from the cost
// model: the longest shard of min(nodes, MaxShards) shards.
func (pr *Prepared) EstimateOn(nodes int) (time.Duration, error) {
	shards, err := pr.Shards(max(1, min(nodes, pr.MaxShards())))
	if err != nil {
		return 0, err
	}
	var d time.Duration
	for _, s := range shards {
		d = max(d, s.Estimate)
	}
	return d, nil
}

// ShardCheck is what MergeShards found of a study's shards.
type ShardCheck struct {
	// Count is the shard count the records carry.
	Count int
	// Missing names the shards ("I/N") that left no line at all.
	Missing []string
	// Short says, one line per shard and part, what a started shard still owes.
	Short []string
	// Duplicates counts the lines read twice and kept once (plan.Merge): the same shard's
	// file given twice, which the merge says rather than drops silently.
	Duplicates int
	// Estimate is the cost model's time of the whole plan in one process, from the parts' schedules
	// the merge prepared (Prepared.Estimate).
	Estimate time.Duration
}

// Complete reports whether every shard made everything it owes.
func (c *ShardCheck) Complete() bool { return len(c.Missing) == 0 && len(c.Short) == 0 }

// MergeShards joins the result files of a study's shards (pltlab reproduce STUDY --shard I/N,
// planned with o's Runs and Seed) into the records of one run, checked against the plan
// prepared once with o (Prepare, unsharded; its Shards): lines read twice are dropped per part (plan.Merge: every
// shard's warm-ups are kept), and the check names the shards that left no line and what each
// started shard still owes (loads per part, flow runs). Errors: records of another study, scale
// or configuration (a part's config_hash that differs from the plan's with o applied, or
// another shard count), naming the file; or a plan that cannot be split so.
func MergeShards(p Plan, o RunOptions, srcs []plan.Source, mo plan.MergeOptions) ([]*result.Record, *ShardCheck, error) {
	if err := p.Shardable(); err != nil {
		return nil, nil, err
	}
	o.Shard, o.Resume = plan.Shard{}, nil
	pr, err := p.Prepare(o)
	if err != nil {
		return nil, nil, err
	}
	p = pr.Plan
	bySrc, order, count, err := pr.splitSources(srcs)
	if err != nil {
		return nil, nil, err
	}
	var out []*result.Record
	dups := 0
	for _, e := range order {
		m, err := plan.Merge(bySrc[e], mo)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, m.Records...)
		dups += m.Duplicates
	}
	shards, gap, recorded, err := pr.recordedShards(count, out)
	if err != nil {
		return nil, nil, err
	}
	if !recorded {
		// Shards of an older pltlab, which recorded no membership, are judged by the cut this
		// pltlab's cost model recomputes: a plan line that lists another share is refused.
		err := plan.Miscut(out, count, func(r *result.Record, sh plan.Shard) (int, bool) {
			part := 0
			for i, pp := range pr.Parts {
				if pp.Config.Name == r.Experiment {
					part = i
				}
			}
			if share := shards[sh.Index].Share(part); share != nil {
				return len(share.Jobs), true
			}
			return 0, true
		})
		if err != nil {
			return nil, nil, err
		}
	}
	check := pr.owed(shards, out)
	check.Count, check.Duplicates = count, dups
	check.Estimate = pr.Estimate()
	if recorded && len(check.Missing) == 0 && len(gap) > 0 {
		check.Short = append(check.Short, fmt.Sprintf("%d unit(s) of the plan are in no shard's record (%s): the shards were cut by two different cost models; rerun the missing units' shards with the pltlab that cut the others", len(gap), plan.Abbreviate(gap, 4)))
	}
	// The merged file says what it holds, so that its report, findings and view say PARTIAL
	// when it lacks something (result.Merge.Partial), whoever reads it later.
	mr := &result.Merge{Of: p.Study + "/" + string(p.Scale), Shards: count, Missing: check.Missing, Short: check.Short}
	for _, s := range shards {
		if !slices.Contains(check.Missing, s.Shard.String()) {
			mr.Present = append(mr.Present, s.Shard.String())
		}
	}
	out = append(out, &result.Record{Kind: result.KindMerge, Experiment: p.Study, Run: -1, Time: time.Now().UTC(), Merge: mr})
	return out, check, nil
}

// splitSources sorts the shards' records by experiment (bySrc, in order of first appearance),
// each source's kept apart for plan.Merge, and returns the shard count they carry. Errors
// (wrapping plan.ErrMixedConfigs): a record of an experiment that is not a part of the plan, of
// a part's configuration other than the plan's (scheds), a plan line of another study or scale,
// or shards of two counts, naming the file; no sharded line at all.
func (pr *Prepared) splitSources(srcs []plan.Source) (bySrc map[string][]plan.Source, order []string, count int, err error) {
	p := pr.Plan
	hashes := map[string]string{} // part experiment -> config hash
	for _, pp := range pr.Parts {
		hashes[pp.Config.Name] = experiment.ConfigHash(pp.Config)
	}
	flowParts := map[string]bool{}
	for _, f := range p.Flows {
		flowParts[PartExperiment(p.Study, f.Name)] = true
	}
	if p.Custom != nil {
		for _, cu := range p.Custom.Units {
			flowParts[cu.Experiment] = true
		}
	}
	countFile := ""
	bySrc = map[string][]plan.Source{}
	for _, s := range srcs {
		group := map[string][]*result.Record{}
		for _, r := range s.Records {
			hash, isPart := hashes[r.Experiment]
			isStudy := r.Experiment == p.Study && r.Kind == result.KindPlan // a shard's own plan line (Prepared.StudyPlanLine)
			switch {
			case !isPart && !flowParts[r.Experiment] && !isStudy:
				return nil, nil, 0, fmt.Errorf("%w: %s holds experiment %q, which is not a part of %s at scale %s", plan.ErrMixedConfigs, s.Name, r.Experiment, p.Study, p.Scale)
			case isPart && r.ConfigHash != "" && r.ConfigHash != hash:
				return nil, nil, 0, fmt.Errorf("%w: %s holds %s with config_hash %s, and %s at scale %s with these flags has %s: give the shards of one reproduction (same --scale, --runs, --seed)",
					plan.ErrMixedConfigs, s.Name, r.Experiment, r.ConfigHash, p.Study, p.Scale, hash)
			case r.Kind == result.KindPlan && r.Plan != nil && r.Plan.Study != p.Study+"/"+string(p.Scale):
				return nil, nil, 0, fmt.Errorf("%w: %s is a shard of %q, not of %s/%s", plan.ErrMixedConfigs, s.Name, r.Plan.Study, p.Study, p.Scale)
			}
			if r.Shard != "" {
				sh, err := plan.ParseShard(r.Shard, func(string) string { return "" })
				if err != nil {
					return nil, nil, 0, fmt.Errorf("%s: %w", s.Name, err)
				}
				if count != 0 && sh.Count != count {
					return nil, nil, 0, fmt.Errorf("%w: %s holds shard %s, and %s one of %d shards", plan.ErrMixedConfigs, s.Name, r.Shard, countFile, count)
				}
				count, countFile = sh.Count, s.Name
			}
			if _, ok := group[r.Experiment]; !ok && len(bySrc[r.Experiment]) == 0 {
				order = append(order, r.Experiment)
			}
			group[r.Experiment] = append(group[r.Experiment], r)
		}
		for e, recs := range group {
			bySrc[e] = append(bySrc[e], plan.Source{Name: s.Name, Records: recs})
		}
	}
	if count == 0 {
		return nil, nil, 0, fmt.Errorf("no line carries a shard: give the results.jsonl of each 'pltlab reproduce %s --shard I/N'", p.Study)
	}
	return bySrc, order, count, nil
}

// owed checks the merged records against what each shard owes: it names the shards that left no
// line (Missing) and, per started shard, the part loads and flow lines it still owes (Short).
// A load counts by plan.HasLoad (a measured load whichever shard made it, a warm-up only the
// shard's own).
func (pr *Prepared) owed(shards []ShardSlice, recs []*result.Record) *ShardCheck {
	p := pr.Plan
	type made struct{ exp, shard string } // a part's flow lines of one shard
	started := plan.Made(recs, func(r *result.Record) (string, bool) { return r.Shard, r.Shard != "" })
	flowLines, unitLines := map[made]int{}, map[made]int{}
	for _, r := range recs {
		if r.IsFlow() {
			flowLines[made{r.Experiment, r.Shard}]++
		}
		if c := p.Custom; c != nil && c.UnitOf != nil {
			if u := c.UnitOf(r); u != "" {
				unitLines[made{u, r.Shard}]++
			}
		}
	}
	check := &ShardCheck{}
	for _, s := range shards {
		name := s.Shard.String()
		if !started[name] {
			check.Missing = append(check.Missing, name)
			continue
		}
		for _, share := range s.Parts {
			pp := pr.Parts[share.Part]
			done := plan.MadeLoads(recs, func(r *result.Record) bool { return r.Experiment == pp.Config.Name })
			missing := 0
			for _, i := range share.Jobs {
				if !plan.HasLoad(done, i, name, pp.Jobs[i].Warmup) {
					missing++
				}
			}
			if missing > 0 {
				check.Short = append(check.Short, fmt.Sprintf("shard %s: part %s: %d of its %d loads missing (continue it with --resume)", name, p.Parts[share.Part].Name, missing, len(share.Jobs)))
			}
		}
		for _, f := range s.Flows {
			fp := p.Flows[f]
			want := 0
			for _, mix := range fp.Mixes {
				want += len(mix) * fp.Runs
			}
			if got := flowLines[made{PartExperiment(p.Study, fp.Name), name}]; got < want {
				check.Short = append(check.Short, fmt.Sprintf("shard %s: flows %s: %d of %d flow lines", name, fp.Name, got, want))
			}
		}
		for _, i := range s.Custom {
			if i == CustomAll {
				continue
			}
			cu := p.Custom.Units[i]
			got := flowLines[made{cu.Experiment, name}]
			if p.Custom.UnitOf != nil {
				got = unitLines[made{cu.Name, name}]
			}
			if want := p.Custom.Reps * cu.Arms; got < want {
				check.Short = append(check.Short, fmt.Sprintf("shard %s: %s: %d of %d %s", name, cu.Name, got, want, cmp.Or(p.Custom.Noun, "flow")+" lines"))
			}
		}
	}
	return check
}

// recordedShards returns the count shards of the study as the merged records say they were cut:
// each present shard's units from its plan line (Prepared.StudyPlanLine; recorded true), read and
// checked by plan.Recorded (its errors), so that refitting the cost model never changes what a
// shard in flight owes. Shards that left no line get no units (the merge names them missing).
// Records of an older pltlab, whose plan lines list no units, get the cut recomputed by this
// pltlab's cost model (recorded false). gap are the plan's units no recorded shard holds.
func (pr *Prepared) recordedShards(count int, recs []*result.Record) (shards []ShardSlice, gap []string, recorded bool, err error) {
	p, us := pr.Plan, pr.units
	index := make(map[string]int, len(us))
	for i, u := range us {
		index[u.ID] = i
	}
	isLine := func(r *result.Record) bool { return r.Experiment == p.Study }
	ms, gap, err := us.Recorded(recs, count, isLine, func(*result.Record) bool { return true }, fmt.Sprintf("%s at scale %s with these flags", p.Study, p.Scale))
	if err != nil {
		return nil, nil, false, err
	}
	if ms == nil {
		shards, err = pr.Shards(count)
		return shards, nil, false, err
	}
	out := make([]ShardSlice, count)
	for k := range out {
		out[k] = ShardSlice{Shard: plan.Shard{Index: k, Count: count}}
	}
	for _, m := range ms {
		idx := make([]int, len(m.Units))
		for i, id := range m.Units {
			idx[i] = index[id]
		}
		slices.Sort(idx)
		out[m.Shard.Index] = assemble(us, pr.places, pr.Parts, m.Shard, idx)
	}
	return out, gap, true, nil
}
