package plan

import (
	"fmt"

	"github.com/pltlab/pltlab/result"
)

// Made returns the keys of the work recs hold, as key names it (false: a line that is no made
// work): the one rule by which a resume skips work already made and completeness counts it,
// whatever the schedule's key (a load's run number, a study's own schedule's key).
func Made[K comparable](recs []*result.Record, key func(*result.Record) (K, bool)) map[K]bool {
	out := map[K]bool{}
	for _, r := range recs {
		if k, ok := key(r); ok {
			out[k] = true
		}
	}
	return out
}

// Left returns the keys of schedule (in its order) that made lacks: what a resume still makes,
// none when the records are complete.
func Left[K comparable](schedule []K, made map[K]bool) []K {
	var out []K
	for _, k := range schedule {
		if !made[k] {
			out = append(out, k)
		}
	}
	return out
}

// MadeLoad is a page load made: its index in the schedule (its run number) and the shard that
// made it ("" for any shard).
type MadeLoad struct {
	Run   int
	Shard string
}

// MadeLoads returns the page loads of recs that match (a configuration's, a part's): each under
// its own shard and under "" (any shard). A load that left only a harness_error line is not
// made. Ask it with HasLoad.
func MadeLoads(recs []*result.Record, match func(*result.Record) bool) map[MadeLoad]bool {
	made := map[MadeLoad]bool{}
	for _, r := range recs {
		if match(r) && r.IsLoad() && r.Run >= 0 {
			made[MadeLoad{r.Run, r.Shard}] = true
			made[MadeLoad{r.Run, ""}] = true
		}
	}
	return made
}

// HasLoad reports whether load run that shard owes is made: a measured load counts whichever
// shard (or run of the sweep) made it, a warm-up only the shard's own, since every shard brings
// up its links with their warm-ups.
func HasLoad(made map[MadeLoad]bool, run int, shard string, warmup bool) bool {
	if !warmup {
		shard = ""
	}
	return made[MadeLoad{run, shard}]
}

// Miscut checks the plan lines of recs of a sweep cut into count shards against what this
// pltlab's cut gives each shard (owes: the loads of line r's shard sh; false skips a line of
// another configuration). Shards whose plan lines record no units are judged by the cut today's
// cost model recomputes, so a shard cut by another version's model would be judged against a
// share it never had: the one check that refuses it (experiment.CheckComplete,
// studies.MergeShards). Lines of another shard count are skipped (Merge refuses them). The
// error (wrapping ErrMixedConfigs) names the first line whose listed loads differ, both counts
// and the version that cut it.
func Miscut(recs []*result.Record, count int, owes func(r *result.Record, sh Shard) (int, bool)) error {
	for _, r := range recs {
		if r.Kind != result.KindPlan || r.Plan == nil {
			continue
		}
		sh, err := ParseShard(r.Shard, func(string) string { return "" })
		if err != nil || sh.Count != count {
			continue
		}
		if want, ok := owes(r, sh); ok && r.Plan.Loads != want {
			version := "another version"
			if r.Env != nil && r.Env.Pltlab != "" {
				version = "pltlab " + r.Env.Pltlab
			}
			return fmt.Errorf("%w: shard %s of %s: its plan line lists %d loads, and this pltlab's plan gives it %d: the shards were cut by the cost model of %s; merge them with that version",
				ErrMixedConfigs, r.Shard, r.Experiment, r.Plan.Loads, want, version)
		}
	}
	return nil
}
