package analysis

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

// flowRecs returns runs x 2 flow records of the mix h1:cubic+h1:cubic on a 10 Mbit/s link:
// flow 0 gets 6 Mbit/s + run x 0.1, flow 1 gets 3 Mbit/s.
func flowRecs(runs int) []*result.Record {
	var out []*result.Record
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for run := range runs {
		g := []float64{6e6 + float64(run)*1e5, 3e6}
		jain := (g[0] + g[1]) * (g[0] + g[1]) / (2 * (g[0]*g[0] + g[1]*g[1]))
		conv := 2.5
		for i := range 2 {
			out = append(out, &result.Record{V: 1, Kind: result.KindFlow, Experiment: "e", Run: run, Time: t0.Add(time.Duration(run) * time.Minute),
				Protocol: "h1", CC: "cubic", Valid: true, Link: result.Link{Spec: "rate=10mbit", DownBps: 10e6},
				Flow: &result.Flow{FlowIndex: i, Flows: 2, Mix: "h1:cubic+h1:cubic", GoodputBps: g[i], LossRatio: 0.01,
					LossSource: "emulator", BinMs: 100, Series: []float64{0, g[i], g[i]}, QueueDelayMs: []float64{0, 5, 9},
					QueueDelayMaxMs: []float64{0, 10, 19}, Utilization: (g[0] + g[1]) / 10e6, Jain: jain, ConvergeS: &conv}})
		}
	}
	return out
}

func TestFlowGroups(t *testing.T) {
	rep := Analyze(flowRecs(7), Options{})
	if !rep.Empty() || !rep.HasFlows() || len(rep.Flows) != 2 || len(rep.FlowRuns) != 7 {
		t.Fatalf("empty %v, flows %v: %d groups, %d runs", rep.Empty(), rep.HasFlows(), len(rep.Flows), len(rep.FlowRuns))
	}
	g0, g1 := rep.Flows[0], rep.Flows[1]
	// Flow 0's goodputs are 6.0..6.6 Mbit/s: median 6.3; n = 7 gives the CI [x(1), x(7)].
	if g0.Flow != 0 || g0.Runs != 7 || g0.Valid != 7 || g0.Goodput.Median != 6.3e6 || g0.Goodput.Low != 6e6 || g0.Goodput.High != 6.6e6 {
		t.Fatalf("flow 0: %+v", g0)
	}
	if g1.Goodput.Median != 3e6 || g1.LossRatio.Median != 0.01 || g1.ConvergeS.Median != 2.5 || g1.FlowsInMix() != 2 {
		t.Fatalf("flow 1: %+v", g1)
	}
	wantJain := 9.3e6 * 9.3e6 / (2 * (6.3e6*6.3e6 + 9e12))
	if math.Abs(g0.Jain.Median-wantJain) > 1e-12 || math.Abs(g0.Utilization.Median-0.93) > 1e-12 {
		t.Fatalf("jain %v (want %v), utilization %v", g0.Jain.Median, wantJain, g0.Utilization.Median)
	}
	if rows := rep.flowRunTable(); len(rows) != 15 || rows[1][0] != "0" {
		t.Fatalf("per-run table: %d rows", len(rows))
	}
}

func TestFlowReportFormats(t *testing.T) {
	rep := Analyze(flowRecs(2), Options{})
	var text, md, html, js bytes.Buffer
	for _, w := range []struct {
		f   Format
		buf *bytes.Buffer
	}{{Text, &text}, {Markdown, &md}, {HTML, &html}, {JSON, &js}} {
		if err := rep.Write(w.buf, w.f); err != nil {
			t.Fatalf("%s: %v", w.f, err)
		}
	}
	if !strings.Contains(text.String(), "bulk flows: medians across runs") || strings.Contains(text.String(), "no page loads") {
		t.Fatalf("text:\n%s", text.String())
	}
	if !strings.Contains(md.String(), "## Bulk flows") {
		t.Fatalf("markdown:\n%s", md.String())
	}
	if !strings.Contains(html.String(), `id="fig-goodput"`) || !strings.Contains(html.String(), `id="fig-queue"`) || strings.Contains(html.String(), `id="fig-ecdf"`) {
		t.Fatal("html lacks the flow figures or has load figures")
	}
	var out struct {
		Flows []struct {
			Flow       int `json:"flow"`
			GoodputBps struct {
				Median *float64 `json:"median"`
				Low    *float64 `json:"ci_low"`
			} `json:"goodput_bps"`
		} `json:"flows"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil || len(out.Flows) != 2 || *out.Flows[0].GoodputBps.Median != 6.05e6 || out.Flows[0].GoodputBps.Low != nil {
		t.Fatalf("json: %v %s", err, js.String())
	}
	for _, k := range []struct {
		kind   PlotKind
		format string
	}{{GoodputPlot, "png"}, {QueuePlot, "svg"}, {ECDFPlot, "svg"}} {
		var img bytes.Buffer
		if err := rep.WritePlot(&img, k.kind, k.format); err != nil || img.Len() < 1000 {
			t.Fatalf("%s plot: %v, %d bytes", k.kind, err, img.Len())
		}
	}
	if err := Analyze(nil, Options{}).WritePlot(&bytes.Buffer{}, GoodputPlot, "png"); err != ErrNoFlows {
		t.Fatalf("goodput plot without flows: %v", err)
	}
}

// TestReadFilesKeepsFlowsOfOneRun checks that two flows of one run with the same protocol are
// not taken for one record read twice.
func TestReadFilesKeepsFlowsOfOneRun(t *testing.T) {
	var buf bytes.Buffer
	w := result.NewWriter(&buf)
	for _, r := range flowRecs(1) {
		w.Write(r)
	}
	recs, skipped, err := ReadFiles([]string{"-", "-"}, strings.NewReader(buf.String()), nil)
	if err != nil || len(recs) != 2 || skipped != 0 {
		t.Fatalf("%d records, %d skipped, %v", len(recs), skipped, err)
	}
	var s bytes.Buffer
	if err := FlowSummary(&s, recs); err != nil || !strings.Contains(s.String(), "h1:cubic+h1:cubic") {
		t.Fatalf("FlowSummary: %v\n%s", err, s.String())
	}
}
