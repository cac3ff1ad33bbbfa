package analysis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestFlowGroupsSplitOnSettings: flow records that differ only in one setting (the h3 stack,
// the shielded CPU, the pltlab version, the flow's duration or host stack) are never pooled:
// each setting gives groups of their own, named by the loads' settings label beside the mix;
// records that differ in no setting are pooled as before.
func TestFlowGroupsSplitOnSettings(t *testing.T) {
	cpu := 1
	for _, tc := range []struct {
		name   string
		change func(*result.Record)
		label  string // a part of the changed group's label; "" when nothing changes
	}{
		{"no setting", func(r *result.Record) { r.GoodputBps++ }, ""},
		{"h3 stack", func(r *result.Record) { r.Settings = &result.Settings{H3Stack: "ngtcp2", QUICCC: "cubic"} }, "h3 stack ngtcp2/cubic"},
		{"shielded cpu", func(r *result.Record) { r.Env = &result.Env{ShieldCPU: &cpu} }, "shield cpu 1"},
		{"pltlab version", func(r *result.Record) { r.Env = &result.Env{Pltlab: "v2"} }, "pltlab v2"},
		{"duration", func(r *result.Record) { r.DurationS = 20 }, "duration_s 20"},
		{"host stack", func(r *result.Record) { r.Stack = &result.FlowStack{Path: "veth", Arm: "quic-no-gso"} }, "stack.arm quic-no-gso"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs := flowRecs(12)
			for _, r := range recs[12:] { // runs 6 to 11
				tc.change(r)
			}
			rep := Analyze(recs, Options{})
			want := 4
			if tc.label == "" {
				want = 2
			}
			if len(rep.Flows) != want {
				t.Fatalf("%d flow groups; want %d", len(rep.Flows), want)
			}
			var labels []string
			for _, g := range rep.Flows {
				if g.Runs != 12*2/want || g.Split != (tc.label != "") {
					t.Errorf("group %+v: %d runs, split %v", g.FlowKey, g.Runs, g.Split)
				}
				labels = append(labels, g.MixLabel())
			}
			if tc.label == "" {
				if labels[0] != "h1:cubic+h1:cubic" {
					t.Errorf("mix label %q; want the mix alone", labels[0])
				}
				return
			}
			if all := strings.Join(labels, " | "); !strings.Contains(all, "h1:cubic+h1:cubic [") || !strings.Contains(all, tc.label) {
				t.Errorf("mix labels %s; want %q named", all, tc.label)
			}
			if rows := rep.flowTable(); !strings.Contains(fmt.Sprint(rows), tc.label) {
				t.Errorf("flow table does not name %q: %v", tc.label, rows)
			}
		})
	}
}

// TestOldFlowLineReads: a flow line written before flows carried their settings (no
// "settings") still reads, and pools with a new line of the default settings (quic-go): they
// are the same measurement.
func TestOldFlowLineReads(t *testing.T) {
	old := `{"v":1,"kind":"flow","experiment":"e","run":0,"time":"2026-12-01T09:00:00Z","protocol":"h3","cc":"newreno","valid":true,` +
		`"link":{"spec":"rate=10mbit","down_bps":10000000},"env":{"pltlab":"dev"},"flow":0,"flows":1,"mix":"h3:newreno","start_s":0,` +
		`"duration_s":10,"goodput_bps":5000000,"bin_ms":100,"series":[0,5000000]}` + "\n"
	r, err := result.NewReader(strings.NewReader(old), "old.jsonl").Next()
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsFlow() || r.Settings != nil || r.Mix != "h3:newreno" || r.GoodputBps != 5e6 {
		t.Fatalf("old line read as %+v (flow %+v)", r, r.Flow)
	}
	newer := *r
	f := *r.Flow
	newer.Flow, newer.Run, newer.Settings = &f, 1, &result.Settings{} // quic-go's: none set
	rep := Analyze([]*result.Record{r, &newer}, Options{})
	if len(rep.Flows) != 1 || rep.Flows[0].Runs != 2 || rep.Flows[0].Split || rep.Flows[0].Settings != "pltlab dev, bin_ms 100, duration_s 10, start_s 0" {
		t.Fatalf("flow groups %+v; want the two lines pooled", rep.Flows)
	}
}

// TestFlowFixturesGroupAsBefore: the flow lines of stored result files (written before flows
// carried their settings) group by link, mix and flow as they always did: no group is split.
func TestFlowFixturesGroupAsBefore(t *testing.T) {
	for _, path := range []string{"../testdata/carlucci2015-quick-a9b0be5.jsonl", "../view/testdata/modquic/results.jsonl"} {
		recs, _, err := ReadFiles([]string{path}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		positions := map[[3]string]bool{}
		for _, r := range recs {
			if r.IsFlow() {
				positions[[3]string{r.Link.Spec, r.Mix, fmt.Sprint(r.FlowIndex)}] = true
			}
		}
		rep := Analyze(recs, Options{})
		if len(rep.Flows) == 0 || len(rep.Flows) != len(positions) {
			t.Errorf("%s: %d flow groups for %d flow positions", path, len(rep.Flows), len(positions))
		}
		for _, g := range rep.Flows {
			if g.Split || g.MixLabel() != g.Mix {
				t.Errorf("%s: group %+v split", path, g.FlowKey)
			}
		}
	}
}
