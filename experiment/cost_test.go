package experiment

import (
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestEstimateErrors: a spec that does not parse is an error in every path of the model, never a
// zero cost.
func TestEstimateErrors(t *testing.T) {
	bad := Config{Pages: []string{"1x5KB"}, Links: []string{"rate=fast"}, Arms: CrossArms([]string{"h2"}, []result.Mode{result.Cold}), Runs: 1}
	if _, err := estimate(bad); err == nil {
		t.Error("Estimate of a bad link: no error")
	}
	if _, err := estimateJobs(bad, []int{0}); err == nil {
		t.Error("EstimateJobs of a bad link: no error")
	}
	if _, err := planShards(bad, 1); err == nil {
		t.Error("PlanShards of a bad link: no error")
	}
	good := bad
	good.Links = []string{"none"}
	all, _ := estimate(good)
	jobs, err := estimateJobs(good, []int{0})
	if err != nil || jobs != all {
		t.Errorf("EstimateJobs of the one load %v, %v; Estimate %v", jobs, err, all)
	}
	if _, err := estimateJobs(good, []int{5}); err == nil {
		t.Error("EstimateJobs outside the schedule: no error")
	}
}

// TestEstimateIsTheScheduleTotal: Estimate prices a configuration cell by cell to the
// nanosecond of its schedule's Total (warm-ups, several links and arms, a device, the ngtcp2
// stack), and a spec that does not parse is an error.
func TestEstimateIsTheScheduleTotal(t *testing.T) {
	arms := CrossArms([]string{"h1", "h2", "h3"}, []result.Mode{result.Cold, result.Warm})
	for name, c := range map[string]Config{
		"kakhki-like": kakhkiLike(),
		"carlucci":    {Pages: []string{"carlucci2015"}, Links: []string{"carlucci2015", "carlucci2015,loss=1%"}, Arms: arms, Runs: 10, Warmup: 1},
		"defaults":    {Pages: []string{"5x10KB", "1x1MB"}, Links: []string{"none", "3g"}, Arms: arms[:2]},
		"device":      {Pages: []string{"5x10KB"}, Links: []string{"3g"}, Arms: arms, Runs: 2, Device: "motog2013"},
		"ngtcp2":      {Pages: []string{"5x10KB"}, Links: []string{"3g"}, Arms: arms, Runs: 3, Warmup: 2, H3Stack: "ngtcp2"},
	} {
		want, err := estimate(c)
		if got, gerr := Estimate(c); err != nil || gerr != nil || got != want {
			t.Errorf("%s: Estimate %v (%v), the schedule's Total %v (%v)", name, got, gerr, want, err)
		}
	}
	if _, err := Estimate(Config{Pages: []string{"1x5KB"}, Links: []string{"rate=fast"}, Arms: arms}); err == nil {
		t.Error("Estimate of a bad link: no error")
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
