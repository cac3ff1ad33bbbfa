package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// scheduleDigest is the SHA-256 (first 16 hex digits) of a schedule written one job a line as
// "run link page protocol mode rep warmup": what decides each record's run number and cell.
func scheduleDigest(jobs []Job) string {
	h := sha256.New()
	for i, j := range jobs {
		fmt.Fprintf(h, "%d %d %d %s %s %d %v\n", i, j.Link, j.Page, j.Arm.Protocol, j.Arm.Mode, j.Rep, j.Warmup)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// TestScheduleUnchanged pins the schedule of three configurations to the digests the schedule
// had before the plan was computed once (NewSchedule): the same config and seed give the same loads
// in the same order, so the records of a run are byte-identical but for their times and
// measurements.
func TestScheduleUnchanged(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Config
		want string
	}{
		{"kakhki-like", kakhkiLike(), "38310b0dd5e4851c"},
		{"carlucci", Config{Pages: []string{"carlucci2015"}, Links: []string{"carlucci2015", "carlucci2015,loss=1%"},
			Arms: CrossArms([]string{"h1", "h2", "h3"}, []result.Mode{result.Cold, result.Warm}), Runs: 10, Warmup: 1}, "1df9e1162da01402"},
		{"defaults", Config{Pages: []string{"5x10KB"}, Links: []string{"none", "3g"}, Arms: CrossArms([]string{"h2", "h3"}, []result.Mode{result.Cold})}, "accceeea4bcf9194"},
	} {
		if got := scheduleDigest(Order(tc.c)); got != tc.want {
			t.Errorf("%s: schedule digest %s, want %s", tc.name, got, tc.want)
		}
	}
}

// unsharded returns c without its shard: the whole schedule.
func unsharded(c Config) Config {
	c.Shard = plan.Shard{}
	return c
}

// planShards is Schedule.Shards of c's whole plan (c without its shard and subset).
func planShards(c Config, n int) (Sharding, error) {
	p, err := NewSchedule(unsharded(c))
	if err != nil {
		return Sharding{}, err
	}
	return p.Shards(n)
}

// shardJobs is NewSchedule(c).Mine: the loads of c's shard.
func shardJobs(c Config) ([]int, error) {
	p, err := NewSchedule(c)
	if err != nil {
		return nil, err
	}
	return p.Mine, nil
}

// estimateJobs is the whole plan's Estimate of the loads idx.
func estimateJobs(c Config, idx []int) (time.Duration, error) {
	p, err := NewSchedule(unsharded(c))
	if err != nil {
		return 0, err
	}
	return p.Estimate(idx)
}

// remaining is the number of loads of c's plan (its shard's) not yet made: NewSchedule(c).Left().
func remaining(c Config) int {
	p, err := NewSchedule(c)
	if err != nil {
		return 0
	}
	return len(p.Left())
}

// estimate is the Total of c's whole plan: every load run in one process.
func estimate(c Config) (time.Duration, error) {
	p, err := NewSchedule(unsharded(c))
	if err != nil {
		return 0, err
	}
	return p.Total(), nil
}
