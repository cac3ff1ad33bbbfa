package experiment

import (
	"fmt"
	"slices"
	"time"

	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// Schedule is an experiment's schedule computed once from its configuration and seed: every load
// in the order to make it (Order; a load's index is its run number), the cost model's time of
// each load and of each link's bring-up, and the loads this process makes. Everything that
// asks which loads, how many or how long is a filter or a sum over that one list: the shard's
// slice (Mine: the cut of Shards, or a study's share, Select), what is left after a resume (Resume,
// Left), the estimates (Estimate, Total) and the sharding (Shards, Units, Share). Run, `pltlab
// run --dry-run`, the studies' shards and the cluster jobs all read it.
type Schedule struct {
	// Config is the experiment as given (Resume sets its Name and Done); the schedule's values are
	// computed with its defaults applied.
	Config Config
	// Jobs is Order(Config).
	Jobs []Job
	// Cost is the cost model's time of each job (EstimateLoad of EstimatePLT), by index.
	Cost []time.Duration
	// Setup is the cost model's time of bringing up each link (by Config.Links index) in one
	// process: LinkCheckTime or LinkUpCost, and BrowserLaunchCost per page and protocol.
	Setup []time.Duration
	// Mine are the indexes into Jobs of this process's loads, ascending: the share Select gave,
	// the shard's slice of Shards, or every load when not sharded.
	Mine []int
	// Sharding is the cut Mine was taken from when Config.Shard is set (NewSchedule), nil
	// otherwise: the one cut a sharded run, its dry-run and its merge check read.
	Sharding *Sharding

	c      Config      // Config with defaults
	layout plan.Layout // where each link's warm-ups and measured blocks sit
	units  plan.Units  // the measured blocks as units (blockUnits), computed once
}

// NewSchedule computes c's schedule: the order of its loads, the cost of every load and link,
// and its shard's slice. Errors: a page or link spec that does not parse, or a shard the schedule
// cannot be split into (see Shards).
func NewSchedule(c Config) (*Schedule, error) {
	p := &Schedule{Config: c, c: c.withDefaults()}
	m, err := newCost(p.c)
	if err != nil {
		return nil, err
	}
	p.Jobs = Order(p.c)
	p.Cost = make([]time.Duration, len(p.Jobs))
	for i, j := range p.Jobs {
		p.Cost[i] = m.Load(j.Page, j.Link, j.Arm.Protocol, j.Arm.Mode)
	}
	p.Setup = make([]time.Duration, len(p.c.Links))
	for l := range p.Setup {
		p.Setup[l] = m.Setup(l)
	}
	p.layout = plan.Layout{Cells: len(p.c.Pages) * len(p.c.Arms), Warmup: p.c.Warmup, Runs: p.c.Runs}
	p.units = p.blockUnits()
	switch sh := p.c.Shard; {
	case sh.Count > 0:
		if sh.Index < 0 || sh.Index >= sh.Count {
			return nil, fmt.Errorf("bad shard %s: accepted I/N with 0 <= I < N", sh)
		}
		sp, err := p.Shards(sh.Count)
		if err != nil {
			return nil, err
		}
		p.Mine, p.Sharding = sp.Slices[sh.Index].Jobs, &sp
		p.Config.Units, p.c.Units = sp.Slices[sh.Index].Units, sp.Slices[sh.Index].Units
	default:
		p.Mine = make([]int, len(p.Jobs))
		for i := range p.Mine {
			p.Mine[i] = i
		}
	}
	return p, nil
}

// Select makes the loads of shard sh with the given indexes into Jobs (a study's share of the
// experiment, planned over several experiments at once) the schedule's own: it sets Config.Shard,
// Config.Study (as "STUDY/SCALE"), Config.Units (the IDs of every unit the
// study's shard was given, which its plan line records) and Mine. An index outside the schedule
// is an error.
func (p *Schedule) Select(sh plan.Shard, study string, jobs []int, units []string) error {
	for _, i := range jobs {
		if i < 0 || i >= len(p.Jobs) {
			return fmt.Errorf("shard %s: load %d is outside the schedule of %d loads", sh, i, len(p.Jobs))
		}
	}
	p.Config.Shard, p.Config.Study, p.Config.Units = sh, study, units
	p.c.Shard, p.c.Study, p.c.Units = sh, study, units
	p.Mine = jobs
	return nil
}

// Resume sets the schedule to continue the interrupted experiment whose records are recs (the
// output file's): Config takes the experiment's name (Config.Name must be empty or the same)
// and Config.Done the loads already made (plan.Made: a load that left only a harness_error line
// is made again). Every load line must be the load Jobs puts at its run number and the
// recorded settings Config's: otherwise the error names the first difference.
func (p *Schedule) Resume(recs []*result.Record) error {
	c, err := resumeFrom(p.Config, p.Jobs, recs)
	if err != nil {
		return err
	}
	p.Config.Name, p.Config.Done = c.Name, c.Done
	p.c.Name, p.c.Done = p.Config.withDefaults().Name, c.Done
	return nil
}

// Left returns the indexes into Jobs of the loads of Mine not yet made (plan.Left: not in
// Config.Done), ascending.
func (p *Schedule) Left() []int { return plan.Left(p.Mine, p.Config.Done) }

// Estimate returns the cost model's time of the loads with the given indexes into Jobs plus one
// bring-up (Setup) per link they touch, without StartCost. It fails on an index outside the
// schedule.
func (p *Schedule) Estimate(idx []int) (time.Duration, error) {
	seen := map[int]bool{}
	var d time.Duration
	for _, i := range idx {
		if i < 0 || i >= len(p.Jobs) {
			return 0, fmt.Errorf("load %d is outside the schedule of %d loads", i, len(p.Jobs))
		}
		if l := p.Jobs[i].Link; !seen[l] {
			seen[l] = true
			d += p.Setup[l]
		}
		d += p.Cost[i]
	}
	return d, nil
}

// Total returns the cost model's time of every load of the schedule run in one process (every
// link brought up once), without StartCost: the Total of its units (plan.Units.Total), which
// hold every load, each link's bring-up and warm-ups in its first block's Entry.
func (p *Schedule) Total() time.Duration { return p.Units("").Total() }

// cost is the cost model's time of the loads with the given indexes into Jobs.
func (p *Schedule) cost(idx []int) time.Duration {
	var d time.Duration
	for _, i := range idx {
		d += p.Cost[i]
	}
	return d
}

// blockUnits returns the schedule's measured blocks as units in schedule order, link after link
// (unit u is block u%Runs of link u/Runs, its loads in the layout): ID plan.BlockID("", link,
// block), Cost its loads', Entry the link's bring-up (Setup) and warm-ups, Boundary on each
// link's first block. Every sharding (Shards, a study's shards) cuts them and assembles (Share).
func (p *Schedule) blockUnits() plan.Units {
	var us plan.Units
	for l := range p.c.Links {
		entry := p.Setup[l] + p.cost(p.layout.Warmups(l))
		for b := range p.c.Runs {
			us = append(us, plan.Unit{ID: plan.BlockID("", l, b), Cost: p.cost(p.layout.Block(l, b)), Entry: entry, Boundary: b == 0})
		}
	}
	return us
}

// Units returns the schedule's measured blocks as the units a shard cut gives out
// (plan.Units.Cut; see blockUnits), in schedule order. part names the experiment's units when
// it is one part of a study ("PART:L<l>/B<b>"; "" for a lone experiment).
func (p *Schedule) Units(part string) plan.Units {
	us := slices.Clone(p.units)
	for i := range us {
		if part != "" {
			us[i].ID = part + ":" + us[i].ID
		}
	}
	return us
}

// Shards splits the schedule into n slices that every shard of a job array computes alike (it
// depends only on the configuration and the cost model), and each slice records its units
// (ShardSlice.Units) so that a merge never recomputes it. The schedule is a sequence of randomized complete blocks,
// link after link, each link's warm-up blocks first; the measured blocks are cut into n
// consecutive runs of whole blocks (plan.Units.Cut), so every slice keeps the design (every
// block holds each (page, arm) cell once) and measures something. Every slice also makes the
// warm-up blocks of each link it brings up (Share), so that no shard measures its first loads
// cold on a fresh node: a warm-up load is therefore in every slice that holds its link (its line
// carries the shard, and plan.Merge keeps each shard's). Cuts are placed by the cost model, not
// by count: cut k goes to the block boundary nearest k/n of the total estimated time, moved to
// the nearest boundary between links when one lies within plan.LinkSnap of the per-shard target
// (plan.CutPoints), so that links are split only where balance needs it. Errors: n outside
// 1..MaxShards, or more shards than measured blocks (links x runs), naming the largest useful
// count.
func (p *Schedule) Shards(n int) (Sharding, error) {
	us := p.Units("")
	cut, err := us.Cut(n, fmt.Sprintf("this matrix has %d measured blocks (%d links x %d runs)", len(us), len(p.c.Links), p.c.Runs))
	if err != nil {
		return Sharding{}, err
	}
	sp := Sharding{Loads: len(p.Jobs), Estimate: p.Total()}
	for k, idx := range cut {
		sl := p.Share(idx)
		sl.Shard = plan.Shard{Index: k, Count: n}
		for _, u := range idx {
			sl.Units = append(sl.Units, us[u].ID)
		}
		sp.Slices = append(sp.Slices, sl)
	}
	return sp, nil
}

// Share returns the slice of the schedule that makes the measured blocks with the given indexes into
// Units: Jobs the warm-ups of every link it brings up and the blocks' loads (ascending, each
// once), Links those links in order of first use, Measured the blocks' loads and Estimate the
// cost model's time (each link's entry once, every block's cost); Shard and Units are the
// caller's. It is the one assembly of a shard's loads from the cost model's blocks: Shards and a
// study's shards (studies.Prepared.Shards, its merge) use it; plan.BlockJobs gives the same loads
// from a plan line's recorded units.
func (p *Schedule) Share(blocks []int) ShardSlice {
	var sl ShardSlice
	for _, b := range blocks {
		u, l := p.units[b], b/p.c.Runs
		if !slices.Contains(sl.Links, l) {
			sl.Links = append(sl.Links, l)
			sl.Estimate += u.Entry
			sl.Jobs = append(sl.Jobs, p.layout.Warmups(l)...)
		}
		jobs := p.layout.Block(l, b%p.c.Runs)
		sl.Estimate += u.Cost
		sl.Jobs = append(sl.Jobs, jobs...)
		sl.Measured += len(jobs)
	}
	slices.Sort(sl.Jobs)
	sl.Jobs = slices.Compact(sl.Jobs)
	return sl
}
