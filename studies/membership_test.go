package studies

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// shardsCutBy returns the lines the n shards of p (with o) write when the cut is made by cost,
// a cost model of its own (cost(unit) replaces the unit's modelled time): each shard's study plan
// line (its units), each part's plan line and one valid load per job, every line carrying the
// shard and its units' digest, as RunPrepared writes them.
func shardsCutBy(t *testing.T, p Plan, o RunOptions, n int, cost func(id string) time.Duration) []plan.Source {
	t.Helper()
	whole, err := p.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	p, scheds, us := whole.Plan, whole.Parts, whole.units
	pu := make(plan.Units, len(us))
	for i, u := range us {
		pu[i] = plan.Unit{ID: u.ID, Cost: cost(u.ID), Boundary: u.Boundary}
	}
	cut, err := pu.Cut(n, "the plan")
	if err != nil {
		t.Fatal(err)
	}
	var out []plan.Source
	for k, idx := range cut {
		sh := assemble(us, whole.places, scheds, plan.Shard{Index: k, Count: n}, idx)
		digest := plan.Digest(sh.Units)
		pr := &Prepared{Plan: p, Options: o, Parts: scheds, Slice: &sh}
		recs := []*result.Record{pr.StudyPlanLine()}
		for _, share := range sh.Parts {
			c := scheds[share.Part].Config
			c.Shard, c.Study, c.Units = sh.Shard, p.Study+"/"+string(p.Scale), sh.Units
			recs = append(recs, experiment.PlanRecord(c, len(share.Jobs)))
			jobs := scheds[share.Part].Jobs
			for _, i := range share.Jobs {
				j := jobs[i]
				recs = append(recs, &result.Record{V: 1, Experiment: c.Name, Run: i, Time: time.Unix(int64(1000*k+i), 0), Warmup: j.Warmup,
					Mode: j.Arm.Mode, Protocol: j.Arm.Protocol, Page: result.Page{Spec: c.Pages[j.Page]}, Link: result.Link{Spec: c.Links[j.Link]},
					Valid: true, PLTMs: 100, Shard: sh.Shard.String(), ShardUnits: digest, ConfigHash: experiment.ConfigHash(c)})
			}
		}
		out = append(out, plan.Source{Name: fmt.Sprintf("shard-%d/results.jsonl", k), Records: recs})
	}
	return out
}

// TestMergeReadsRecordedMembership checks that a merge judges every shard by the units its own
// lines record, not by a cut recomputed now: shards cut by another cost model (every block the
// same cost, as a refit of the constants might make it) merge complete, and their lines without
// the record (an older pltlab's) are refused as before.
func TestMergeReadsRecordedMembership(t *testing.T) {
	st, _ := Lookup("kakhki2017")
	p := st.Plan(Quick)
	o := RunOptions{Seed: 1}
	flat := shardsCutBy(t, p, o, 3, func(string) time.Duration { return time.Second })
	today, err := cutShards(p, 3, o)
	if err != nil {
		t.Fatal(err)
	}
	differs := false
	for k, s := range today {
		if len(s.Units) != len(flat[k].Records[0].Plan.Units) {
			differs = true
		}
	}
	if !differs {
		t.Fatal("the flat cost model cut the plan as today's does: the test shows nothing")
	}
	recs, check, err := MergeShards(p, o, flat, plan.MergeOptions{})
	if err != nil || !check.Complete() {
		t.Fatalf("shards of another cut, recorded: %+v, %v", check, err)
	}
	measured := 0
	for _, r := range recs {
		if r.IsLoad() && !r.Warmup {
			measured++
		}
	}
	want := 0
	for _, c := range p.Configs(o) {
		want += len(c.Links) * len(c.Pages) * len(c.Arms) * c.Runs
	}
	if measured != want {
		t.Errorf("merged %d measured loads, want %d", measured, want)
	}
	// A shard missing: named, and its units are nobody's.
	_, check, err = MergeShards(p, o, []plan.Source{flat[0], flat[2]}, plan.MergeOptions{})
	if err != nil || len(check.Missing) != 1 || check.Missing[0] != "1/3" {
		t.Errorf("one shard missing: %+v, %v", check, err)
	}
	// A shard short of loads says so.
	short := flat[1]
	short.Records = short.Records[:len(short.Records)-3]
	_, check, err = MergeShards(p, o, []plan.Source{flat[0], short, flat[2]}, plan.MergeOptions{})
	if err != nil || len(check.Short) != 1 || !strings.Contains(check.Short[0], "shard 1/3") || !strings.Contains(check.Short[0], "3 of its") {
		t.Errorf("a short shard: %+v, %v", check, err)
	}
	// Shard 1 of today's cut beside shards 0 and 2 of the flat cut: units twice or in no shard.
	now := shardsCutBy(t, p, o, 3, func(id string) time.Duration {
		for _, s := range today {
			for _, u := range s.Units {
				if u == id {
					return time.Duration(len(s.Units)) // any cost: only the membership below matters
				}
			}
		}
		return 0
	})
	mixed := []plan.Source{flat[0], {Name: "today-1", Records: now[1].Records}, flat[2]}
	if _, check, err := MergeShards(p, o, mixed, plan.MergeOptions{}); err == nil && check.Complete() {
		t.Errorf("shards of two cuts merged complete: %+v", check)
	}
	// One line of a shard from another cut: refused, naming both digests.
	bad := shardsCutBy(t, p, o, 3, func(string) time.Duration { return time.Second })
	bad[1].Records[len(bad[1].Records)-1].ShardUnits = "0123456789abcdef"
	if _, _, err := MergeShards(p, o, bad, plan.MergeOptions{}); !errors.Is(err, plan.ErrMixedConfigs) || !strings.Contains(err.Error(), "two different cuts") {
		t.Errorf("a line of another cut: %v", err)
	}
	// Without the record (an older pltlab), the cut is recomputed and the other cut refused.
	for _, src := range flat {
		for _, r := range src.Records {
			r.ShardUnits = ""
			if r.Plan != nil {
				r.Plan.Units = nil
			}
		}
	}
	if _, _, err := MergeShards(p, o, flat, plan.MergeOptions{}); !errors.Is(err, plan.ErrMixedConfigs) || !strings.Contains(err.Error(), "cut by the cost model of another version") {
		t.Errorf("shards of another cut, unrecorded: %v", err)
	}
}

// TestStudyShardWritesItsUnits checks the plan line a study's shard opens with: its units, their
// digest, and the loads it schedules.
func TestStudyShardWritesItsUnits(t *testing.T) {
	st, _ := Lookup("carlucci2015")
	o := RunOptions{Shard: plan.Shard{Index: 1, Count: 3}}
	pr, err := st.Plan(Quick).Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	line := pr.StudyPlanLine()
	if line.Kind != result.KindPlan || line.Shard != "1/3" || len(line.Plan.Units) == 0 || line.ShardUnits != plan.Digest(line.Plan.Units) || line.Plan.Loads != pr.Loads() || line.Plan.Study != "carlucci2015/quick" {
		t.Fatalf("study plan line %+v %+v", line, line.Plan)
	}
	for _, pp := range pr.Parts {
		if len(pp.Mine) > 0 && strings.Join(pp.Config.Units, ",") != strings.Join(line.Plan.Units, ",") {
			t.Errorf("part %s records units %v, the shard %v", pp.Config.Name, pp.Config.Units, line.Plan.Units)
		}
	}
}
