package experiment

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
