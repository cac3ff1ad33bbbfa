package studyview

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/analysis"
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
// it as the study's page.
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
}
