package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// writeShardFiles writes the files a run of every shard of c split n ways would write (a plan
// line and one valid load per job) and returns their names.
func writeShardFiles(t *testing.T, dir string, c experiment.Config, n int) []string {
	t.Helper()
	whole, err := experiment.NewSchedule(c)
	if err != nil {
		t.Fatal(err)
	}
	sharding, err := whole.Shards(n)
	if err != nil {
		t.Fatal(err)
	}
	jobs := experiment.Order(c)
	var names []string
	for _, p := range sharding.Slices {
		sc := c
		sc.Shard = p.Shard
		name := filepath.Join(dir, "shard-"+strings.ReplaceAll(p.Shard.String(), "/", "-of-")+".jsonl")
		f, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w := result.NewWriter(f)
		plr := experiment.PlanRecord(sc, len(p.Jobs))
		if err := w.Write(plr); err != nil {
			t.Fatal(err)
		}
		for _, i := range p.Jobs {
			j := jobs[i]
			err := w.Write(&result.Record{Experiment: plr.Experiment, Run: i, Time: time.Unix(int64(i), 0), Warmup: j.Warmup,
				Mode: j.Arm.Mode, Protocol: j.Arm.Protocol, ObservedProtocol: j.Arm.Protocol, Page: result.Page{Spec: c.Pages[j.Page]},
				Link: result.Link{Spec: c.Links[j.Link]}, Valid: true, PLTMs: 100 + float64(i%7), Shard: p.Shard.String(), ConfigHash: plr.ConfigHash})
			if err != nil {
				t.Fatal(err)
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	return names
}

func mergeTestConfig(runs int) experiment.Config {
	return experiment.Config{Pages: []string{"10x30KB", "1x1MB"}, Links: []string{"carlucci2015", "3g"},
		Arms: experiment.CrossArms([]string{"h1", "h2", "h3"}, []result.Mode{result.Cold}), Runs: runs, Warmup: 1, Seed: 5}
}

func TestMergeCommand(t *testing.T) {
	dir := t.TempDir()
	files := writeShardFiles(t, dir, mergeTestConfig(6), 4)
	out := filepath.Join(dir, "merged.jsonl")

	code, _, errOut := runCLI(t, append([]string{"merge", "--out", out}, files...)...)
	// 84 loads in the schedule; each of the 4 shards also makes the warm-ups of the links it
	// brings up: 102 owed in all.
	if code != 0 || !strings.Contains(errOut, "complete: 4 shards, 102 of 102 loads") {
		t.Fatalf("complete merge: exit %d, stderr %q", code, errOut)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 102+4 {
		t.Fatalf("merged file has %d lines, want 102 loads + 4 plan lines", n)
	}
	code, _, errOut = runCLI(t, "report", out, "--check")
	if code != 0 {
		t.Fatalf("report --check of the merged file: exit %d, %q", code, errOut)
	}

	// Shard 2 lost: merge writes the union and exits 1 naming it.
	partial := []string{files[0], files[1], files[3]}
	code, _, errOut = runCLI(t, append([]string{"merge", "--out", out, "--force"}, partial...)...)
	if code != 1 || !strings.Contains(errOut, "missing shards 2/4") || !strings.Contains(errOut, "shard 2/4 missing") {
		t.Fatalf("missing shard: exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(errOut, "cell page ") {
		t.Fatalf("no short cell named: %q", errOut)
	}
	code, _, errOut = runCLI(t, append([]string{"report", "--check"}, partial...)...)
	if code != 1 || !strings.Contains(errOut, "missing shards 2/4") {
		t.Fatalf("report --check: exit %d, stderr %q", code, errOut)
	}
	code, _, _ = runCLI(t, append([]string{"report"}, partial...)...)
	if code != 0 {
		t.Fatalf("report without --check of an incomplete sweep: exit %d, want 0 (warnings only)", code)
	}

	// A shard of another configuration is refused in one line.
	other := writeShardFiles(t, t.TempDir(), mergeTestConfig(3), 2)
	for _, cmd := range []string{"merge", "report"} {
		code, _, errOut = runCLI(t, cmd, files[0], other[1])
		if code != 2 || !strings.Contains(errOut, "different configurations") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Fatalf("%s of mixed configurations: exit %d, stderr %q", cmd, code, errOut)
		}
	}
}
