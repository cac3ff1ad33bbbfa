package plan

import (
	"errors"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

// TestMergeInteropSlots: a sharded interop case line's slot is its cell and run, not its time:
// one cell's line given twice is a duplicate, two different lines of one cell from two shards
// are a conflict naming the cell (at any times), and lines of different cells written in the
// same nanosecond are both kept; an unsharded file's runs of one case, at their own times, are
// all kept.
func TestMergeInteropSlots(t *testing.T) {
	at := time.Unix(1000, 0)
	line := func(cell, outcome string, tm time.Time) *result.Record {
		return &result.Record{Kind: result.KindInterop, Experiment: "evolution/interop", Run: 0, Time: tm, Valid: true, Shard: "0/2",
			Interop: []byte(`{"case":"` + cell + `","client":"quic-go","server":"ngtcp2","outcome":"` + outcome + `"}`)}
	}
	m, err := Merge([]Source{{Name: "a", Records: []*result.Record{line("v2", "pass", at), line("zerortt", "pass", at)}},
		{Name: "b", Records: []*result.Record{line("v2", "pass", at)}}}, MergeOptions{})
	if err != nil || len(m.Records) != 2 || m.Duplicates != 1 {
		t.Fatalf("two cells in one nanosecond and a duplicate: %d records, %d duplicates, %v", len(m.Records), m.Duplicates, err)
	}
	_, err = Merge([]Source{{Name: "a", Records: []*result.Record{line("v2", "pass", at)}},
		{Name: "b", Records: []*result.Record{line("v2", "fail", at.Add(time.Hour))}}}, MergeOptions{})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("one cell measured twice by two shards, an hour apart: %v, want a conflict", err)
	}
	a, b := line("v2", "pass", at), line("v2", "fail", at.Add(time.Second))
	a.Shard, b.Shard = "", ""
	if m, err := Merge([]Source{{Name: "interop.jsonl", Records: []*result.Record{a, b}}}, MergeOptions{}); err != nil || len(m.Records) != 2 {
		t.Errorf("two runs of a case in one unsharded file: %v, %v", m.Records, err)
	}
}
