package plan

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"crypto/sha256"
	"encoding/hex"

	"github.com/pltlab/pltlab/result"
)

// Unit is one indivisible piece of work a shard is given whole: a measured randomized complete
// block of one link of an experiment, or a whole flow part.
type Unit struct {
	// ID names the unit by the schedule alone, never by the cost model: BlockID or FlowID.
	// IDs are unique within a plan.
	ID string
	// Cost is the cost model's time of the unit's own work.
	Cost time.Duration
	// Entry is what a shard pays before the unit when it starts on it (Boundary): the link's
	// bring-up and warm-up blocks.
	Entry time.Duration
	// Boundary is true for the first unit of a link or of a part: a cut before it starts a new
	// link, and the shard after the cut pays its Entry.
	Boundary bool
}

// BlockID names measured block b (from 0) of link l (index into the links) of a part ("" for a
// lone experiment): "L<l>/B<b>" or "PART:L<l>/B<b>".
func BlockID(part string, l, b int) string {
	id := "L" + strconv.Itoa(l) + "/B" + strconv.Itoa(b)
	if part != "" {
		return part + ":" + id
	}
	return id
}

// ParseBlockID is BlockID's inverse: the part, link and block of id; ok is false when id is not
// a block's.
func ParseBlockID(id string) (part string, l, b int, ok bool) {
	rest := id
	if i := strings.LastIndexByte(id, ':'); i >= 0 {
		part, rest = id[:i], id[i+1:]
	}
	ls, bs, found := strings.Cut(rest, "/")
	if !found || !strings.HasPrefix(ls, "L") || !strings.HasPrefix(bs, "B") {
		return "", 0, 0, false
	}
	l, err1 := strconv.Atoi(ls[1:])
	b, err2 := strconv.Atoi(bs[1:])
	if err1 != nil || err2 != nil || l < 0 || b < 0 {
		return "", 0, 0, false
	}
	return part, l, b, true
}

// FlowID names a whole flow part: "flows:NAME".
func FlowID(name string) string { return "flows:" + name }

// CustomID names a study's own schedule run whole; a unit of one is CustomID + ":" + its
// name (highway2023: one per path, studies.CustomUnit).
const CustomID = "custom"

// Units is a plan's work as one list of units in plan order, derived once from its schedules:
// its estimate (Total), its cut into shards (Cut) and the check of the cuts its shards recorded
// (Recorded) all read it.
type Units []Unit

// Cut splits the units into n shards of consecutive whole units balanced by their costs
// (CutPoints over the cumulative Cost, each Boundary unit's Entry counted there): out[k] holds
// the indexes of shard k's units, ascending, each shard at least one unit. It is the one check
// of a shard count: errors are n outside 1..MaxShards, or more shards than units, naming the
// largest useful count after of, which says what holds the units and how many ("this matrix
// has 6 measured blocks (3 links x 2 runs)").
func (us Units) Cut(n int, of string) ([][]int, error) {
	if n < 1 || n > MaxShards {
		return nil, fmt.Errorf("bad shard count %d: accepted 1..%d", n, MaxShards)
	}
	if n > len(us) {
		return nil, fmt.Errorf("bad shard count %d: %s, so at most %d shards can each measure something: accepted 1..%d", n, of, len(us), len(us))
	}
	cuts := CutPoints(us.cum(), func(i int) bool { return us[i].Boundary }, n)
	out := make([][]int, n)
	for k := range n {
		for i := cuts[k]; i < cuts[k+1]; i++ {
			out[k] = append(out[k], i)
		}
	}
	return out, nil
}

// cum is the cumulative cost of the units (len(us)+1 values from 0): each unit's Cost, and the
// Entry of each Boundary unit, where a shard starting on it pays it.
func (us Units) cum() []time.Duration {
	cum := make([]time.Duration, len(us)+1)
	for i, u := range us {
		cum[i+1] = cum[i] + u.Cost
		if u.Boundary {
			cum[i+1] += u.Entry
		}
	}
	return cum
}

// Total returns the cost model's time of every unit made in one process, without StartCost:
// each unit's Cost and every link's Entry once (the end of the cut's cumulative cost).
func (us Units) Total() time.Duration { return us.cum()[len(us)] }

// Digest returns the first 16 hex digits of the SHA-256 of the unit IDs, one per line, in the
// order given: the name of a shard's membership that every one of its lines carries
// (shard_units), so that lines of two different cuts of the same shard index are never merged
// as one shard's.
func Digest(ids []string) string {
	h := sha256.New()
	for _, id := range ids {
		h.Write([]byte(id))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Membership is what a shard recorded it was given: its name and its units' IDs in plan order.
type Membership struct {
	// Shard names it.
	Shard Shard
	// Units are the IDs of its units.
	Units []string
}

// cover compares the recorded memberships with the units: the IDs no membership holds (in plan
// order: the work of the shards that left no line, or a gap between two cuts), those two hold
// ("ID (I/N and J/N)": two cuts, whose loads of the unit would be two measurements of one
// slot) and the recorded IDs that are not the units' (a membership of another plan; sorted).
func (us Units) cover(ms []Membership) (uncovered, twice, unknown []string) {
	owner := make(map[string]string, len(us)) // unit ID -> the shard that recorded it first
	for _, u := range us {
		owner[u.ID] = ""
	}
	for _, m := range ms {
		for _, id := range m.Units {
			switch o, known := owner[id]; {
			case !known:
				unknown = append(unknown, id)
			case o != "" && o != m.Shard.String():
				twice = append(twice, fmt.Sprintf("%s (%s and %s)", id, o, m.Shard))
			case o == "":
				owner[id] = m.Shard.String()
			}
		}
	}
	for _, u := range us {
		if owner[u.ID] == "" {
			uncovered = append(uncovered, u.ID)
		}
	}
	slices.Sort(unknown)
	return uncovered, twice, slices.Compact(unknown)
}

// Recorded reads what the shards of a cut into count shards recorded they were given: each
// shard's units from its first plan line that lists some (line says which plan lines are the
// plan's), every line of ours checked to carry their digest (shard_units), and checks them
// against the units' IDs (cover; of names the plan in errors).
// It returns the memberships of count's shards in shard order and the plan's units no shard
// holds; nil memberships when no plan line lists units (shards of a pltlab before 2026-12-02,
// whose cut only today's cost model recomputes). Errors (wrapping ErrMixedConfigs): a line
// whose shard_units is not its shard's plan line's (two cuts of one shard in one file), a unit
// the plan does not have, or a unit two shards hold.
func (us Units) Recorded(recs []*result.Record, count int, line, ours func(*result.Record) bool, of string) ([]Membership, []string, error) {
	units := map[string][]string{} // shard -> unit IDs as recorded
	for _, r := range recs {
		if _, ok := units[r.Shard]; !ok && r.Kind == result.KindPlan && r.Plan != nil && len(r.Plan.Units) > 0 && line(r) {
			units[r.Shard] = r.Plan.Units
		}
	}
	if len(units) == 0 {
		return nil, nil, nil
	}
	for _, r := range recs {
		if r.Shard == "" || r.ShardUnits == "" || !ours(r) {
			continue
		}
		switch ids, ok := units[r.Shard]; {
		case !ok:
			return nil, nil, fmt.Errorf("%w: lines of shard %s carry shard_units %s, and no plan line of that shard lists its units: give each shard's whole results.jsonl", ErrMixedConfigs, r.Shard, r.ShardUnits)
		case r.ShardUnits != Digest(ids):
			return nil, nil, fmt.Errorf("%w: lines of shard %s come from two different cuts (shard_units %s and %s): a shard was rerun with a pltlab of another cost model into the same file; merge one cut's files", ErrMixedConfigs, r.Shard, r.ShardUnits, Digest(ids))
		}
	}
	ms := []Membership{} // recorded, though perhaps none of count's shards
	for name, ids := range units {
		sh, err := ParseShard(name, func(string) string { return "" })
		if err != nil {
			return nil, nil, err
		}
		if sh.Count == count {
			ms = append(ms, Membership{Shard: sh, Units: ids})
		}
	}
	slices.SortFunc(ms, func(a, b Membership) int { return a.Shard.Index - b.Shard.Index })
	switch uncovered, twice, unknown := us.cover(ms); {
	case len(unknown) > 0:
		return nil, nil, fmt.Errorf("%w: the shards record unit(s) %s, which %s does not have: give the shards of one sweep (for a study: same --scale, --runs, --seed)", ErrMixedConfigs, Abbreviate(unknown, 4), of)
	case len(twice) > 0:
		return nil, nil, fmt.Errorf("%w: two shards hold the same unit(s): %s: the shards were cut by two different cost models; merge the shards of one cut", ErrMixedConfigs, Abbreviate(twice, 4))
	default:
		return ms, uncovered, nil
	}
}

// Abbreviate joins the first n of ids with commas and says how many more there are.
func Abbreviate(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:n], ", "), len(ids)-n)
}
