package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIntegrationRejudgeCarlucciFixture re-judges the quick carlucci2015 results measured by
// pltlab a9b0be5 (testdata/carlucci2015-quick-a9b0be5.jsonl at the repository root, written before records carried
// a check's attempt number): `reproduce --resume` on the complete file measures nothing and
// checks no link (the file is unchanged, no Chromium is needed), says so, and rewrites the
// findings from the records. The lossy finding (p = 0.13 .. 0.72 from 8 loads per arm) is
// inconclusive with the loads that would decide it; the loss-free ratios (paper 0.56, ours
// 0.76 [0.74, 0.80]) are contradicted by their intervals. Before, both printed "not reproduced"
// and --resume re-checked every link. Takes about 1 s.
func TestIntegrationRejudgeCarlucciFixture(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("..", "..", "testdata", "carlucci2015-quick-a9b0be5.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "results.jsonl")
	if err := os.WriteFile(jsonl, fixture, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PLTLAB_CHROME", "/nonexistent/chromium") // a re-judge must not need a browser
	code, stdout, stderr := runCLI(t, "reproduce", "carlucci2015", "--resume", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "is complete") || !strings.Contains(stderr, "nothing to measure") {
		t.Errorf("stderr does not say the run is complete:\n%s", stderr)
	}
	after, err := os.ReadFile(jsonl)
	if err != nil || string(after) != string(fixture) {
		t.Errorf("results.jsonl changed by a re-judge (%d -> %d bytes, %v): a load or link check was made", len(fixture), len(after), err)
	}
	var f4, f3 string
	for _, line := range strings.Split(stdout, "\n") {
		switch {
		case strings.HasPrefix(line, " 4. "):
			f4 = line
		case strings.HasPrefix(line, " 3. "):
			f3 = line
		}
	}
	if !strings.Contains(f4, "[inconclusive]") || !strings.Contains(f3, "[contradicted]") {
		t.Errorf("finding 3 %q (want contradicted), finding 4 %q (want inconclusive)", f3, f4)
	}
	for _, want := range []string{"h3/h2 0.96 [", "loads per arm would decide it", "with 80 % power (Noether 1987)",
		"h3: paper 0.56 (+-10 %: 0.51..0.62), ours 0.76 [0.74, 0.80]: misses", "cells: lossy: carlucci2015,loss=1% h3 vs h2",
		// Finding 5 sits on its bound with one flow run a mix: no interval, so inconclusive (it
		// was "reproduced" from the point estimate before 2026-12-02).
		"5. [inconclusive] QUIC can be safely deployed", "difference +0.0099 (no interval)",
		"6. [reproduced] QUIC sharing the bottleneck", "0.981 [0.945, 1.000]"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "findings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fj struct {
		Findings []struct {
			ID      string   `json:"id"`
			Verdict string   `json:"verdict"`
			Cells   []string `json:"cells"`
			Needs   []struct {
				Runs  int     `json:"runs_per_arm"`
				Have  int     `json:"have_per_arm"`
				TimeS float64 `json:"time_s"`
			} `json:"needs"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(b, &fj); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fj.Findings {
		got[f.ID] = f.Verdict
		if f.ID == "lossy" {
			if len(f.Needs) != 3 || len(f.Cells) != 3 || f.Needs[0].Have != 8 || f.Needs[0].Runs <= 8 || f.Needs[0].TimeS <= 0 {
				t.Errorf("lossy needs %+v, cells %q: want 3 cells, each with loads per arm above the 8 measured and a time", f.Needs, f.Cells)
			}
		}
	}
	if got["lossy"] != "inconclusive" || got["lossless-ratios"] != "contradicted" || got["lossless-order"] != "reproduced" {
		t.Errorf("findings.json verdicts %v", got)
	}
	for _, name := range []string{"report.md", "report.html"} {
		rb, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !strings.Contains(string(rb), "inconclusive") || !strings.Contains(string(rb), "contradicted") {
			t.Errorf("%s lacks the verdicts (%v)", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "lossy-plt.svg")); err != nil {
		t.Errorf("figures not rewritten: %v", err)
	}
}

// TestIntegrationDecideRefusesOtherVersion: --decide on the a9b0be5 fixture refuses before
// measuring (exit 2, one line naming both versions): this pltlab's loads would never be pooled
// with another version's, so they could not decide anything. About 1 s.
func TestIntegrationDecideRefusesOtherVersion(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("..", "..", "testdata", "carlucci2015-quick-a9b0be5.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "results.jsonl"), fixture, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "reproduce", "carlucci2015", "--decide", "--out", dir)
	if code != 2 || !strings.Contains(stderr, "pltlab a9b0be5") || !strings.Contains(stderr, "never pooled") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 naming the records' version", code, stderr)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "results.jsonl")); string(after) != string(fixture) {
		t.Error("results.jsonl changed by a refused --decide")
	}
}
