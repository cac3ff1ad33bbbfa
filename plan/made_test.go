package plan

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestMadeLoads checks the one rule of a load made, on the cases the sweep's completeness
// (Owed) and a study's shard check (studies' owed) each counted with a key of their own: a
// measured load counts whichever shard made it, a warm-up only the shard's own, a load that
// left only a harness_error line or another configuration's line is not made.
func TestMadeLoads(t *testing.T) {
	recs := []*result.Record{
		{Experiment: "x", Run: 0, Warmup: true, Shard: "0/2"},
		{Experiment: "x", Run: 3, Shard: "1/2"},
		{Experiment: "x", Run: 4, Kind: result.KindHarnessError, Shard: "1/2"},
		{Experiment: "y", Run: 5, Shard: "1/2"},
		{Experiment: "x", Run: -1, Kind: result.KindPlan, Shard: "1/2"},
	}
	made := MadeLoads(recs, func(r *result.Record) bool { return r.Experiment == "x" })
	for _, tc := range []struct {
		name   string
		run    int
		shard  string
		warmup bool
		want   bool
	}{
		{"warm-up, own shard", 0, "0/2", true, true},
		{"warm-up, another shard's", 0, "1/2", true, false},
		{"measured, another shard made it", 3, "0/2", false, true},
		{"measured, own shard", 3, "1/2", false, true},
		{"harness_error only", 4, "1/2", false, false},
		{"another configuration's", 5, "1/2", false, false},
		{"not made", 1, "0/2", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := HasLoad(made, tc.run, tc.shard, tc.warmup); got != tc.want {
				t.Errorf("HasLoad(%d, %q, warmup %v) = %v, want %v", tc.run, tc.shard, tc.warmup, got, tc.want)
			}
		})
	}
}

// TestMadeLeft checks the one subtraction a resume and a completeness check share, with the
// keys each schedule uses: a load's run number (experiment.Schedule.Left, studies.Complete) and a
// study's own schedule's key (highway2023's and evolution's runs).
func TestMadeLeft(t *testing.T) {
	recs := []*result.Record{{Run: 0, PLTMs: 1}, {Run: 2, PLTMs: 1}, {Run: 1, Kind: result.KindHarnessError}}
	runs := Made(recs, func(r *result.Record) (int, bool) { return r.Run, r.IsLoad() })
	if got := Left([]int{0, 1, 2, 3}, runs); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("runs left %v, want [1 3]", got)
	}
	if got := Left([]int{0, 2}, runs); got != nil {
		t.Errorf("complete schedule: left %v, want none", got)
	}
	keys := Made(recs, func(r *result.Record) (string, bool) {
		return fmt.Sprint("path|arm|", r.Run), r.Kind == ""
	})
	if got := Left([]string{"path|arm|0", "path|arm|1", "path|arm|2"}, keys); !slices.Equal(got, []string{"path|arm|1"}) {
		t.Errorf("keys left %v, want [path|arm|1]", got)
	}
}

// TestMiscut checks the one "cut by another cost model" check on the cases experiment's
// samePlan and studies' sameCut each handled before they went: a line of another configuration or shard count
// is skipped, lines that list their shard's loads pass, and the first that does not is named
// with what today's cut gives it (one message for both).
func TestMiscut(t *testing.T) {
	line := func(shard, hash string, loads int) *result.Record {
		return &result.Record{Kind: result.KindPlan, Shard: shard, ConfigHash: hash, Plan: &result.PlanLine{Loads: loads}}
	}
	owes := func(r *result.Record, sh Shard) (int, bool) { return 10 + sh.Index, r.ConfigHash == "a" }
	for _, tc := range []struct {
		name string
		recs []*result.Record
		bad  int // index into recs of the line named, -1 none
		want int
	}{
		{"every line agrees", []*result.Record{line("0/2", "a", 10), line("1/2", "a", 11), {Run: 3, Shard: "0/2"}}, -1, 0},
		{"another configuration skipped", []*result.Record{line("0/2", "b", 99)}, -1, 0},
		{"another shard count skipped", []*result.Record{line("0/3", "a", 99)}, -1, 0},
		{"not sharded skipped", []*result.Record{line("", "a", 99)}, -1, 0},
		{"another cut", []*result.Record{line("0/2", "a", 10), line("1/2", "a", 12)}, 1, 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Miscut(tc.recs, 2, owes)
			switch {
			case tc.bad < 0 && err != nil:
				t.Errorf("%v, want none", err)
			case tc.bad >= 0 && !errors.Is(err, ErrMixedConfigs):
				t.Errorf("%v, want ErrMixedConfigs", err)
			case tc.bad >= 0 && !strings.Contains(err.Error(), fmt.Sprintf("shard %s of : its plan line lists %d loads, and this pltlab's plan gives it %d: the shards were cut by the cost model of another version", tc.recs[tc.bad].Shard, tc.recs[tc.bad].Plan.Loads, tc.want)):
				t.Errorf("got %v; want line %d, %d", err, tc.bad, tc.want)
			}
		})
	}
}

// TestUnitsRecorded checks the one read of the memberships shards recorded: a gap (a shard
// that left no line) is returned, a unit two shards hold and a unit the plan lacks are
// refused, and no plan line that lists units means nothing recorded.
func TestUnitsRecorded(t *testing.T) {
	us := Units{{ID: "L0/B0"}, {ID: "L0/B1"}, {ID: "L1/B0"}}
	line := func(shard string, ids ...string) *result.Record {
		return &result.Record{Kind: result.KindPlan, Shard: shard, ShardUnits: Digest(ids), Plan: &result.PlanLine{Units: ids}}
	}
	all := func(*result.Record) bool { return true }
	for _, tc := range []struct {
		name string
		recs []*result.Record
		gap  []string
		err  string
	}{
		{"whole", []*result.Record{line("0/2", "L0/B0", "L0/B1"), line("1/2", "L1/B0")}, nil, ""},
		{"a shard missing", []*result.Record{line("1/2", "L1/B0")}, []string{"L0/B0", "L0/B1"}, ""},
		{"twice", []*result.Record{line("0/2", "L0/B0", "L0/B1"), line("1/2", "L0/B1", "L1/B0")}, nil, "two shards hold the same unit(s): L0/B1 (0/2 and 1/2)"},
		{"unknown", []*result.Record{line("0/2", "L0/B0", "L9/B0")}, nil, "record unit(s) L9/B0, which the plan does not have"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, gap, err := us.Recorded(tc.recs, 2, all, all, "the plan")
			switch {
			case tc.err != "" && (!errors.Is(err, ErrMixedConfigs) || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("%v, want %q", err, tc.err)
			case tc.err == "" && (err != nil || ms == nil || !slices.Equal(gap, tc.gap)):
				t.Errorf("%v, %v, %v; want gap %v", ms, gap, err, tc.gap)
			}
		})
	}
	if ms, _, err := us.Recorded([]*result.Record{{Run: 1, Shard: "0/2"}}, 2, all, all, "the plan"); ms != nil || err != nil {
		t.Errorf("nothing recorded: %v, %v", ms, err)
	}
}
