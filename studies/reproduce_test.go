package studies

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// scheduledRecords are the records of every load and flow run plan schedules, each valid (the
// loads' PLTs spread a little per arm, the flows fair), made by pltlab version (no env when "").
func scheduledRecords(plan Plan, version string) []*result.Record {
	var recs []*result.Record
	var env *result.Env
	if version != "" {
		env = &result.Env{Pltlab: version}
	}
	for _, c := range plan.Configs(RunOptions{}) {
		jobs := experiment.Order(c)
		for i, j := range jobs {
			ms := 1000.0 + float64(i%7)*13 + float64(len(j.Arm.Protocol)*int(j.Arm.Protocol[1]))
			recs = append(recs, &result.Record{V: 1, Experiment: c.Name, Run: i, Scheduled: len(jobs), Mode: j.Arm.Mode, Env: env,
				Protocol: j.Arm.Protocol, ObservedProtocol: j.Arm.Protocol, Page: result.Page{Spec: c.Pages[j.Page]},
				Link: result.Link{Spec: c.Links[j.Link]}, Warmup: j.Warmup, Valid: true, PLTMs: ms})
		}
	}
	for _, f := range plan.Flows {
		for _, mix := range f.Mixes {
			for run := range f.Runs {
				g := make([]float64, len(mix))
				l := make([]float64, len(mix))
				for i := range g {
					g[i], l[i] = 2.8e6/float64(len(mix)), 0.01
				}
				for _, r := range flowRecs(run, mix, g, l, 1, 0.1) {
					r.Experiment = PartExperiment(plan.Study, f.Name)
					recs = append(recs, r)
				}
			}
		}
	}
	return recs
}

// writeResults writes recs as dir's results file.
func writeResults(t *testing.T, dir string, recs []*result.Record) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	w := result.NewWriter(f)
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestReproduceSteps: the one reproduce call decides its step from the records in its
// directory without measuring: a complete run under --resume is re-judged (its report written,
// the records file never opened); --decide on it with nothing inconclusive that loads decide
// says so; --decide on records of another pltlab version, or on no records, is refused before
// anything is opened.
func TestReproduceSteps(t *testing.T) {
	st := carlucci()
	plan := st.Plan(Quick)
	dir := t.TempDir()
	writeResults(t, dir, scheduledRecords(plan, "v1"))
	var said []string
	sink := Sink{
		Open: func(bool) (io.Writer, func() error, error) {
			t.Fatal("the records file was opened: nothing is to be measured")
			return nil, nil, nil
		},
		Say: func(line string) { said = append(said, line) },
	}
	job := Job{Study: st, Plan: plan, Mode: JobResume, Dir: dir, Options: RunOptions{Version: "v1"}}
	out, err := Reproduce(context.Background(), job, sink)
	if err != nil || out.Step != StepRejudge || out.Support == nil || len(out.Judgements) != len(st.Findings) {
		t.Fatalf("resume of a complete run: step %d, %d judgements, err %v", out.Step, len(out.Judgements), err)
	}
	if _, err := os.Stat(filepath.Join(dir, "findings.json")); err != nil {
		t.Errorf("re-judging wrote no report: %v", err)
	}
	if len(said) != 1 || !strings.Contains(said[0], "is complete") {
		t.Errorf("said %q", said)
	}
	// --decide: the synthetic lossy cells are inconclusive, so it measures their loads; the
	// records file is opened (appended to) only after the plan is said.
	job.Mode = JobDecide
	said = nil
	errStop := errors.New("stop before measuring")
	sink.Open = func(appendTo bool) (io.Writer, func() error, error) {
		if !appendTo {
			t.Error("--decide would replace the records file")
		}
		return nil, nil, errStop
	}
	out, err = Reproduce(context.Background(), job, sink)
	if !errors.Is(err, errStop) || out.Step != StepMeasure || len(out.Measured.Parts)+len(out.Measured.Flows) == 0 {
		t.Fatalf("decide: step %d, %d parts, err %v", out.Step, len(out.Measured.Parts), err)
	}
	if s := strings.Join(said, "\n"); !strings.Contains(s, "--decide: lossy/decide/0") || !strings.Contains(s, "more loads per arm") {
		t.Errorf("decide said %q", said)
	}
	var ref *RefusedError
	job.Options.Version = "v2"
	if _, err := Reproduce(context.Background(), job, sink); !errors.As(err, &ref) || !errors.Is(err, ErrNotDecidable) {
		t.Errorf("decide on another version's records: %v, want a RefusedError wrapping ErrNotDecidable", err)
	}
	job.Dir = t.TempDir()
	if _, err := Reproduce(context.Background(), job, sink); !errors.As(err, &ref) || !strings.Contains(err.Error(), "needs a complete reproduction") {
		t.Errorf("decide without records: %v", err)
	}
}

// TestReproduceDerivesItsPlanOnce: a job given the plan its caller prepared (as `reproduce
// --runs 50` does) derives no other before it measures: the announcement, the estimate, the
// part lines and the resume read the one prepared, whose estimate is the plan's.
func TestReproduceDerivesItsPlanOnce(t *testing.T) {
	st := carlucci()
	o := RunOptions{Runs: 50}
	p := st.Plan(Quick).Apply(o)
	before := experiment.Derivations()
	prep, err := p.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	errStop := errors.New("stop before measuring")
	var said []string
	sink := Sink{
		Open: func(bool) (io.Writer, func() error, error) { return nil, nil, errStop },
		Say:  func(line string) { said = append(said, line) },
	}
	job := Job{Study: st, Plan: p, Mode: JobRun, Dir: t.TempDir(), Options: o, Prepared: prep}
	if _, err := Reproduce(context.Background(), job, sink); !errors.Is(err, errStop) {
		t.Fatalf("reproduce: %v, want the sink's error", err)
	}
	est, err := prep.Estimate()
	if err != nil {
		t.Fatal(err)
	}
	_ = prep.PartLines()
	if n := experiment.Derivations() - before; n != int64(len(p.Parts)) {
		t.Errorf("derived %d part plans, want %d (one per part)", n, len(p.Parts))
	}
	if whole, err := p.Estimate(); err != nil || whole != est {
		t.Errorf("prepared estimate %s, the plan's %s (%v)", est, whole, err)
	}
}
