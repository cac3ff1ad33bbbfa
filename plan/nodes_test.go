package plan

import (
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

func TestNodeOverlaps(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	line := func(shard, host string, cpus int, at time.Duration) *result.Record {
		return &result.Record{Shard: shard, Time: t0.Add(at), WallMs: 1000, Env: &result.Env{Host: host, CPUs: cpus}}
	}
	// Two shards on a 2-core node overlap for 50 s; on a 4-core node they may.
	recs := []*result.Record{
		line("0/3", "a", 2, 0), line("0/3", "a", 2, 99*time.Second),
		line("1/3", "a", 2, 50*time.Second), line("1/3", "a", 2, 200*time.Second),
		line("2/3", "b", 4, 0), line("0/1", "b", 4, 10*time.Second),
	}
	got := NodeOverlaps(recs)
	if len(got) != 1 || !strings.Contains(got[0], "node a: shards [0/3 1/3] ran at once for 50s") {
		t.Fatalf("overlaps %q", got)
	}
	// One after the other on one node: no warning.
	if got := NodeOverlaps([]*result.Record{line("0/2", "a", 2, 0), line("1/2", "a", 2, 2*time.Second)}); got != nil {
		t.Fatalf("serial shards: %q", got)
	}
	if d := Took(recs[:4]); d != 151*time.Second {
		t.Fatalf("took %v, want 151s (the longest shard, 1/3: 50 s to 201 s)", d)
	}
}

// TestTookCountsFirstCheck checks that a run's time starts where its first link's check
// started: a link_check line is written when the check ends, so its time less its recorded
// duration; a line without the duration (records older than it) counts from its time.
func TestTookCountsFirstCheck(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	check := func(durMs float64) *result.Record {
		return &result.Record{Kind: result.KindLinkCheck, Run: -1, Time: t0, Check: &result.LinkCheck{Pass: true, DurationMs: durMs}}
	}
	load := &result.Record{Time: t0.Add(2 * time.Second), WallMs: 1000, PLTMs: 800}
	for _, tc := range []struct {
		name string
		dur  float64
		want time.Duration
	}{
		{"duration recorded", 3500, 6500 * time.Millisecond},
		{"older record", 0, 3 * time.Second},
	} {
		if got := Took([]*result.Record{check(tc.dur), load}); got != tc.want {
			t.Errorf("%s: took %v, want %v", tc.name, got, tc.want)
		}
	}
}
