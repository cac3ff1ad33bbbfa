package experiment

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// recordedShards returns, per shard of c cut n ways by a cost model of every block costing the
// same (not this pltlab's), the lines a run of it writes: its plan line listing its blocks and
// one valid load per job, every line carrying the shard and its units' digest.
func recordedShards(t *testing.T, c Config, n int) [][]*result.Record {
	t.Helper()
	p, err := NewSchedule(c)
	if err != nil {
		t.Fatal(err)
	}
	us := p.Units("")
	for i := range us {
		us[i].Cost, us[i].Entry = time.Second, 0
	}
	cut, err := us.Cut(n, "the plan")
	if err != nil {
		t.Fatal(err)
	}
	hash := ConfigHash(c)
	var out [][]*result.Record
	for k, idx := range cut {
		sc := c
		sc.Shard = plan.Shard{Index: k, Count: n}
		for _, u := range idx {
			sc.Units = append(sc.Units, us[u].ID)
		}
		jobs, err := plan.BlockJobs(planLine(p.c, 0), sc.Units)
		if err != nil {
			t.Fatal(err)
		}
		recs := []*result.Record{PlanRecord(sc, len(jobs))}
		for _, i := range jobs {
			j := p.Jobs[i]
			recs = append(recs, &result.Record{V: 1, Experiment: sc.withDefaults().Name, Run: i, Time: time.Unix(int64(i), 0),
				Warmup: j.Warmup, Mode: j.Arm.Mode, Protocol: j.Arm.Protocol, Page: result.Page{Spec: c.Pages[j.Page]},
				Link: result.Link{Spec: c.Links[j.Link]}, Valid: true, PLTMs: 100, Shard: sc.Shard.String(),
				ShardUnits: plan.Digest(sc.Units), ConfigHash: hash})
		}
		out = append(out, recs)
	}
	return out
}

// TestCompletenessReadsRecordedMembership checks that a sweep's shards are judged by the blocks
// their plan lines list, so shards cut by another cost model merge complete (a refit never
// breaks a merge in flight), while the same shards without the record are refused as before.
func TestCompletenessReadsRecordedMembership(t *testing.T) {
	c := kakhkiLike()
	files := recordedShards(t, c, 3)
	today, err := planShards(c, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(today.Slices[0].Jobs) == len(files[0])-1 {
		t.Fatal("the flat cut gives shard 0 as many loads as today's cut: the test shows nothing")
	}
	m, err := plan.Merge(sources(files), plan.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	comp, err := CheckComplete(m.Records)
	if err != nil || !comp.Complete() {
		t.Fatalf("recorded shards of another cut: %+v, %v", comp, err)
	}
	// Shard 1 missing: its blocks' loads are missing, and it is named.
	m, _ = plan.Merge(sources([][]*result.Record{files[0], files[2]}), plan.MergeOptions{})
	comp, err = CheckComplete(m.Records)
	if err != nil || comp.Complete() || len(comp.MissingShards()) != 1 || comp.MissingShards()[0] != "1/3" {
		t.Fatalf("a shard missing: %+v, %v", comp, err)
	}
	want := 0
	for _, r := range files[1][1:] {
		if !r.Warmup {
			want++
		}
	}
	if comp.Missing-comp.MissingWarmups != want {
		t.Errorf("missing %d measured loads, shard 1 had %d", comp.Missing-comp.MissingWarmups, want)
	}
	// A line of another cut in a shard's file is refused.
	bad := recordedShards(t, c, 3)
	bad[2][len(bad[2])-1].ShardUnits = "0123456789abcdef"
	m, _ = plan.Merge(sources(bad), plan.MergeOptions{})
	if _, err := CheckComplete(m.Records); !errors.Is(err, plan.ErrMixedConfigs) {
		t.Errorf("a line of another cut: %v", err)
	}
	// Without the record, the cut is recomputed and these shards are refused.
	for _, f := range files {
		for _, r := range f {
			r.ShardUnits = ""
			if r.Plan != nil {
				r.Plan.Units = nil
			}
		}
	}
	m, _ = plan.Merge(sources(files), plan.MergeOptions{})
	if _, err := CheckComplete(m.Records); err == nil || !strings.Contains(err.Error(), "cost model") {
		t.Errorf("unrecorded shards of another cut: %v", err)
	}
}

// TestShardRecordsItsUnits checks that a sharded plan records its blocks and that every line
// the runner writes would carry their digest.
func TestShardRecordsItsUnits(t *testing.T) {
	c := kakhkiLike()
	c.Shard = plan.Shard{Index: 1, Count: 4}
	p, err := NewSchedule(c)
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := planShards(c, 4)
	if strings.Join(p.Config.Units, ",") != strings.Join(sp.Slices[1].Units, ",") || len(p.Config.Units) == 0 {
		t.Fatalf("units %v, the cut's %v", p.Config.Units, sp.Slices[1].Units)
	}
	jobs, err := plan.BlockJobs(planLine(p.c, 0), p.Config.Units)
	if err != nil || len(jobs) != len(p.Mine) {
		t.Fatalf("BlockJobs of the units: %d loads (%v), the shard's %d", len(jobs), err, len(p.Mine))
	}
	line := PlanRecord(p.Config, len(p.Mine))
	if line.ShardUnits != plan.Digest(p.Config.Units) || len(line.Plan.Units) != len(p.Config.Units) {
		t.Fatalf("plan line %+v", line)
	}
}

// TestLineHashIsConfigHash checks that the plan package hashes a plan line to the config hash
// experiment gives its configuration, so that readers below experiment (analysis.Open, the
// view) check plan lines as 'pltlab merge' does.
func TestLineHashIsConfigHash(t *testing.T) {
	c := kakhkiLike()
	c2 := c
	c2.Cross, c2.TCPCC, c2.Timeout, c2.Warmup = "h2:cubic", "bbr", 7*time.Second, 0
	for _, cfg := range []Config{c, c2, {Pages: []string{"1x5KB"}, Links: []string{"none"}, Arms: CrossArms([]string{"h3"}, []result.Mode{result.Warm})}} {
		line := PlanRecord(cfg, 1)
		if got, want := plan.LineHash(line.Plan), ConfigHash(cfg); got != want {
			t.Errorf("LineHash %s, ConfigHash %s for %+v", got, want, cfg.Links)
		}
		jobs, pj := Order(cfg), plan.LineSchedule(line.Plan)
		if len(jobs) != len(pj) {
			t.Fatalf("%d jobs, the plan line's schedule %d", len(jobs), len(pj))
		}
		for i := range jobs {
			if jobs[i].Link != pj[i].Link || jobs[i].Page != pj[i].Page || jobs[i].Arm != cfg.withDefaults().Arms[pj[i].Arm] || jobs[i].Warmup != pj[i].Warmup {
				t.Fatalf("job %d: %+v vs %+v", i, jobs[i], pj[i])
			}
		}
	}
}

// TestShareIsBlockJobs checks that the two readers of the schedule's layout (plan.Layout) agree:
// the loads Share assembles from the cost model's blocks are the loads plan.BlockJobs gives for
// the same units from the plan line, for every shard of several cuts, with and without warm-ups.
func TestShareIsBlockJobs(t *testing.T) {
	for _, warmup := range []int{0, 1, 2} {
		c := kakhkiLike()
		c.Warmup = warmup
		p, err := NewSchedule(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 3, 7} {
			t.Run(fmt.Sprintf("warmup %d, %d shards", warmup, n), func(t *testing.T) {
				sp, err := p.Shards(n)
				if err != nil {
					t.Fatal(err)
				}
				for _, part := range sp.Slices {
					jobs, err := plan.BlockJobs(planLine(p.c, 0), part.Units)
					if err != nil || !slices.Equal(jobs, part.Jobs) {
						t.Errorf("shard %s: BlockJobs %v (%v), Share %v", part.Shard, jobs, err, part.Jobs)
					}
				}
			})
		}
	}
}
