package plan

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/pltlab/pltlab/result"
)

// CPUsPerShard is the whole cores one shard needs so that its timing is not CPU-starved: one for
// Chromium, one for the server and the link emulator. It is the rule the generated cluster jobs
// use (cluster.DefaultCPUs) and NodeOverlaps checks: at most env.cpus / CPUsPerShard shards at
// once on one node. Measured on the 2-core development machine (README, "How many shards may
// share a node"): a second concurrent shard there (2 cores for 2 shards, 1 each) raised the
// first's carlucci2015 PLT medians and its emulator's release lateness, so a 2-core node takes
// one shard.
const CPUsPerShard = 2

// span is when one shard ran on one node.
type span struct {
	shard    string
	from, to time.Time
	cpus     int
}

// NodeOverlaps returns one warning per node (env.host) on which more shards ran at once than
// the rule allows (env.cpus / CPUsPerShard, at least 1): which shards, for how long, and the
// rule. A shard's time on a node runs from its first line's time to the end of its last (see
// Took); lines without a shard or host are not counted. nil when every node kept the rule.
func NodeOverlaps(recs []*result.Record) []string {
	type key struct{ host, shard string }
	spans := map[key]*span{}
	for _, r := range recs {
		if r.Shard == "" || r.Env == nil || r.Env.Host == "" || r.Time.IsZero() {
			continue
		}
		k := key{r.Env.Host, r.Shard}
		end := LineEnd(r)
		s := spans[k]
		if s == nil {
			s = &span{shard: r.Shard, from: r.Time, to: end, cpus: r.Env.CPUs}
			spans[k] = s
		}
		if r.Time.Before(s.from) {
			s.from = r.Time
		}
		if end.After(s.to) {
			s.to = end
		}
		s.cpus = max(s.cpus, r.Env.CPUs)
	}
	byHost := map[string][]*span{}
	for k, s := range spans {
		byHost[k.host] = append(byHost[k.host], s)
	}
	var out []string
	for _, h := range slices.Sorted(maps.Keys(byHost)) {
		ss := byHost[h]
		cpus := 0
		for _, s := range ss {
			cpus = max(cpus, s.cpus)
		}
		allowed := max(1, cpus/CPUsPerShard)
		// Sweep over start and end events; the longest time above the rule and who was there.
		type ev struct {
			t     time.Time
			delta int
			shard string
		}
		var evs []ev
		for _, s := range ss {
			evs = append(evs, ev{s.from, 1, s.shard}, ev{s.to, -1, s.shard})
		}
		sort.Slice(evs, func(i, j int) bool {
			if !evs[i].t.Equal(evs[j].t) {
				return evs[i].t.Before(evs[j].t)
			}
			return evs[i].delta < evs[j].delta // an end before a start at the same instant
		})
		running := map[string]bool{}
		var over time.Duration
		var who []string
		for i, e := range evs {
			if e.delta > 0 {
				running[e.shard] = true
			} else {
				delete(running, e.shard)
			}
			if len(running) > allowed && i+1 < len(evs) {
				over += evs[i+1].t.Sub(e.t)
				for s := range running {
					if !slices.Contains(who, s) {
						who = append(who, s)
					}
				}
			}
		}
		if over > 0 {
			sort.Strings(who)
			out = append(out, fmt.Sprintf("node %s: shards %v ran at once for %s, more than its %d CPUs allow (%d shard(s) of %d cores each): their timings may be CPU-starved",
				h, who, over.Round(time.Second), cpus, allowed, CPUsPerShard))
		}
	}
	return out
}

// LineEnd is when a line's work ended: a cold load's time plus its wall time, a warm one's plus its
// PLT and LoadOverhead, a flow's plus its duration, any other line's time (Took spans
// a run with it).
func LineEnd(r *result.Record) time.Time {
	switch {
	case r.IsLoad() && r.Mode == result.Warm:
		return r.Time.Add(time.Duration(r.PLTMs*float64(time.Millisecond)) + LoadOverhead)
	case r.IsLoad():
		return r.Time.Add(time.Duration(r.WallMs * float64(time.Millisecond)))
	case r.IsFlow():
		return r.Time.Add(time.Duration(r.DurationS * float64(time.Second)))
	}
	return r.Time
}
