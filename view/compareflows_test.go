package view

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

// writeFlowRun writes one run of the mix h3:newreno+h1:cubic to dir/name, its lines made with
// settings s and env e (t fails on a write error).
func writeFlowRun(t *testing.T, dir, name string, s *result.Settings, e *result.Env) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := result.NewWriter(f)
	for i, p := range []string{"h3", "h1"} {
		r := &result.Record{V: 1, Kind: result.KindFlow, Experiment: "flows-" + name, Time: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC),
			Protocol: p, ObservedProtocol: p, Valid: true, Settings: s, Env: e, Link: result.Link{Spec: "rate=10mbit", DownBps: 10e6},
			Flow: &result.Flow{FlowIndex: i, Flows: 2, Mix: "h3:newreno+h1:cubic", DurationS: 10, BinMs: 100, GoodputBps: 4e6, Series: []float64{4e6}}}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCompareFlowRuns: view's compare of two flows runs pairs their flow groups and lists the
// settings that differ between them (another h3 stack, a shielded CPU) through
// result.SettingDiffs, as it does for loads.
func TestCompareFlowRuns(t *testing.T) {
	dir := t.TempDir()
	cpu := 1
	writeFlowRun(t, dir, "a.jsonl", nil, &result.Env{Pltlab: "dev"})
	writeFlowRun(t, dir, "b.jsonl", &result.Settings{H3Stack: "ngtcp2", QUICCC: "cubic"}, &result.Env{Pltlab: "dev", ShieldCPU: &cpu})
	s, ts := newTest(t, Options{Roots: []string{dir}})
	a, b := setID(t, s, "a.jsonl"), setID(t, s, "b.jsonl")
	code, page, _ := get(t, ts, "/compare?a="+a+"&b="+b)
	page = html.UnescapeString(page)
	for _, want := range []string{"Bulk flow link rate=10mbit, mix h3:newreno+h1:cubic, flow 0", "flow 1: A",
		"Settings that differ", "<td>settings.h3_stack</td>", `"ngtcp2"`, "<td>env.shield_cpu</td>"} {
		if code != 200 || !strings.Contains(page, want) {
			t.Fatalf("compare page (%d) lacks %q:\n%s", code, want, page)
		}
	}
	if strings.Contains(page, "Only in one side") || strings.Contains(page, "no group") {
		t.Errorf("flow groups left unpaired:\n%s", page)
	}
	_, same, _ := get(t, ts, "/compare?a="+a+"&b="+a)
	if !strings.Contains(same, "No recorded setting differs between the two groups") {
		t.Errorf("compare of a set with itself lists settings that differ")
	}
}
