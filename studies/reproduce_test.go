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

// derivations counts the schedules derived through its derive (RunOptions.Schedule).
type derivations struct{ n int }

func (d *derivations) derive(c experiment.Config) (*experiment.Schedule, error) {
	d.n++
	return experiment.NewSchedule(c)
}

// TestReproduceDerivesItsPlanOnce: `reproduce carlucci2015 --runs 50` derives every part's
// schedule once (Prepare, as cmd does), and the job given it derives none again from the
// command to the report: the announcement, the check, the measuring (here interrupted at
// once, the sink writing the plan's records as if made), the estimate, the judging and the
// report read the one prepared or count without a schedule.
func TestReproduceDerivesItsPlanOnce(t *testing.T) {
	st := carlucci()
	var d derivations
	o := RunOptions{Runs: 50, Schedule: d.derive}
	p := st.Plan(Quick).Apply(o)
	prep, err := p.Prepare(o)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sink := Sink{
		Open: func(bool) (io.Writer, func() error, error) {
			f, err := os.Create(filepath.Join(dir, ResultsFile))
			if err != nil {
				return nil, nil, err
			}
			w := result.NewWriter(f)
			for _, r := range scheduledRecords(p, "") {
				if err := w.Write(r); err != nil {
					return nil, nil, err
				}
			}
			return f, f.Close, nil
		},
		Check: func(m Plan) error {
			if m.Loads() != prep.Loads() {
				t.Errorf("the checked plan has %d loads, the prepared %d", m.Loads(), prep.Loads())
			}
			return nil
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the loads are the sink's
	job := Job{Study: st, Plan: p, Mode: JobRun, Dir: dir, Options: o, Prepared: prep}
	out, err := Reproduce(ctx, job, sink)
	if err != nil || len(out.Judgements) != len(st.Findings) {
		t.Fatalf("reproduce: %d judgements, %v", len(out.Judgements), err)
	}
	_ = prep.PartLines()
	if d.n != len(p.Parts) {
		t.Errorf("derived %d part schedules, want %d (one per part)", d.n, len(p.Parts))
	}
	if whole, err := p.Estimate(); err != nil || whole != out.Estimate {
		t.Errorf("prepared estimate %s, the plan's %s (%v)", out.Estimate, whole, err)
	}
}
