package plan

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/result"
)

// Job is one load of a schedule: indexes into the experiment's pages, links and arms.
type Job struct {
	// Link, Page and Arm index the experiment's links, pages and arms.
	Link, Page, Arm int
	// Rep numbers the measured loads of one cell from 0; warm-ups number from 0 on their own.
	Rep int
	// Warmup marks a warm-up load.
	Warmup bool
}

// Schedule returns every load of an experiment of pages x links x arms cells, warmup warm-up
// and runs measured loads per cell, in the order to make them. Links come one after another
// (each is brought up once). Within a link, the warm-up loads come first, then the measured
// loads in runs blocks; each block holds every (page, arm) cell once, in an order shuffled by a
// PCG seeded with seed and the link's index (a randomized complete block design), so that drift
// over time never favours one protocol and every protocol has been measured the same number of
// times whenever a block ends. The same arguments always give the same order (experiment
// TestScheduleUnchanged pins it by digest).
func Schedule(pages, links, arms, runs, warmup int, seed int64) []Job {
	var jobs []Job
	for l := range links {
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(l)))
		var cells []Job
		for p := range pages {
			for a := range arms {
				cells = append(cells, Job{Link: l, Page: p, Arm: a})
			}
		}
		block := func(rep int, warm bool) {
			for _, i := range rng.Perm(len(cells)) {
				j := cells[i]
				j.Rep, j.Warmup = rep, warm
				jobs = append(jobs, j)
			}
		}
		for w := range warmup {
			block(w, true)
		}
		for r := range runs {
			block(r, false)
		}
	}
	return jobs
}

// Layout is where Schedule puts an experiment's loads: link after link, each link's Warmup
// warm-up blocks first, then its Runs measured blocks, every block Cells loads (pages x arms).
// The one place that turns a link and a block into indexes of the schedule: the cost model's
// blocks (experiment.Schedule) and the loads a recorded membership owes (BlockJobs) read it.
type Layout struct{ Cells, Warmup, Runs int }

// Warmups returns the indexes of link l's warm-up loads, ascending (none without warm-ups).
func (y Layout) Warmups(l int) []int { return indexes(l*(y.Warmup+y.Runs)*y.Cells, y.Warmup*y.Cells) }

// Block returns the indexes of measured block b (from 0) of link l, ascending.
func (y Layout) Block(l, b int) []int {
	return indexes(l*(y.Warmup+y.Runs)*y.Cells+(y.Warmup+b)*y.Cells, y.Cells)
}

// indexes returns from, from+1, ..., from+n-1 (nil when n is 0).
func indexes(from, n int) []int {
	var out []int
	for i := from; i < from+n; i++ {
		out = append(out, i)
	}
	return out
}

// LineSchedule is Schedule of the experiment a plan line describes.
func LineSchedule(p *result.PlanLine) []Job {
	return Schedule(len(p.Pages), len(p.Links), len(p.Arms), p.Runs, p.Warmup, p.Seed)
}

// LineHash returns the config hash of the experiment a plan line describes: the first 16 hex
// digits of the SHA-256 of its pages, links, arms, runs, warm-ups, timeout, seed, TCP congestion
// control, TLS version, cross traffic, input files, device and HTTP/3 stack as JSON (the last
// three left out when they are the defaults, so older hashes stand), and every other setting
// of p.Settings that is set (result.SettingValues, under "settings"; absent when none, so that
// a setting added to result.Settings is hashed with no change here and older hashes stand), the
// same bytes as experiment.ConfigHash of the configuration (experiment
// TestLineHashIsConfigHash).
func LineHash(p *result.PlanLine) string {
	type arm struct {
		Protocol string
		Mode     result.Mode
	}
	arms := make([]arm, len(p.Arms))
	for i, a := range p.Arms {
		arms[i] = arm{a.Protocol, a.Mode}
	}
	more := result.SettingValues(&p.Settings)
	for _, k := range hashedSettings {
		delete(more, k)
	}
	b, _ := json.Marshal(struct {
		Pages    []string           `json:"pages"`
		Links    []string           `json:"links"`
		Arms     []arm              `json:"arms"`
		Runs     int                `json:"runs"`
		Warmup   int                `json:"warmup"`
		Timeout  string             `json:"timeout"`
		Seed     int64              `json:"seed"`
		TCPCC    string             `json:"tcp_cc"`
		TLS      string             `json:"tls"`
		Cross    string             `json:"cross,omitempty"`
		Inputs   []result.InputFile `json:"inputs,omitempty"`
		Device   string             `json:"device,omitempty"`
		H3Stack  string             `json:"h3_stack,omitempty"`
		QUICCC   string             `json:"quic_cc,omitempty"`
		Settings map[string]string  `json:"settings,omitempty"`
	}{p.Pages, p.Links, arms, p.Runs, p.Warmup, time.Duration(p.TimeoutMs * float64(time.Millisecond)).String(), p.Seed, p.TCPCC, p.TLS, p.Cross, p.Inputs, p.Device,
		p.H3Stack, p.QUICCC, more})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// hashedSettings are the fields of result.Settings that LineHash hashes in its own words.
var hashedSettings = []string{"timeout_ms", "tcp_cc", "tls", "device", "h3_stack", "quic_cc"}

// BlockJobs returns the loads (indexes into LineSchedule(p), ascending) a shard given the units
// ids makes: each measured block's loads and the warm-ups of every link it brings up. An ID that
// is not a block of the plan (another part's, or outside its links and runs) is an error.
func BlockJobs(p *result.PlanLine, ids []string) ([]int, error) {
	y := Layout{Cells: len(p.Pages) * len(p.Arms), Warmup: p.Warmup, Runs: p.Runs}
	var out []int
	warmed := map[int]bool{}
	for _, id := range ids {
		part, l, b, ok := ParseBlockID(id)
		if !ok || part != "" || l >= len(p.Links) || b >= p.Runs {
			return nil, fmt.Errorf("unit %q is not a measured block of %d links x %d runs", id, len(p.Links), p.Runs)
		}
		if !warmed[l] {
			warmed[l] = true
			out = append(out, y.Warmups(l)...)
		}
		out = append(out, y.Block(l, b)...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// LineUnits returns every measured block of the plan line's experiment as a unit (its ID
// alone), in schedule order (link after link): the units a cut of it gives out.
func LineUnits(p *result.PlanLine) Units {
	var out Units
	for l := range p.Links {
		for b := range p.Runs {
			out = append(out, Unit{ID: BlockID("", l, b)})
		}
	}
	return out
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

// CheckRecorded compares the records of a sharded experiment (one configuration, as Merge leaves
// them) with what their shards recorded they owe (the units of their plan lines: PlanLine.Units)
// and the schedule their plan line gives: which shards and which cells are missing or short.
// Loads are matched by their run number (their index in the schedule), so shards of different
// runs of the same configuration combine. It returns nil with recorded true when no record is
// sharded, and recorded false when the plan lines list no units (shards of a pltlab before
// 2026-12-02, whose cut only the cost model of experiment can recompute: experiment.CheckComplete).
// A study's shards (merged by 'pltlab reproduce --merge') give nil. Errors: sharded records
// without any plan line, a plan line that does not hash to its config hash, a line whose shard_units is not
// its shard's (ErrMixedConfigs), a block two shards hold or a unit the plan lacks.
func CheckRecorded(recs []*result.Record) (c *Completeness, recorded bool, err error) {
	line, count, err := PlanLineOf(recs)
	if errors.Is(err, errStudyShards) {
		return nil, true, nil // a study's shards: studies.MergeShards checks them
	}
	if err != nil || line == nil {
		return nil, true, err
	}
	ours := func(r *result.Record) bool { return r.ConfigHash == line.ConfigHash }
	ms, _, err := LineUnits(line.Plan).Recorded(recs, count, ours, ours, fmt.Sprintf("the plan of %d links x %d runs", len(line.Plan.Links), line.Plan.Runs))
	if err != nil || ms == nil {
		return nil, err != nil, err
	}
	owed := make([][]int, count)
	for _, m := range ms {
		jobs, err := BlockJobs(line.Plan, m.Units)
		if err != nil {
			return nil, true, fmt.Errorf("%w: shard %s: %v", ErrMixedConfigs, m.Shard, err)
		}
		owed[m.Shard.Index] = jobs
	}
	return Owed(recs, line, owed), true, nil
}

// Owed fills a Completeness from the plan line of the sweep (line), what each shard owes
// (owed[k]: indexes into LineSchedule(line.Plan) of shard k of len(owed)) and the records made.
func Owed(recs []*result.Record, line *result.Record, owed [][]int) *Completeness {
	ours := func(r *result.Record) bool { return r.ConfigHash == line.ConfigHash }
	started := Made(recs, func(r *result.Record) (string, bool) { return r.Shard, ours(r) && r.Shard != "" })
	return completeness(line, LineSchedule(line.Plan), owed, MadeLoads(recs, ours), started)
}

// PlanLineOf returns the first plan line of a sharded experiment's records and the shard count
// the records carry (nil, 0 when no record is sharded and none is a plan line). Errors: sharded
// records without a plan line, shards of a study, a plan line that does not hash to its config
// hash.
func PlanLineOf(recs []*result.Record) (*result.Record, int, error) {
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
		return nil, 0, nil
	}
	if line != nil && line.Plan.Study != "" {
		st, _, _ := strings.Cut(line.Plan.Study, "/")
		return nil, 0, fmt.Errorf("%w: these are shards of study %s (plan line of experiment %s): merge them with 'pltlab reproduce %s --scale SCALE --merge FILES'", errStudyShards, line.Plan.Study, line.Experiment, st)
	}
	if line == nil {
		return nil, 0, errors.New("sharded records without a plan line: give the shards' own files, whose first line is their plan")
	}
	if h := LineHash(line.Plan); h != line.ConfigHash {
		return nil, 0, fmt.Errorf("plan line of shard %s hashes to %s, not its config_hash %s: the file was edited or written by another pltlab version", line.Shard, h, line.ConfigHash)
	}
	if sh, err := ParseShard(line.Shard, func(string) string { return "" }); err == nil {
		count = sh.Count
	}
	return line, count, nil
}

// errStudyShards marks the records of a study's shards, which plan lines of study parts open:
// their completeness is the study's (studies.MergeShards).
var errStudyShards = errors.New("shards of a study")

// completeness fills a Completeness from the schedule (jobs, of the plan line p), what each
// shard owes (owed[k]: indexes into jobs, shard k of len(owed)) and the loads made. A warm-up
// load is counted once per shard that owes it (every shard brings up its links with their
// warm-ups), a measured load once.
func completeness(line *result.Record, jobs []Job, owed [][]int, made map[MadeLoad]bool, started map[string]bool) *Completeness {
	p := line.Plan
	out := &Completeness{ConfigHash: line.ConfigHash, Experiment: line.Experiment}
	owner := make([]string, len(jobs))
	for k, part := range owed {
		sh := Shard{Index: k, Count: len(owed)}
		name := sh.String()
		st := ShardStatus{Shard: sh, Expected: len(part), Started: started[name]}
		out.Loads += len(part)
		for _, i := range part {
			if !jobs[i].Warmup {
				owner[i] = name
			}
			if HasLoad(made, i, name, jobs[i].Warmup) {
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
		if j.Warmup || made[MadeLoad{i, ""}] {
			continue
		}
		out.Missing++
		k := cellKey{j.Link, j.Page, j.Arm}
		cell := cells[k]
		if cell == nil {
			a := p.Arms[j.Arm]
			cell = &Cell{Page: p.Pages[j.Page], Link: p.Links[j.Link], Mode: a.Mode, Protocol: a.Protocol, Want: p.Runs}
			cells[k] = cell
			order = append(order, k)
		}
		cell.Got-- // counts missing for now
		o := owner[i]
		o = cmp.Or(o, "a shard that left no line")
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
