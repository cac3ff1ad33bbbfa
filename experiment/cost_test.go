package experiment

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

// readFixture reads the carlucci2015 quick run the cost model is fitted to (fields the fit
// does not use stripped).
func readFixture(t *testing.T) []*result.Record {
	t.Helper()
	f, err := os.Open("testdata/carlucci2015-quick.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []*result.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r := &result.Record{}
		if err := json.Unmarshal(sc.Bytes(), r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestCostFittedFromRecords re-derives the cost model's constants from the records they were
// fitted to: each constant must be the fit rounded to its stated precision.
func TestCostFittedFromRecords(t *testing.T) {
	fit, err := FitCost(readFixture(t))
	if err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want, tol time.Duration) {
		t.Helper()
		if d := got - want; d < -tol || d > tol {
			t.Errorf("%s: fitted %v, constant %v (tolerance %v)", name, got, want, tol)
		}
	}
	near("LoadOverhead", fit.LoadOverhead, LoadOverhead, 10*time.Millisecond)
	near("WarmPriming", fit.WarmPriming, WarmPriming, 10*time.Millisecond)
	near("BrowserLaunchCost", fit.BrowserLaunch, BrowserLaunchCost, 50*time.Millisecond)
	near("LinkCheckCost", fit.LinkCheck, LinkCheckCost, 100*time.Millisecond)
	near("FlowOverhead", fit.FlowOverhead, FlowOverhead, 50*time.Millisecond)
	if fit.Cold != 144 || fit.Warm != 21 || fit.Links != 3 || fit.Flows != 3 {
		t.Errorf("samples: %d cold, %d warm, %d links, %d flow gaps; want 144, 21, 3, 3", fit.Cold, fit.Warm, fit.Links, fit.Flows)
	}
	// The fixture's PLTs sum to 201 s and its records span 6 min 12 s of the run's 6 min 18 s.
	near("PLT sum", fit.PLT, 201*time.Second, time.Second)
	near("span", fit.Span, 372*time.Second, 2*time.Second)
	// Without wall times there is nothing to fit.
	if _, err := FitCost([]*result.Record{{Kind: result.KindLinkCheck}}); err == nil {
		t.Error("FitCost of no load: no error")
	}
}

// TestEstimateLoadShapes checks the load formula's two shapes.
func TestEstimateLoadShapes(t *testing.T) {
	if got := EstimateLoad(time.Second, result.Cold); got != time.Second+LoadOverhead {
		t.Errorf("cold: %v", got)
	}
	if got := EstimateLoad(time.Second, result.Warm); got != 2*time.Second+LoadOverhead+WarmPriming {
		t.Errorf("warm: %v", got)
	}
	if EstimateFlows(0, time.Minute) != 0 || EstimateFlows(2, 20*time.Second) != LinkCheckCost+44*time.Second {
		t.Error("EstimateFlows")
	}
}

// TestEstimateErrors: a spec that does not parse is an error in every path of the model, never a
// zero cost.
func TestEstimateErrors(t *testing.T) {
	bad := Config{Pages: []string{"1x5KB"}, Links: []string{"rate=fast"}, Arms: CrossArms([]string{"h2"}, []result.Mode{result.Cold}), Runs: 1}
	if _, err := Estimate(bad); err == nil {
		t.Error("Estimate of a bad link: no error")
	}
	if _, err := EstimateJobs(bad, []int{0}); err == nil {
		t.Error("EstimateJobs of a bad link: no error")
	}
	if _, err := PlanShards(bad, 1); err == nil {
		t.Error("PlanShards of a bad link: no error")
	}
	good := bad
	good.Links = []string{"none"}
	all, _ := Estimate(good)
	jobs, err := EstimateJobs(good, []int{0})
	if err != nil || jobs != all {
		t.Errorf("EstimateJobs of the one load %v, %v; Estimate %v", jobs, err, all)
	}
	if _, err := EstimateJobs(good, []int{5}); err == nil {
		t.Error("EstimateJobs outside the schedule: no error")
	}
}

// TestReadMatrixResolvesTraces: a relative trace path resolves from the matrix file's directory.
func TestReadMatrixResolvesTraces(t *testing.T) {
	m := "pages: [1x5KB]\nlinks: [\"down=trace:t/lte.trace,up=trace:/abs/up.trace,rtt=20ms\", none]\nprotocols: [h2]\n"
	c, err := ReadMatrix(strings.NewReader(m), "/sweeps/a/grid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Links[0] != "down=trace:/sweeps/a/t/lte.trace,up=trace:/abs/up.trace,rtt=20ms" {
		t.Errorf("link %q", c.Links[0])
	}
	want := []Trace{{Written: "t/lte.trace", Path: "/sweeps/a/t/lte.trace"}, {Written: "/abs/up.trace", Path: "/abs/up.trace"}}
	if got := MatrixTraces(c); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("traces %+v", got)
	}
}
