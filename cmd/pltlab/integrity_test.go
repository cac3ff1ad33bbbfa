package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// writeRunFile writes the loads of one unsharded run of c (every job of its schedule, PLT
// base+run ms, started at start) made by pltlab version, and returns the file's name.
func writeRunFile(t *testing.T, name, experimentName string, c experiment.Config, start time.Time, base float64, version string) string {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w := result.NewWriter(f)
	hash := experiment.ConfigHash(c)
	for i, j := range experiment.Order(c) {
		err := w.Write(&result.Record{Experiment: experimentName, Run: i, Time: start.Add(time.Duration(i) * time.Second), Warmup: j.Warmup,
			Mode: j.Arm.Mode, Protocol: j.Arm.Protocol, ObservedProtocol: j.Arm.Protocol, Page: result.Page{Spec: c.Pages[j.Page]},
			Link: result.Link{Spec: c.Links[j.Link]}, Valid: true, PLTMs: base + float64(i), ConfigHash: hash,
			Browser: "Chromium/1.0", Env: &result.Env{Pltlab: version}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestReportPoolsIndependentRuns: two runs of the same configuration into two files are two
// experiments, not one read twice: report keeps every load of both, says they are pooled, and
// gives the same numbers whichever file comes first.
func TestReportPoolsIndependentRuns(t *testing.T) {
	dir := t.TempDir()
	c := experiment.Config{Pages: []string{"5x10KB"}, Links: []string{"none"},
		Arms: experiment.CrossArms([]string{"h1", "h2"}, []result.Mode{result.Cold}), Runs: 2, Seed: 3}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	n1 := writeRunFile(t, filepath.Join(dir, "n1.jsonl"), "run-a", c, t0, 100, "v1")
	n2 := writeRunFile(t, filepath.Join(dir, "n2.jsonl"), "run-b", c, t0.Add(time.Hour), 500, "v1")
	type group struct {
		Protocol string  `json:"protocol"`
		Runs     int     `json:"runs"`
		Median   float64 `json:"median"`
	}
	var reps [2]struct {
		Groups     []group  `json:"groups"`
		Duplicates int      `json:"duplicates"`
		Warnings   []string `json:"warnings"`
	}
	for i, order := range [][]string{{n1, n2}, {n2, n1}} {
		code, out, errOut := runCLI(t, append([]string{"report", "--format", "json"}, order...)...)
		if code != 0 {
			t.Fatalf("report %v: exit %d, %q", order, code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &reps[i]); err != nil {
			t.Fatalf("report json: %v\n%s", err, out)
		}
		if !strings.Contains(errOut, "2 experiments (run-a, run-b) from 2 files pooled") && !strings.Contains(errOut, "2 experiments (run-b, run-a) from 2 files pooled") {
			t.Errorf("stderr does not say the runs were pooled: %q", errOut)
		}
	}
	for i, rep := range reps {
		if rep.Duplicates != 0 || len(rep.Groups) != 2 {
			t.Fatalf("order %d: %d duplicates, %d groups: want 0 duplicates (no line read twice) and 2 groups", i, rep.Duplicates, len(rep.Groups))
		}
		for _, g := range rep.Groups {
			if g.Runs != 4 {
				t.Errorf("order %d: group %s has %d runs, want 4 (2 loads of each run)", i, g.Protocol, g.Runs)
			}
		}
		if !strings.Contains(strings.Join(rep.Warnings, "\n"), "POOLED: 2 of 2 groups hold the loads of 2 experiments") {
			t.Errorf("order %d: warnings do not say the groups pool two experiments: %q", i, rep.Warnings)
		}
	}
	for k := range reps[0].Groups {
		if reps[0].Groups[k] != reps[1].Groups[k] {
			t.Errorf("the order of the files changes group %d: %+v vs %+v", k, reps[0].Groups[k], reps[1].Groups[k])
		}
	}
	// The same file given twice is a duplicate, counted, and changes nothing.
	code, out, errOut := runCLI(t, "report", "--format", "json", n1, n1)
	if code != 0 || json.Unmarshal([]byte(out), &reps[0]) != nil {
		t.Fatalf("report n1 n1: exit %d, %q", code, errOut)
	}
	if reps[0].Duplicates != len(experiment.Order(c)) || reps[0].Groups[0].Runs != 2 {
		t.Fatalf("report n1 n1: %d duplicates, %d runs: want %d and 2", reps[0].Duplicates, reps[0].Groups[0].Runs, len(experiment.Order(c)))
	}
}

// TestMergeConflictingShardRerun: a shard rerun into a second file measures its loads again
// with other values; merge names the conflict and refuses, --prefer picks one.
func TestMergeConflictingShardRerun(t *testing.T) {
	dir := t.TempDir()
	files := writeShardFiles(t, dir, mergeTestConfig(6), 2)
	b, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	rerun := filepath.Join(dir, "shard-1-rerun.jsonl")
	f, err := os.Create(rerun)
	if err != nil {
		t.Fatal(err)
	}
	w := result.NewWriter(f)
	rerunPLT := map[string]float64{} // key: run and shard (each shard makes its own warm-ups)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r result.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		r.Time = r.Time.Add(24 * time.Hour)
		if r.IsLoad() {
			r.PLTMs += 20.5
			rerunPLT[fmt.Sprint(r.Run, r.Shard)] = r.PLTMs
		}
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "merged.jsonl")
	args := []string{"merge", "--out", out, files[0], files[1], rerun}
	code, _, errOut := runCLI(t, args...)
	if code != 2 || !strings.Contains(errOut, "two different lines for one schedule slot") ||
		!strings.Contains(errOut, files[1]+":2 and "+rerun+":2 differ (plt_ms ") || !strings.Contains(errOut, "--prefer") {
		t.Fatalf("conflicting rerun: exit %d, stderr %q: want exit 2 naming both lines and --prefer", code, errOut)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a refused merge wrote %s (err %v)", out, err)
	}
	code, _, errOut = runCLI(t, "report", files[0], files[1], rerun)
	if code != 2 || !strings.Contains(errOut, "two different lines for one schedule slot") {
		t.Fatalf("report of the conflicting files: exit %d, stderr %q", code, errOut)
	}
	for _, prefer := range []string{"newest", rerun} {
		code, _, errOut = runCLI(t, append([]string{"merge", "--force", "--prefer", prefer, "--out", out}, files[0], files[1], rerun)...)
		if code != 0 || !strings.Contains(errOut, "complete: 2 shards, 90 of 90 loads") || !strings.Contains(errOut, "conflicting lines settled by --prefer") {
			t.Fatalf("--prefer %s: exit %d, stderr %q", prefer, code, errOut)
		}
		merged, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		kept := 0
		for _, line := range strings.Split(strings.TrimSpace(string(merged)), "\n") {
			var r result.Record
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			if want, ok := rerunPLT[fmt.Sprint(r.Run, r.Shard)]; ok && r.IsLoad() {
				if r.PLTMs != want {
					t.Fatalf("--prefer %s kept run %d with plt_ms %g, want the rerun's %g", prefer, r.Run, r.PLTMs, want)
				}
				kept++
			}
		}
		if kept != len(rerunPLT) {
			t.Fatalf("--prefer %s: %d of the rerun's %d loads kept", prefer, kept, len(rerunPLT))
		}
	}
	// A rerun that wrote the same lines again (a copy) is no conflict.
	code, _, errOut = runCLI(t, "merge", "--force", "--out", out, files[0], files[1], files[1])
	if code != 0 || !strings.Contains(errOut, "complete: 2 shards") || !strings.Contains(errOut, "dropped") {
		t.Fatalf("identical lines twice: exit %d, stderr %q", code, errOut)
	}
}

// TestMergeMixedVersions: shards made by different pltlab versions are refused, naming the
// versions and their loads, unless --allow-mixed-versions, which merges them with a warning.
func TestMergeMixedVersions(t *testing.T) {
	dir := t.TempDir()
	c := experiment.Config{Pages: []string{"5x10KB"}, Links: []string{"none"},
		Arms: experiment.CrossArms([]string{"h1"}, []result.Mode{result.Cold}), Runs: 3, Seed: 3}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := writeRunFile(t, filepath.Join(dir, "a.jsonl"), "run-a", c, t0, 100, "v1.0")
	b := writeRunFile(t, filepath.Join(dir, "b.jsonl"), "run-b", c, t0.Add(time.Hour), 100, "v1.1")
	code, _, errOut := runCLI(t, "merge", a, b)
	if code != 2 || !strings.Contains(errOut, "pltlab versions v1.0 (3 loads), v1.1 (3 loads)") || !strings.Contains(errOut, "--allow-mixed-versions") {
		t.Fatalf("mixed versions: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut := runCLI(t, "merge", "--allow-mixed-versions", a, b)
	if code != 0 || !strings.Contains(errOut, "WARNING: merged loads of different pltlab versions v1.0 (3 loads), v1.1 (3 loads)") || strings.Count(out, "\n") != 6 {
		t.Fatalf("--allow-mixed-versions: exit %d, %d lines, stderr %q", code, strings.Count(out, "\n"), errOut)
	}
}

// TestStopError: the one interrupt/broken-pipe mapping of run, reproduce and flows.
func TestStopError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if code, msg := exitCode(context.Background(), stopError(ctx, errors.New("x"), "the records are kept")); code != 130 || msg != "interrupted; the records are kept" {
		t.Errorf("interrupt: exit %d, %q", code, msg)
	}
	pipe := fmt.Errorf("write: %w", &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE})
	if code, _ := exitCode(context.Background(), stopError(context.Background(), pipe, "kept")); code != 141 {
		t.Errorf("broken pipe: exit %d, want 141", code)
	}
	other := errors.New("link failed")
	if err := stopError(context.Background(), other, "kept"); err != other {
		t.Errorf("other error: %v, want it unchanged", err)
	}
	if err := stopError(context.Background(), nil, "kept"); err != nil {
		t.Errorf("nil: %v", err)
	}
}
