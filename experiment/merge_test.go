package experiment

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// fakeShards returns, per shard of c split n ways, the lines a run of it would write: its plan
// line and one valid load record per job.
func fakeShards(t *testing.T, c Config, n int) [][]*result.Record {
	t.Helper()
	sp, err := planShards(c, n)
	if err != nil {
		t.Fatal(err)
	}
	jobs := Order(c)
	hash := ConfigHash(c)
	var out [][]*result.Record
	for _, p := range sp.Slices {
		sc := c
		sc.Shard = p.Shard
		recs := []*result.Record{PlanRecord(sc, len(p.Jobs))}
		for _, i := range p.Jobs {
			j := jobs[i]
			recs = append(recs, &result.Record{V: 1, Experiment: sc.withDefaults().Name, Run: i, Time: time.Unix(int64(i), 0),
				Warmup: j.Warmup, Mode: j.Arm.Mode, Protocol: j.Arm.Protocol, Page: result.Page{Spec: c.Pages[j.Page]},
				Link: result.Link{Spec: c.Links[j.Link]}, Valid: true, PLTMs: 100, Shard: p.Shard.String(), ConfigHash: hash})
		}
		out = append(out, recs)
	}
	return out
}

func sources(files [][]*result.Record) []plan.Source {
	var out []plan.Source
	for i, f := range files {
		out = append(out, plan.Source{Name: fmt.Sprintf("shard-%d.jsonl", i), Records: f})
	}
	return out
}

// cellCounts counts measured loads per (page, link, protocol, mode).
func cellCounts(recs []*result.Record) map[string]int {
	out := map[string]int{}
	for _, r := range recs {
		if r.IsLoad() && !r.Warmup {
			out[r.Page.Spec+"|"+r.Link.Spec+"|"+r.Protocol+"|"+string(r.Mode)]++
		}
	}
	return out
}

func TestMergeComplete(t *testing.T) {
	c := kakhkiLike()
	files := fakeShards(t, c, 4)
	files = append(files, files[1]) // a shard given twice
	m, err := plan.Merge(sources(files), plan.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Duplicates != len(files[1]) || m.ConfigHash != ConfigHash(c) {
		t.Fatalf("duplicates %d (want %d), hash %s", m.Duplicates, len(files[1]), m.ConfigHash)
	}
	got := cellCounts(m.Records)
	want := map[string]int{}
	for _, j := range Order(c) {
		if !j.Warmup {
			want[c.Pages[j.Page]+"|"+c.Links[j.Link]+"|"+j.Arm.Protocol+"|"+string(j.Arm.Mode)]++
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("merged cells %v, want the unsharded schedule's %v", got, want)
	}
	comp, err := CheckComplete(m.Records)
	if err != nil {
		t.Fatal(err)
	}
	if !comp.Complete() || len(comp.Shards) != 4 || len(comp.Short) != 0 {
		t.Fatalf("complete = %v: %v", comp.Complete(), comp.Lines(0))
	}
	if lines := comp.Lines(0); len(lines) != 1 || !strings.HasPrefix(lines[0], "complete: 4 shards") {
		t.Fatalf("lines %q", lines)
	}
	// A shard cut by another cost model: its plan line lists another share, and is refused.
	files[2][0].Plan.Loads--
	m, err = plan.Merge(sources(files[:4]), plan.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckComplete(m.Records); err == nil || !strings.Contains(err.Error(), "cut by the cost model of another version") {
		t.Fatalf("a shard of another cut: %v", err)
	}
}

func TestMergeMissingAndShort(t *testing.T) {
	c := kakhkiLike()
	files := fakeShards(t, c, 4)
	short := len(files[1]) / 2
	given := [][]*result.Record{files[0], files[1][:short], files[3]} // shard 2 never ran, shard 1 died half-way
	m, err := plan.Merge(sources(given), plan.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	comp, err := CheckComplete(m.Records)
	if err != nil {
		t.Fatal(err)
	}
	if comp.Complete() {
		t.Fatal("complete with a shard missing")
	}
	if got := comp.MissingShards(); !reflect.DeepEqual(got, []string{"2/4"}) {
		t.Fatalf("missing shards %v, want [2/4]", got)
	}
	if got := comp.ShortShards(); !reflect.DeepEqual(got, []string{"1/4"}) {
		t.Fatalf("short shards %v, want [1/4]", got)
	}
	wantMissing := len(files[1]) - short + len(files[2]) - 1 // minus the plan line of shard 2
	if comp.Missing != wantMissing {
		t.Fatalf("missing %d loads, want %d", comp.Missing, wantMissing)
	}
	if len(comp.Short) == 0 {
		t.Fatal("no short cell named")
	}
	for _, cell := range comp.Short {
		if cell.Got >= cell.Want || len(cell.Shards) == 0 {
			t.Fatalf("cell %+v", cell)
		}
		for _, s := range cell.Shards {
			if s != "1/4" && s != "2/4" {
				t.Fatalf("cell %+v owed by %s", cell, s)
			}
		}
	}
	text := strings.Join(comp.Lines(0), "\n")
	for _, want := range []string{"shard 2/4 missing", "shard 1/4 short", "incomplete:", "owed by shard"} {
		if !strings.Contains(text, want) {
			t.Errorf("lines lack %q:\n%s", want, text)
		}
	}
	// The rerun shards complete it.
	m, _ = plan.Merge(sources(append(given, files[1], files[2])), plan.MergeOptions{})
	if comp, _ := CheckComplete(m.Records); !comp.Complete() {
		t.Fatalf("after the reruns: %v", comp.Lines(0))
	}
}

func TestMergeRefusesMixedConfigs(t *testing.T) {
	a := kakhkiLike()
	b := kakhkiLike()
	b.Runs = 5
	fa, fb := fakeShards(t, a, 2), fakeShards(t, b, 2)
	_, err := plan.Merge(sources([][]*result.Record{fa[0], fb[1]}), plan.MergeOptions{})
	if !errors.Is(err, plan.ErrMixedConfigs) {
		t.Fatalf("err = %v, want ErrMixedConfigs", err)
	}
	for _, want := range []string{ConfigHash(a), ConfigHash(b), "shard-0.jsonl", "shard-1.jsonl"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error of several lines: %q", err)
	}
}

func TestCheckCompleteUnsharded(t *testing.T) {
	recs := []*result.Record{{V: 1, Experiment: "x", Run: 0, Protocol: "h2", Valid: true}}
	comp, err := CheckComplete(recs)
	if comp != nil || err != nil {
		t.Fatalf("unsharded: %v, %v", comp, err)
	}
	recs[0].Shard = "0/2"
	if _, err := CheckComplete(recs); err == nil || !strings.Contains(err.Error(), "without a plan line") {
		t.Fatalf("no plan line: err = %v", err)
	}
}

func TestResumeShard(t *testing.T) {
	c := kakhkiLike()
	files := fakeShards(t, c, 3)
	half := files[1][:len(files[1])/2] // the plan line and the first loads of shard 1
	c.Shard = plan.Shard{Index: 1, Count: 3}
	rc, err := ResumeFrom(c, half)
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.Done) != len(half)-1 {
		t.Fatalf("done %d, want %d", len(rc.Done), len(half)-1)
	}
	if got, want := remaining(rc), len(files[1])-len(half); got != want {
		t.Fatalf("remaining %d, want %d (the rest of shard 1 only)", got, want)
	}
}

func TestCompletenessLinesCapped(t *testing.T) {
	c := kakhkiLike()
	files := fakeShards(t, c, 4)
	m, _ := plan.Merge(sources([][]*result.Record{files[0]}), plan.MergeOptions{})
	comp, err := CheckComplete(m.Records)
	if err != nil {
		t.Fatal(err)
	}
	if len(comp.Short) <= 5 {
		t.Fatalf("only %d short cells", len(comp.Short))
	}
	lines := comp.Lines(5)
	if want := 3 + 5 + 1 + 1; len(lines) != want { // 3 missing shards, 5 cells, "... more", closing
		t.Fatalf("%d lines, want %d: %q", len(lines), want, lines)
	}
	if !strings.Contains(lines[8], fmt.Sprintf("and %d more short cells", len(comp.Short)-5)) {
		t.Fatalf("line %q", lines[8])
	}
}

// TestConfigHashCoversTraceContent: editing the trace behind a trace:FILE link changes the
// config hash, so shards measured on different traces never merge as one sweep; a Config
// rebuilt from a plan line hashes as the plan was written, whatever the file holds now.
func TestConfigHashCoversTraceContent(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t1.trace")
	if err := os.WriteFile(trace, []byte("1\n2\n3\n4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := Config{Pages: []string{"5x10KB"}, Links: []string{"down=trace:" + trace + ",up=1mbit,rtt=20ms"},
		Arms: CrossArms([]string{"h2"}, []result.Mode{result.Cold}), Runs: 2, Seed: 1, Shard: plan.Shard{Index: 0, Count: 2}}
	before := ConfigHash(c)
	line := PlanRecord(c, 1)
	if len(line.Plan.Inputs) != 1 || line.Plan.Inputs[0].Path != trace || len(line.Plan.Inputs[0].SHA256) != 64 {
		t.Fatalf("plan inputs %+v, want the trace with its SHA-256", line.Plan.Inputs)
	}
	if err := os.WriteFile(trace, []byte("1\n1\n1\n2\n3\n4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	after := ConfigHash(c)
	if before == after {
		t.Fatalf("config hash %s unchanged after the trace was edited", before)
	}
	if h := ConfigHash(FromPlan(line.Plan)); h != before {
		t.Fatalf("hash from the plan line %s, want the plan's %s", h, before)
	}
	other := PlanRecord(c, 1)
	other.Shard = "1/2"
	_, err := plan.Merge([]plan.Source{{Name: "a.jsonl", Records: []*result.Record{line}}, {Name: "b.jsonl", Records: []*result.Record{other}}}, plan.MergeOptions{})
	if !errors.Is(err, plan.ErrMixedConfigs) {
		t.Fatalf("shards on two traces: err = %v, want ErrMixedConfigs", err)
	}
	// A configuration without input files keeps the hash it had before inputs were hashed.
	plain := Config{Pages: []string{"5x10KB"}, Links: []string{"none"}, Arms: CrossArms([]string{"h2"}, []result.Mode{result.Cold}), Runs: 2, Seed: 1}
	if h := ConfigHash(plain); h != "1cb65f65b7f6721d" { // its hash at a9b0be5
		t.Fatalf("hash of a config without input files %s, want 1cb65f65b7f6721d as before", h)
	}
}

// TestMergeConflicts: a shard measured twice with other values is a conflict naming both lines,
// the slot and the values; Prefer settles it, and an identical copy is only a duplicate.
func TestMergeConflicts(t *testing.T) {
	c := kakhkiLike()
	files := fakeShards(t, c, 2)
	rerun := make([]*result.Record, len(files[1]))
	for i, r := range files[1] {
		cp := *r
		cp.Time = cp.Time.Add(time.Hour)
		if cp.IsLoad() {
			cp.PLTMs = 120.5
		}
		rerun[i] = &cp
	}
	srcs := []plan.Source{{Name: "a", Records: files[0]}, {Name: "b", Records: files[1], Lines: []int{1, 7}}, {Name: "c", Records: rerun}}
	_, err := plan.Merge(srcs, plan.MergeOptions{})
	if !errors.Is(err, plan.ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	// files[1][1] is shard 1/2's first load: a warm-up of the link it brings up (every shard
	// makes its own), whose slot is the shard's.
	for _, want := range []string{fmt.Sprintf("config_hash %s run %d (load, warm-up of shard 1/2): b:7 and c:2 differ (plt_ms 100 vs 120.5; time ", ConfigHash(c), files[1][1].Run), "and "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := plan.Merge(srcs, plan.MergeOptions{Prefer: "a"}); !errors.Is(err, plan.ErrConflict) {
		t.Errorf("prefer a file outside the conflict: err = %v, want ErrConflict", err)
	}
	if _, err := plan.Merge(srcs, plan.MergeOptions{Prefer: "z"}); err == nil || !strings.Contains(err.Error(), `prefer "z": accepted "newest" or one of the files given`) {
		t.Errorf("prefer an unknown file: err = %v", err)
	}
	for _, p := range []string{plan.PreferNewest, "c"} {
		m, err := plan.Merge(srcs, plan.MergeOptions{Prefer: p})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Conflicts) != len(files[1])-1 || m.Duplicates != 1 {
			t.Fatalf("prefer %s: %d conflicts settled, %d duplicates; want %d and 1 (the plan line)", p, len(m.Conflicts), m.Duplicates, len(files[1])-1)
		}
		for _, r := range m.Records {
			if r.IsLoad() && r.Shard == files[1][0].Shard && r.PLTMs != 120.5 {
				t.Fatalf("prefer %s kept run %d with plt_ms %g", p, r.Run, r.PLTMs)
			}
		}
	}
	m, err := plan.Merge([]plan.Source{{Name: "b", Records: files[1]}, {Name: "b2", Records: files[1]}}, plan.MergeOptions{})
	if err != nil || m.Duplicates != len(files[1]) || len(m.Records) != len(files[1]) {
		t.Fatalf("identical copy: %v, %d duplicates, %d records", err, m.Duplicates, len(m.Records))
	}
}

// TestMergeShardedWithoutHash: a shard's flow lines carry the shard but no config hash.
func TestMergeShardedWithoutHash(t *testing.T) {
	m, err := plan.Merge([]plan.Source{{Name: "a", Records: []*result.Record{{Kind: result.KindFlow, Shard: "0/2", Experiment: "s/flows"}}}}, plan.MergeOptions{})
	if err != nil || len(m.Records) != 1 || m.ConfigHash != "" {
		t.Fatalf("%+v, %v", m, err)
	}
}
