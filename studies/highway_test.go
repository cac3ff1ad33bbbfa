package studies

import (
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/result"
)

// highwayRecs builds valid veth flow records of arm with the given goodputs (Mbit/s).
func highwayRecs(arm string, mbps ...float64) []*result.Record {
	var out []*result.Record
	for i, m := range mbps {
		out = append(out, &result.Record{Kind: result.KindFlow, Experiment: PartExperiment(Highway2023, "veth"), Run: i, Valid: true,
			Flow: &result.Flow{GoodputBps: m * 1e6, Bytes: int64(m * 1e6 / 8 * 5), Stack: &result.FlowStack{Path: "veth", Arm: arm, CPUSPerGB: 3}}})
	}
	return out
}

// TestHighwayJudgements judges the findings from synthetic records: clear gains reproduce the
// buffer and offload findings, a single run per arm is "not run", QUIC gaining more from GSO
// than TCP from its offloads is "contradicted", overlapping arms are "inconclusive" with the
// runs that would decide them, and AES-NI is never testable.
func TestHighwayJudgements(t *testing.T) {
	st, err := Lookup(Highway2023)
	if err != nil {
		t.Fatal(err)
	}
	judge := func(recs []*result.Record) map[string]Judgement {
		e := Evaluate(st, st.Plan(Quick), recs)
		out := map[string]Judgement{}
		for i, j := range e.Judge() {
			out[st.Findings[i].ID] = j
		}
		return out
	}
	var recs []*result.Record
	recs = append(recs, highwayRecs("quic", 1000, 1010, 990)...)
	recs = append(recs, highwayRecs("quic-os-buffers", 500, 510, 490)...)
	recs = append(recs, highwayRecs("tcp-cubic", 2000, 2020, 1980)...)
	recs = append(recs, highwayRecs("tcp-cubic-no-offload", 1000, 1010, 990)...)
	recs = append(recs, highwayRecs("quic-no-offload", 900, 910, 890)...)
	recs = append(recs, highwayRecs("quic-no-gso", 800, 810, 790)...)
	js := judge(recs)
	for id, want := range map[string]Verdict{"implementations": NotRun, "buffers": Reproduced, "offload": Reproduced, "aesni": NotTestable} {
		if js[id].Verdict != want {
			t.Errorf("%s: %s (%s), want %s", id, js[id].Verdict, js[id].Evidence, want)
		}
	}
	if !strings.Contains(js["buffers"].Evidence, "+100.0 %") || !strings.Contains(js["offload"].Evidence, "TCP cubic +100.0 %") {
		t.Errorf("evidence: %q / %q", js["buffers"].Evidence, js["offload"].Evidence)
	}

	// quic-go's GSO gains 150 %, more than TCP's 100 %.
	var more []*result.Record
	for _, r := range recs {
		if r.Stack.Arm != "quic-no-gso" {
			more = append(more, r)
		}
	}
	more = append(more, highwayRecs("quic-no-gso", 400, 404, 396)...)
	if j := judge(more)["offload"]; j.Verdict != Contradicted {
		t.Errorf("QUIC gaining more: %s (%s), want contradicted", j.Verdict, j.Evidence)
	}

	flat := append(highwayRecs("quic", 1000, 1200, 800), highwayRecs("quic-os-buffers", 990, 1190, 810)...)
	if j := judge(flat)["buffers"]; j.Verdict != Inconclusive || !strings.Contains(j.Evidence, "runs per arm would decide") {
		t.Errorf("overlapping arms: %s (%s), want inconclusive with the runs needed", j.Verdict, j.Evidence)
	}

	one := append(highwayRecs("quic", 1000), highwayRecs("quic-os-buffers", 500)...)
	if j := judge(one)["buffers"]; j.Verdict != NotRun {
		t.Errorf("one run an arm: %s, want not run", j.Verdict)
	}
	if j := judge(nil)["implementations"]; j.Verdict != NotRun {
		t.Errorf("no records: %s, want not run", j.Verdict)
	}
}

// TestHighwayImplementations: the implementations finding by the interval of the ngtcp2/quic-go
// goodput ratio against a factor of 1.5: reproduced beyond it either way, contradicted within it,
// inconclusive across it; not testable without gtlsserver.
func TestHighwayImplementations(t *testing.T) {
	st, err := Lookup(Highway2023)
	if err != nil {
		t.Fatal(err)
	}
	judge := func(recs []*result.Record) Judgement {
		for i, j := range Evaluate(st, st.Plan(Quick), recs).Judge() {
			if st.Findings[i].ID == "implementations" {
				return j
			}
		}
		t.Fatal("no implementations finding")
		return Judgement{}
	}
	quic := highwayRecs("quic", 1000, 1020, 980)
	for _, c := range []struct {
		name string
		ng   []float64
		want Verdict
		text string
	}{
		{"ngtcp2 at a third", []float64{330, 335, 325}, Reproduced, "ratio ngtcp2/quic-go 0.33"},
		{"ngtcp2 at twice", []float64{2000, 2040, 1960}, Reproduced, "ratio ngtcp2/quic-go 2.00"},
		{"ngtcp2 alike", []float64{1100, 1120, 1080}, Contradicted, "within that factor"},
		{"ngtcp2 on the factor", []float64{1500, 2500, 700}, Inconclusive, "more runs decide it"},
	} {
		j := judge(append(slices.Clone(quic), highwayRecs("ngtcp2-cubic", c.ng...)...))
		if j.Verdict != c.want || !strings.Contains(j.Evidence, c.text) {
			t.Errorf("%s: %s (%s), want %s with %q", c.name, j.Verdict, j.Evidence, c.want, c.text)
		}
	}
	// Whether gtlsserver was there is what the records say (decided when the arm ran), not
	// the judging host.
	skipped := &result.Record{Kind: result.KindFlow, Experiment: PartExperiment(Highway2023, "veth"), Run: 0,
		InvalidReason: flows.ArmSkipped + "the ngtcp2 HTTP/3 stack needs gtlsserver",
		Flow:          &result.Flow{Stack: &result.FlowStack{Path: "veth", Arm: "ngtcp2-cubic"}}}
	if j := judge(append(slices.Clone(quic), skipped)); j.Verdict != NotTestable || !strings.Contains(j.Evidence, "gtlsserver") {
		t.Errorf("without gtlsserver: %s (%s), want not testable naming it", j.Verdict, j.Evidence)
	}
	if j := judge(quic); j.Verdict != NotRun {
		t.Errorf("records without the ngtcp2 arm, judged where gtlsserver is missing: %s (%s), want not run", j.Verdict, j.Evidence)
	}
}

// highwayScheduled returns one valid record per run highway2023 schedules at scale sc, the
// goodput varying with the run.
func highwayScheduled(sc Scale) []*result.Record {
	hs := highwayScales[sc]
	var out []*result.Record
	for _, p := range hs.paths {
		path := p.name
		if p.link != "" {
			path = p.link
		}
		for _, a := range armsOn(p) {
			for run := range hs.runs {
				m := 1000 + 10*float64(run)
				out = append(out, &result.Record{Kind: result.KindFlow, Experiment: PartExperiment(Highway2023, p.name), Run: run, Valid: true,
					Flow: &result.Flow{GoodputBps: m * 1e6, Bytes: int64(m * 1e6 / 8 * 5), Stack: &result.FlowStack{Path: path, Arm: a.name}}})
			}
		}
	}
	return out
}
