package studyview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/studies"
	"github.com/pltlab/pltlab/view"
)

// TestReportOfCarlucci checks the carlucci2015 records become its study report: the scale is
// identified by configuration hash, every finding has a verdict and links to sections that
// are in the body, the findings section is left out of the body (the view shows it first), and
// figures and parts are there.
func TestReportOfCarlucci(t *testing.T) {
	recs, _, err := analysis.ReadFiles([]string{"../../testdata/carlucci2015-quick-a9b0be5.jsonl"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Report(recs)
	if err != nil || st == nil {
		t.Fatalf("Report: %v, %v", st, err)
	}
	if !strings.Contains(st.Title, "scale quick") || st.Note != "" {
		t.Errorf("title %q, note %q: want scale quick identified", st.Title, st.Note)
	}
	if strings.Contains(st.Body, `<section id="findings">`) {
		t.Error("body still has the findings section")
	}
	if len(st.Findings) < 5 {
		t.Fatalf("%d findings", len(st.Findings))
	}
	linked := 0
	for _, f := range st.Findings {
		if f.Verdict == "" || len(f.See) == 0 {
			t.Errorf("finding %q: verdict %q, see %v", f.Claim, f.Verdict, f.See)
		}
		for _, a := range f.See {
			if a.ID == "" {
				continue // a section of another report (the --calibrate variant's)
			}
			linked++
			if !strings.Contains(st.Body, `<section id="`+a.ID+`">`) {
				t.Errorf("finding %q links to #%s (%s), which is not in the body", f.Claim, a.ID, a.Title)
			}
		}
	}
	if linked < len(st.Findings) {
		t.Errorf("only %d section links for %d findings", linked, len(st.Findings))
	}
	var sb strings.Builder
	if found, err := st.Figure(&sb, "lossless-plt", "svg"); !found || err != nil || !strings.Contains(sb.String(), "<svg") {
		t.Errorf("figure lossless-plt: found %v, %v", found, err)
	}
	if st.Part("lossless") == nil || st.Part("nosuch") != nil {
		t.Error("parts: lossless missing or nosuch present")
	}
	// records that are no study's
	run, _, _ := analysis.ReadFiles([]string{"../testdata/run/run.jsonl"}, nil, nil)
	if st, err := Report(run); st != nil || err != nil {
		t.Errorf("a plain run gave a study: %v, %v", st, err)
	}
}

// TestReportPlanAsMeasured: a study run with --runs (here carlucci2015 quick cut to 5 measured
// loads a cell, as `--runs 5` makes them, so its configuration hash is no scale's) is shown with
// the plan its records measured, as reproduce's report judges it, not the default scale's.
func TestReportPlanAsMeasured(t *testing.T) {
	recs, _, err := analysis.ReadFiles([]string{"../../testdata/carlucci2015-quick-a9b0be5.jsonl"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cut []*result.Record
	perCell := map[string]int{}
	loads := 0
	for _, r := range recs {
		if r.IsLoad() {
			cell := r.Experiment + "|" + r.Page.Spec + "|" + r.Link.Spec + "|" + r.Protocol + "|" + string(r.Mode)
			if !r.Warmup {
				if perCell[cell]++; perCell[cell] > 5 {
					continue
				}
			}
			loads++
		}
		if r.ConfigHash != "" {
			c := *r
			c.ConfigHash = "00000000" + r.ConfigHash[8:] // another configuration: --runs 5
			r = &c
		}
		cut = append(cut, r)
	}
	st, err := Report(cut)
	if err != nil || st == nil {
		t.Fatalf("Report: %v, %v", st, err)
	}
	if !strings.Contains(st.Note, "what they measured") {
		t.Errorf("note %q: want it to say the plan is the records'", st.Note)
	}
	if want := fmt.Sprintf("Scale quick: %d page loads", loads); !strings.Contains(st.Body, want) {
		i := strings.Index(st.Body, "Scale quick:")
		t.Errorf("body says %q; want %q (the plan as measured)", st.Body[max(i, 0):max(i, 0)+60], want)
	}
}

// TestReportOfEveryStudy: every study gets a study page, whatever its plan is made of (page
// loads, bulk flows, its own schedule of bulk runs): a flow line of one of its parts is enough
// to know it, and its findings table has a row per finding.
func TestReportOfEveryStudy(t *testing.T) {
	for _, s := range studies.All() {
		t.Run(s.Name, func(t *testing.T) {
			recs := []*result.Record{{V: result.Version, Kind: result.KindFlow, Experiment: studies.PartExperiment(s.Name, "limited"), Valid: true,
				Protocol: "h1", Flow: &result.Flow{Mix: "h1:cubic", Flows: 1, Stack: &result.FlowStack{Path: "veth", Arm: "tcp-cubic"}}}}
			st, err := Report(recs)
			if err != nil || st == nil {
				t.Fatalf("Report: %v, %v: want %s's study page", st, err, s.Name)
			}
			if !strings.Contains(st.Title, s.Title) || len(st.Findings) != len(s.Findings) {
				t.Errorf("title %q, %d findings; want %q and %d", st.Title, len(st.Findings), s.Title, len(s.Findings))
			}
		})
	}
}

// TestReportOfFlowStudies: the records of `pltlab reproduce highway2023 --scale smoke` (its own
// schedule of bulk runs) and `reproduce modquic --scale smoke` (flow parts), as written, each
// get their study page with the scale identified from the records.
func TestReportOfFlowStudies(t *testing.T) {
	for _, tt := range []struct{ file, title string }{
		{"../testdata/highway2023/results.jsonl", "QUIC on the Highway"},
		{"../testdata/modquic/results.jsonl", "Modified QUIC"},
	} {
		t.Run(tt.title, func(t *testing.T) {
			recs, _, err := analysis.ReadFiles([]string{tt.file}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			st, err := Report(recs)
			if err != nil || st == nil {
				t.Fatalf("Report: %v, %v: want a study page", st, err)
			}
			if !strings.Contains(st.Title, tt.title) || !strings.Contains(st.Title, "scale smoke") || st.Note != "" {
				t.Errorf("title %q, note %q: want %s, scale smoke identified", st.Title, st.Note, tt.title)
			}
			if len(st.Findings) == 0 || !strings.Contains(st.Body, "bulk-flow run(s)") {
				t.Errorf("%d findings, body %.300s", len(st.Findings), st.Body)
			}
		})
	}
}

// TestStudyPageOfShards: the view merges a sharded study run's files into one set and shows
// it as the study's page: the plan as measured (the flow runs of both shards) and the verdicts
// reproduce's report gives the two files' records.
func TestStudyPageOfShards(t *testing.T) {
	s, err := view.New(view.Options{Roots: []string{"../testdata/modquic-shards"}, Study: Report})
	if err != nil {
		t.Fatal(err)
	}
	sets := s.Sets()
	if len(sets) != 1 || sets[0].Shards != 2 {
		t.Fatalf("%d sets: want the two shards merged into one", len(sets))
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/set/" + sets[0].ID + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(page), "Modified QUIC (ModQUIC) thesis: its baselines, reproduced with pltlab (scale smoke)") || !strings.Contains(string(page), `id="findings"`) {
		t.Errorf("set page (%d) is not modquic's study page:\n%.1500s", resp.StatusCode, page)
	}
	recs := append(readRecords(t, "../testdata/modquic-shards/shard-0/results.jsonl"), readRecords(t, "../testdata/modquic-shards/shard-1/results.jsonl")...)
	st := mustStudy(t, studies.ModQUIC)
	text := html.UnescapeString(string(page))
	if want := fmt.Sprintf("Scale smoke: 0 page loads (warm-ups included) in 0 part(s) and %d bulk-flow run(s)", flowRuns(recs)); !strings.Contains(text, want) {
		t.Errorf("page lacks %q", want)
	}
	if got, want := pageVerdicts(text), reportVerdicts(st, st.Plan(studies.Smoke), recs); len(got) != len(st.Findings) || !slices.Equal(got, want) {
		t.Errorf("page verdicts %q; the report's %q", got, want)
	}
}

// TestStudyPagesAsMeasured: the study pages of runs made with --runs and --seed, and of a study
// of interop lines (made with root and without: no exchange cells), served by the view from
// result files, show the scale, the plan as measured (its flow runs and repetitions, not the
// scale's; what its host left out) and the verdicts reproduce's report gives the same records
// judged by the plan the command line made.
func TestStudyPagesAsMeasured(t *testing.T) {
	hw := readRecords(t, "../testdata/highway2023/results.jsonl")
	var twice []*result.Record // `reproduce highway2023 --scale smoke --runs 2`
	for rep := range 2 {
		for _, r := range hw {
			if c := *r; c.IsFlow() {
				c.Run, c.Scheduled = rep, 2*r.Scheduled
				twice = append(twice, &c)
			} else if rep == 0 {
				twice = append(twice, r)
			}
		}
	}
	mq := readRecords(t, "../testdata/modquic/results.jsonl")
	for _, r := range mq { // `reproduce modquic --scale smoke --seed 7`
		if r.Env != nil {
			r.Env.Seed = 7
		}
	}
	evo := mustStudy(t, studies.Evolution)
	evoPlan := evo.Plan(studies.Smoke) // a host that has everything: ngtcp2 and the exchange cells
	evoRecs := interopLines(t, evoPlan.Custom.Keys(evoPlan.Custom.Reps), evoPlan.Custom.Runs())
	noRoot := evo.PlanOn(studies.Smoke, studies.Host{Exchange: errors.New("the exchange cases' emulated links need root")}) // `reproduce evolution --scale smoke` without root
	noRootRecs := interopLines(t, noRoot.Custom.Keys(noRoot.Custom.Reps), noRoot.Custom.Runs())
	for _, tt := range []struct {
		name    string
		recs    []*result.Record
		st      *studies.Study
		plan    studies.Plan // the plan reproduce judged them by, on a host with gtlsserver
		note    bool         // the page says the plan is what they measured
		content []string
	}{
		{"highway2023 --runs 2", twice, mustStudy(t, studies.Highway2023), mustStudy(t, studies.Highway2023).Plan(studies.Smoke).Apply(studies.RunOptions{Runs: 2}), true,
			[]string{fmt.Sprintf("Scale smoke: 0 page loads (warm-ups included) in 0 part(s) and %d bulk-flow run(s)", len(twice)),
				"2 repetition(s) of 2s per arm and path"}},
		{"modquic --seed 7", mq, mustStudy(t, studies.ModQUIC), mustStudy(t, studies.ModQUIC).Plan(studies.Smoke).Apply(studies.RunOptions{Seed: 7}), true,
			[]string{fmt.Sprintf("Scale smoke: 0 page loads (warm-ups included) in 0 part(s) and %d bulk-flow run(s)", flowRuns(mq))}},
		{"evolution", evoRecs, evo, evoPlan, false,
			[]string{`<section id="interop">`, fmt.Sprintf("0 bulk-flow run(s) and %d interop case run(s)", len(evoRecs))}},
		{"evolution without root", noRootRecs, evo, noRoot, false,
			[]string{fmt.Sprintf("0 bulk-flow run(s) and %d interop case run(s)", len(noRootRecs)), "the exchange cells (v2, each of", "no exchange case is in the records"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeRecords(t, filepath.Join(dir, "results.jsonl"), tt.recs)
			page := studyPage(t, dir)
			if !strings.Contains(page, tt.st.Title) || !strings.Contains(page, "(scale smoke)") {
				t.Errorf("page is not %s's study page at scale smoke:\n%.1500s", tt.st.Name, page)
			}
			if got := strings.Contains(page, "what they measured"); got != tt.note {
				t.Errorf("page says the plan is what the records measured: %v, want %v", got, tt.note)
			}
			for _, want := range tt.content {
				if !strings.Contains(page, want) {
					t.Errorf("page lacks %q", want)
				}
			}
			if got, want := pageVerdicts(page), reportVerdicts(tt.st, tt.plan, tt.recs); !slices.Equal(got, want) {
				t.Errorf("page verdicts %q; the report's %q", got, want)
			}
		})
	}
}

// mustStudy returns the study called name.
func mustStudy(t *testing.T, name string) *studies.Study {
	t.Helper()
	st, err := studies.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// readRecords reads the result file path.
func readRecords(t *testing.T, path string) []*result.Record {
	t.Helper()
	recs, _, err := analysis.ReadFiles([]string{path}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// writeRecords writes recs as the result file path.
func writeRecords(t *testing.T, path string, recs []*result.Record) {
	t.Helper()
	var b bytes.Buffer
	w := result.NewWriter(&b)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// interopLines are evolution's lines of the schedule keys ("SERVER|CASE|REP" for a probe case,
// "CLIENT>SERVER|CASE|REP" for an exchange cell), every case passing, a second apart,
// scheduled the run's length.
func interopLines(t *testing.T, keys []string, scheduled int) []*result.Record {
	t.Helper()
	var out []*result.Record
	start := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for i, k := range keys {
		at := start.Add(time.Duration(i) * time.Second)
		f := strings.Split(k, "|")
		client, server, ok := strings.Cut(f[0], ">")
		if !ok {
			client, server = interop.ProbeClient, f[0]
		}
		rep, _ := strconv.Atoi(f[2])
		b, err := json.Marshal(interop.Record{V: interop.RecordVersion, Kind: interop.RecordKind, Time: at.Format(time.RFC3339), Case: f[1], Client: client, Server: server,
			Versions: map[string]string{"client": "1", "server": "1"}, Outcome: interop.Pass})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, &result.Record{V: result.Version, Kind: result.KindInterop, Experiment: studies.PartExperiment(studies.Evolution, studies.EvolutionPart),
			Run: rep, Scheduled: scheduled, Time: at, Valid: true, Interop: b})
	}
	return out
}

// flowRuns counts the runs the flow lines of recs are of (experiment, mix and run).
func flowRuns(recs []*result.Record) int {
	runs := map[string]bool{}
	for _, r := range recs {
		if r.IsFlow() {
			runs[fmt.Sprint(r.Experiment, "|", r.Mix, "|", r.Run)] = true
		}
	}
	return len(runs)
}

// studyPage serves dir with the study reports and returns the page of its one result set.
func studyPage(t *testing.T, dir string) string {
	t.Helper()
	s, err := view.New(view.Options{Roots: []string{dir}, Study: Report})
	if err != nil {
		t.Fatal(err)
	}
	sets := s.Sets()
	if len(sets) != 1 {
		t.Fatalf("%d result sets, want 1", len(sets))
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/set/" + sets[0].ID + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("set page: %d\n%.1000s", resp.StatusCode, page)
	}
	return html.UnescapeString(string(page))
}

// verdictRE matches a verdict cell of a study page's findings table.
var verdictRE = regexp.MustCompile(`<td class="verdict v-[^"]*">([^<]*)</td>`)

// pageVerdicts are the verdicts of a study page's findings table, in order.
func pageVerdicts(page string) []string {
	var out []string
	for _, m := range verdictRE.FindAllStringSubmatch(page, -1) {
		out = append(out, m[1])
	}
	return out
}

// reportVerdicts are the verdicts reproduce's report gives recs judged by plan (FromRecords of
// it, as a complete run is re-judged), in the findings table's order.
func reportVerdicts(st *studies.Study, plan studies.Plan, recs []*result.Record) []string {
	var out []string
	for _, j := range studies.Evaluate(st, studies.FromRecords(plan, recs), recs).Judge() {
		out = append(out, string(j.Verdict))
	}
	return out
}
