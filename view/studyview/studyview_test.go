package studyview

import (
	"strings"
	"testing"

	"github.com/pltlab/pltlab/analysis"
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
