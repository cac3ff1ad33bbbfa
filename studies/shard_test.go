package studies

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// TestShardsWarmAndMeasureEverywhere checks, for every study at every scale and shard counts
// from 1 up to the largest useful one: every shard measures something (loads or flows), brings
// up each of its links with that link's warm-up blocks, and the shards' measured loads and flow
// parts are the plan's, each exactly once; one shard more than useful is refused with the count.
func TestShardsWarmAndMeasureEverywhere(t *testing.T) {
	for _, st := range allStudies() {
		for _, sc := range Scales {
			p := st.Plan(sc)
			most, err := maxShards(p, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			counts := []int{1, 2, 3, 4, 5, 7, 8, 16, 32, most}
			for _, n := range counts {
				if n > most {
					continue
				}
				t.Run(fmt.Sprintf("%s%s/%s/%d", st.Name, st.Option, sc, n), func(t *testing.T) {
					checkShards(t, p, n)
				})
			}
			_, err = cutShards(p, most+1, RunOptions{})
			if p.Shardable() != nil {
				if !errors.Is(err, ErrNotShardable) {
					t.Errorf("%s/%s: %d shards of a plan that is not shardable: %v, want ErrNotShardable", st.Name, sc, most+1, err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at most %d shards", most)) {
				t.Errorf("%s/%s: %d shards: %v, want a refusal naming %d", st.Name, sc, most+1, err, most)
			}
		}
	}
}

func checkShards(t *testing.T, p Plan, n int) {
	t.Helper()
	shards, err := cutShards(p, n, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := p.Configs(RunOptions{})
	schedules := make([][]experiment.Job, len(cs))
	for i, c := range cs {
		schedules[i] = experiment.Order(c)
	}
	seen := make([]map[int]int, len(cs))
	for i := range seen {
		seen[i] = map[int]int{}
	}
	flowsSeen := map[int]int{}
	customSeen := 0
	for _, s := range shards {
		if s.Measured() == 0 && len(s.Flows) == 0 && len(s.Custom) == 0 {
			t.Fatalf("shard %s measures nothing", s.Shard)
		}
		customSeen += len(s.Custom)
		for _, f := range s.Flows {
			flowsSeen[f]++
		}
		for _, share := range s.Parts {
			c := cs[share.Part]
			jobs := schedules[share.Part]
			cells := len(c.Pages) * len(c.Arms)
			warm := map[int]int{}
			measured := 0
			for _, i := range share.Jobs {
				if jobs[i].Warmup {
					warm[jobs[i].Link]++
				} else {
					measured++
					seen[share.Part][i]++
				}
			}
			if measured == 0 {
				t.Fatalf("shard %s, part %s: warm-ups only", s.Shard, p.Parts[share.Part].Name)
			}
			for _, l := range share.Links {
				if warm[l] != c.Warmup*cells {
					t.Fatalf("shard %s, part %s, link %q: %d warm-up loads, want %d (unwarmed)", s.Shard, p.Parts[share.Part].Name, c.Links[l], warm[l], c.Warmup*cells)
				}
			}
		}
	}
	for i := range cs {
		for j, job := range schedules[i] {
			if !job.Warmup && seen[i][j] != 1 {
				t.Fatalf("part %s load %d is in %d shards, want 1", p.Parts[i].Name, j, seen[i][j])
			}
		}
	}
	for f := range p.Flows {
		if flowsSeen[f] != 1 {
			t.Fatalf("flow part %s is in %d shards, want 1", p.Flows[f].Name, flowsSeen[f])
		}
	}
	if p.Custom != nil && customSeen != max(1, len(p.Custom.Units)) {
		t.Fatalf("the plan's own schedule's %d units are in %d shard places, want each in one", len(p.Custom.Units), customSeen)
	}
}

// TestEstimateRuns: more runs per cell (Apply, as --runs) cost more, and the same runs cost the plan's estimate.
func TestEstimateRuns(t *testing.T) {
	st, err := Lookup("kakhki2017")
	if err != nil {
		t.Fatal(err)
	}
	p := st.Plan(Smoke)
	base, err := p.Estimate()
	if err != nil {
		t.Fatal(err)
	}
	same, _ := p.Apply(RunOptions{Runs: p.Parts[0].Config.Runs}).Estimate()
	more, _ := p.Apply(RunOptions{Runs: 20}).Estimate()
	if same != base || more <= base {
		t.Errorf("estimate %v, with the same runs %v, with 20 runs %v", base, same, more)
	}
	if p.Parts[0].Config.Runs == 20 {
		t.Error("Apply changed the plan")
	}
}

// TestPlanEstimateBadSpec: a plan with a spec that does not parse cannot be estimated.
func TestPlanEstimateBadSpec(t *testing.T) {
	p := Plan{Study: "x", Parts: []Part{{Name: "a", Config: experiment.Config{Pages: []string{"1x5KB"}, Links: []string{"rate=fast"}}}}}
	if _, err := p.Estimate(); err == nil || !strings.Contains(err.Error(), "part a") {
		t.Errorf("estimate of a bad link: %v", err)
	}
}

// fakeStudyShards returns, per shard of p split n ways with o, the lines a run would write: each
// part's plan line and one valid load per job, stamped with the shard.
func fakeStudyShards(t *testing.T, p Plan, n int, o RunOptions) []plan.Source {
	t.Helper()
	var out []plan.Source
	for k := range n {
		o.Shard = plan.Shard{Index: k, Count: n}
		pr, err := p.Prepare(o)
		if err != nil {
			t.Fatal(err)
		}
		var recs []*result.Record
		for _, pp := range pr.Parts {
			c, jobs := pp.Config, pp.Jobs
			if len(pp.Mine) == 0 {
				continue
			}
			recs = append(recs, experiment.PlanRecord(c, len(pp.Mine)))
			for _, i := range pp.Mine {
				j := jobs[i]
				recs = append(recs, &result.Record{V: 1, Experiment: c.Name, Run: i, Time: time.Unix(int64(1000*k+i), 0), Warmup: j.Warmup,
					Mode: j.Arm.Mode, Protocol: j.Arm.Protocol, Page: result.Page{Spec: c.Pages[j.Page]}, Link: result.Link{Spec: c.Links[j.Link]},
					Valid: true, PLTMs: 100, Shard: o.Shard.String(), ConfigHash: experiment.ConfigHash(c)})
			}
		}
		out = append(out, plan.Source{Name: fmt.Sprintf("shard-%d/results.jsonl", k), Records: recs})
	}
	return out
}

func TestMergeShards(t *testing.T) {
	st, _ := Lookup("kakhki2017")
	p := st.Plan(Quick)
	var d derivations
	o := RunOptions{Seed: 1}
	srcs := fakeStudyShards(t, p, 3, o)
	o.Schedule = d.derive
	recs, check, err := MergeShards(p, o, srcs, plan.MergeOptions{})
	if err != nil || !check.Complete() || check.Count != 3 {
		t.Fatalf("complete merge: %+v, %v", check, err)
	}
	if d.n != len(p.Parts) {
		t.Errorf("the merge derived %d part schedules, want %d (one per part)", d.n, len(p.Parts))
	}
	if whole, err := p.Apply(o).Estimate(); err != nil || check.Estimate != whole {
		t.Errorf("the merge's estimate %v, the plan's %v (%v)", check.Estimate, whole, err)
	}
	measured := 0
	for _, r := range recs {
		if r.IsLoad() && !r.Warmup {
			measured++
		}
	}
	want := 0
	for _, c := range p.Configs(o) {
		want += len(c.Links) * len(c.Pages) * len(c.Arms) * c.Runs
	}
	if measured != want {
		t.Errorf("merged %d measured loads, want %d", measured, want)
	}
	// A shard missing, and one short.
	short := srcs[2]
	short.Records = short.Records[:len(short.Records)-2]
	_, check, err = MergeShards(p, o, []plan.Source{srcs[0], short}, plan.MergeOptions{})
	if err != nil || !slices.Equal(check.Missing, []string{"1/3"}) || len(check.Short) != 1 || !strings.Contains(check.Short[0], "shard 2/3") {
		t.Fatalf("missing and short: %+v, %v", check, err)
	}
	// Shards of another seed, or of another shard count, are refused.
	other := fakeStudyShards(t, p, 3, RunOptions{Seed: 2})
	if _, _, err := MergeShards(p, o, []plan.Source{srcs[0], other[1]}, plan.MergeOptions{}); !errors.Is(err, plan.ErrMixedConfigs) {
		t.Errorf("another seed: %v", err)
	}
	four := fakeStudyShards(t, p, 4, o)
	if _, _, err := MergeShards(p, o, []plan.Source{srcs[0], four[1]}, plan.MergeOptions{}); !errors.Is(err, plan.ErrMixedConfigs) {
		t.Errorf("another shard count: %v", err)
	}
	// A shard cut by another cost model (its plan line lists another share) is refused.
	cut := fakeStudyShards(t, p, 3, o)
	for _, r := range cut[1].Records {
		if r.Kind == result.KindPlan {
			r.Plan.Loads++
			break
		}
	}
	if _, _, err := MergeShards(p, o, []plan.Source{cut[0], cut[1], cut[2]}, plan.MergeOptions{}); !errors.Is(err, plan.ErrMixedConfigs) || !strings.Contains(err.Error(), "cut by the cost model of another version") {
		t.Errorf("a shard of another cut: %v", err)
	}
	mu, _ := Lookup("muthuraj2024")
	if _, _, err := MergeShards(mu.Plan(Smoke), RunOptions{}, srcs, plan.MergeOptions{}); !errors.Is(err, plan.ErrMixedConfigs) {
		t.Errorf("another study: %v", err)
	}
}

// TestEstimateMatchesMeasured checks the cost model against the measured wall times of every
// study's smoke and quick scale on the 2-core development machine (testdata/costfit/walls.tsv:
// one run each, with main's binary; the records, trimmed, beside it): each estimate within 25 %
// of its wall time. The model's constants were fitted to these same records (FitCost), so the
// check is in-sample: it shows that one set of constants fits every study, not that it predicts
// another machine. It also re-derives highwayArmOverhead from the highway2023 records.
func TestEstimateMatchesMeasured(t *testing.T) {
	b, err := os.ReadFile("../testdata/costfit/walls.tsv")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var starts []time.Duration
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, "\t")
		if strings.HasPrefix(line, "#") || len(f) < 4 {
			continue
		}
		st, err := Lookup(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if f[1] == "--calibrate" {
			st = CarlucciCalibration()
		}
		wall, err := time.ParseDuration(f[3] + "s")
		if err != nil {
			t.Fatalf("walls.tsv: %q: %v", line, err)
		}
		var notMade []string
		if len(f) > 6 && f[6] != "" {
			notMade = strings.Split(f[6], "; ")
		}
		sp := func() Plan {
			var h Host
			if slices.Contains(notMade, "ngtcp2") { // the plan as on a machine without gtlsserver
				h.Ngtcp2 = errors.New("no gtlsserver")
			}
			p := st.PlanOn(Scale(f[2]), h)
			if c := p.Custom; c != nil && st.Name == Highway2023 && slices.Contains(notMade, "ngtcp2") {
				// highway2023 plans its ngtcp2 arms everywhere; without gtlsserver they are
				// skipped when they run (flows.ArmSkipped), at no cost
				cc := *c
				cc.Arms -= 2 * len(highwayScales[Scale(f[2])].paths)
				p.Custom = &cc
			}
			return p
		}()
		notMade = slices.DeleteFunc(notMade, func(s string) bool { return s == "ngtcp2" })
		for _, nm := range notMade {
			sp = withoutLink(t, sp, nm)
		}
		est, err := sp.Estimate()
		if err != nil {
			t.Fatal(err)
		}
		n++
		// What the records do not span: the process's start and end, and the first link's
		// bring-up and self-check (its line is written when the check ends).
		name := f[0] + "-" + f[2]
		if f[1] == "--calibrate" {
			name = f[0] + "-calibrate-" + f[2]
		}
		recs := readCostRecords(t, "../testdata/costfit/"+name+".jsonl")
		start := wall - plan.Took(recs)
		for _, r := range recs {
			if r.Kind == result.KindLinkCheck {
				if r.Check != nil && r.Check.DurationMs > 0 {
					break // Took counted the first check (its duration is recorded)
				}
				l, err := linkspec.Parse(r.Link.Spec)
				if err != nil {
					t.Fatal(err)
				}
				start -= plan.LinkCheckTime(l)
				break
			}
		}
		if f[5] != "unrecorded" { // a wall time that is the records' time plus 1 s says nothing of it
			starts = append(starts, start)
		}
		if r := est.Seconds() / wall.Seconds(); r < 0.75 || r > 1.25 {
			t.Errorf("%s %s %s: estimated %v, took %v (ratio %.2f)", f[0], f[1], f[2], est, wall, r)
		} else {
			t.Logf("%s %s %s: estimated %v, took %v (ratio %.2f)", f[0], f[1], f[2], est.Round(time.Second), wall, r)
		}
	}
	if n < 9 {
		t.Errorf("%d measured runs, want every study's smoke and quick (9)", n)
	}
	if m := medianDuration(starts); m < plan.StartCost-100*time.Millisecond || m > plan.StartCost+100*time.Millisecond {
		t.Errorf("start and end of a run: median %v over %d runs (%v), StartCost %v", m, len(starts), starts, plan.StartCost)
	}
	var highway [][]*result.Record
	for _, sc := range []string{"smoke", "quick"} {
		highway = append(highway, readCostRecords(t, "../testdata/costfit/highway2023-"+sc+".jsonl"))
	}
	fit, err := plan.FitCost(highway...)
	if err != nil || fit.Flows != 67 || fit.FlowOverhead < highwayArmOverhead-50*time.Millisecond || fit.FlowOverhead > highwayArmOverhead+50*time.Millisecond {
		t.Errorf("highway2023: fitted run overhead %v over %d gaps (%v), highwayArmOverhead %v", fit.FlowOverhead, fit.Flows, err, highwayArmOverhead)
	}
}

// medianDuration is the median of ds (the mean of the middle two for an even count).
func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
}

// withoutLink returns p without the link of "PART: LINK" in that part (loads a run did not make).
func withoutLink(t *testing.T, p Plan, partLink string) Plan {
	t.Helper()
	part, link, oneLink := strings.Cut(partLink, ": ")
	q := p
	q.Parts = slices.Clone(p.Parts)
	if !oneLink { // a part the plan gained after the run
		n := len(q.Parts)
		q.Parts = slices.DeleteFunc(q.Parts, func(pt Part) bool { return pt.Name == part })
		if len(q.Parts) == n {
			t.Fatalf("walls.tsv: no part %q", part)
		}
		return q
	}
	for i := range q.Parts {
		if q.Parts[i].Name != part {
			continue
		}
		c := q.Parts[i].Config
		c.Links = slices.DeleteFunc(slices.Clone(c.Links), func(l string) bool { return l == link })
		if len(c.Links) == len(q.Parts[i].Config.Links) {
			t.Fatalf("walls.tsv: part %s has no link %q", part, link)
		}
		q.Parts[i].Config = c
		return q
	}
	t.Fatalf("walls.tsv: no part %q", part)
	return q
}

// readCostRecords reads a JSON Lines file of (trimmed) records.
func readCostRecords(t *testing.T, path string) []*result.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*result.Record
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		r := &result.Record{}
		if err := json.Unmarshal([]byte(line), r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestHighwayShardsByPath checks that highway2023's schedule is cut by path (the arms of one path
// interleave within each repetition and share its link, so a path runs whole in one shard): at
// quick scale two shards run one path each, and smoke, one path, is at most one shard.
func TestHighwayShardsByPath(t *testing.T) {
	st, _ := Lookup(Highway2023)
	p := st.Plan(Quick)
	if err := p.Shardable(); err != nil {
		t.Fatal(err)
	}
	two, err := cutShards(p, 2, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range two {
		if len(s.Custom) != 1 || s.Custom[0] != k || s.Estimate <= plan.StartCost ||
			!slices.Equal(s.Units, []string{plan.CustomID + ":" + p.Custom.Units[k].Name}) {
			t.Errorf("shard %d: custom %v, units %v, estimate %v: want path %d alone", k, s.Custom, s.Units, s.Estimate, k)
		}
	}
	if most, err := maxShards(st.Plan(Smoke), RunOptions{}); most != 1 || err != nil {
		t.Errorf("smoke MaxShards: %d, %v; want 1 (the veth path)", most, err)
	}
	pr, err := p.Prepare(RunOptions{Shard: plan.Shard{Index: 1, Count: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if want := p.Custom.Reps * p.Custom.Units[1].Arms; pr.FlowRuns() != want {
		t.Errorf("shard 1/2 schedules %d runs, want %d (the emulated path's)", pr.FlowRuns(), want)
	}
}

// TestPartialMergeSaysSo: a merge that lacks a shard writes a merge line naming it, and every
// reader says PARTIAL: the study's warnings, every finding's evidence, report.md, findings.json
// and `pltlab report` (analysis) of the merged file; a complete merge says nothing of the kind.
// On 8436f4a report.md had no PARTIAL line and a finding read "not run" as if the scale lacked it.
func TestPartialMergeSaysSo(t *testing.T) {
	st, _ := Lookup("kakhki2017")
	p := st.Plan(Smoke)
	o := RunOptions{Seed: 1}
	srcs := fakeStudyShards(t, p, 2, o)
	recs, check, err := MergeShards(p, o, srcs[:1], plan.MergeOptions{})
	if err != nil || check.Complete() {
		t.Fatalf("merge of 1 of 2 shards: %+v, %v", check, err)
	}
	var merge *result.Merge
	for _, r := range recs {
		if r.Kind == result.KindMerge {
			merge = r.Merge
		}
	}
	if merge == nil || merge.Shards != 2 || !slices.Equal(merge.Present, []string{"0/2"}) || !slices.Equal(merge.Missing, []string{"1/2"}) {
		t.Fatalf("merge line %+v", merge)
	}
	want := "PARTIAL: merged 1 of 2 shards of kakhki2017/smoke: shard 1/2 left no line"
	ev := Evaluate(st, p, recs)
	if w := ev.Warnings(); len(w) == 0 || !strings.HasPrefix(w[0], want) {
		t.Errorf("warnings %q, want the first to start %q", w, want)
	}
	for i, j := range ev.Judge() {
		if !strings.Contains(j.Evidence, "[PARTIAL: judged on the shards merged; "+want) {
			t.Errorf("finding %d evidence %q does not say the merge is partial", i+1, j.Evidence)
		}
	}
	dir := t.TempDir()
	if _, err := WriteReport(dir, ev); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	fj, _ := os.ReadFile(filepath.Join(dir, "findings.json"))
	if !strings.Contains(string(md), "**"+want) || !strings.Contains(string(fj), `"partial": [`) {
		t.Errorf("report.md or findings.json does not say PARTIAL:\n%.600s\n%.300s", md, fj)
	}
	rep := analysis.Analyze(recs, analysis.Options{})
	if len(rep.Warnings) == 0 || !strings.HasPrefix(rep.Warnings[0], want) {
		t.Errorf("pltlab report warnings %q", rep.Warnings)
	}
	full, _, err := MergeShards(p, o, srcs, plan.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := Evaluate(st, p, full).Partial(); len(w) != 0 {
		t.Errorf("a complete merge says %q", w)
	}
}

// TestMergeCountsDuplicates: the same shard's file given twice is not dropped silently: the
// check counts the lines read twice.
func TestMergeCountsDuplicates(t *testing.T) {
	st, _ := Lookup("kakhki2017")
	p := st.Plan(Smoke)
	o := RunOptions{Seed: 1}
	srcs := fakeStudyShards(t, p, 2, o)
	_, check, err := MergeShards(p, o, []plan.Source{srcs[0], srcs[0], srcs[1]}, plan.MergeOptions{})
	if err != nil || check.Duplicates == 0 || !check.Complete() {
		t.Errorf("a shard given twice: %+v, %v", check, err)
	}
}

// maxShards is Prepared.MaxShards of p prepared with o.
func maxShards(p Plan, o RunOptions) (int, error) {
	pr, err := p.Prepare(o)
	if err != nil {
		return 0, err
	}
	return pr.MaxShards(), nil
}

// cutShards is Prepared.Shards of p prepared unsharded with o's Runs and Seed.
func cutShards(p Plan, n int, o RunOptions) ([]ShardSlice, error) {
	o.Shard, o.Resume = plan.Shard{}, nil
	pr, err := p.Prepare(o)
	if err != nil {
		return nil, err
	}
	return pr.Shards(n)
}
