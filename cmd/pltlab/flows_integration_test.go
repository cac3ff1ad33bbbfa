package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestIntegrationRunCross loads the carlucci2015 page over h2 on carlucci2015 without and then
// with an h1 CUBIC bulk flow through the same bottleneck, and checks that the loads stay valid,
// say what cross traffic ran, and that the median PLT rises under contention.
func TestIntegrationRunCross(t *testing.T) {
	needRootAndChromium(t)
	dir := t.TempDir()
	median := func(recs []*result.Record, cross string) float64 {
		var plts []float64
		for _, r := range recs {
			if !r.IsLoad() {
				continue
			}
			if !r.Valid || r.Cross != cross {
				t.Fatalf("load %d: valid %v (%s), cross %q, want %q", r.Run, r.Valid, r.InvalidReason, r.Cross, cross)
			}
			plts = append(plts, r.PLTMs)
		}
		slices.Sort(plts)
		if len(plts) != 3 {
			t.Fatalf("%d loads, want 3", len(plts))
		}
		return plts[1]
	}
	var meds []float64
	for _, cross := range []string{"", "h1:cubic"} {
		out := filepath.Join(dir, "r"+strings.ReplaceAll(cross, ":", "-")+".jsonl")
		args := []string{"run", "--page", "carlucci2015", "--link", "carlucci2015", "--protocols", "h2", "--runs", "3",
			"--warmup", "0", "--no-link-check", "--out", out}
		if cross != "" {
			args = append(args, "--cross", cross)
		}
		if code, stdout, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		meds = append(meds, median(readAll(t, out), cross))
	}
	t.Logf("median PLT without cross traffic %.0f ms, with h1:cubic %.0f ms", meds[0], meds[1])
	if meds[1] < meds[0]*1.2 {
		t.Errorf("median PLT with cross traffic %.0f ms is not 20%% above %.0f ms without", meds[1], meds[0])
	}
}

// TestIntegrationFlowsCmd runs 'pltlab flows' for two short runs and reads its output back with
// 'pltlab report', drawing the goodput plot.
func TestIntegrationFlowsCmd(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("end-to-end test: needs root and no -short")
	}
	dir := t.TempDir()
	out, png := filepath.Join(dir, "f.jsonl"), filepath.Join(dir, "g.png")
	code, stdout, stderr := runCLI(t, "flows", "--link", "rate=10mbit,rtt=20ms", "--flow", "h1:cubic", "--flow", "h3",
		"--start", "0s,1s", "--duration", "3s", "--runs", "2", "--out", out)
	if code != 0 || !strings.Contains(stdout, "h3:newreno") || !strings.Contains(stdout, "Jain") {
		t.Fatalf("flows: exit %d\n%s\n%s", code, stdout, stderr)
	}
	recs := readAll(t, out)
	if len(recs) != 4 || !recs[0].IsFlow() || recs[3].Run != 1 {
		t.Fatalf("%d records (want 4 flow lines of runs 0 and 1)", len(recs))
	}
	code, stdout, stderr = runCLI(t, "report", out, "--plot", png)
	if st, err := os.Stat(png); code != 0 || err != nil || st.Size() < 1000 || !strings.Contains(stdout, "bulk flows") {
		t.Fatalf("report: exit %d, plot %v\n%s\n%s", code, err, stdout, stderr)
	}
}
