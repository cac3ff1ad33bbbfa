package studies

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/verdicts")

// goldenCase is one set of records judged by a study's plan.
type goldenCase struct {
	name string
	st   *Study
	plan Plan
	recs []*result.Record
}

// readFixture reads a committed results file and its study's plan as measured, as pltlab view
// judges it.
func readFixture(t *testing.T, path string) goldenCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []*result.Record
	r := result.NewReader(f, path)
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		recs = append(recs, rec)
	}
	st, p, _, ok := Identify(recs)
	if !ok {
		t.Fatalf("%s: no study's records", path)
	}
	return goldenCase{name: "fixture-" + strings.NewReplacer("../", "", "/", "-", ".jsonl", "").Replace(path), st: st, plan: FromRecords(p, recs), recs: recs}
}

// goldenCases are every study at every scale on the records its plan schedules, the committed
// fixtures, and the synthetic records of the judgement tests.
func goldenCases(t *testing.T) []goldenCase {
	var cs []goldenCase
	for _, st := range allStudies() {
		for _, sc := range Scales {
			if sc == Full && (st.Name == Kakhki2017 || st.Name == Muthuraj2024) {
				continue // their full grids take minutes; quick judges them by the same code
			}
			p := st.Plan(sc)
			recs := scheduledRecords(p, "v1")
			if st.Name == Highway2023 {
				recs = highwayScheduled(sc)
			}
			if st.Name == Evolution {
				recs = evolutionScheduled(p)
			}
			cs = append(cs, goldenCase{st.Name + st.Option + "-" + string(sc), st, p, recs})
		}
	}
	for _, path := range []string{"../testdata/carlucci2015-quick-a9b0be5.jsonl", "../view/testdata/highway2023/results.jsonl",
		"../view/testdata/modquic/results.jsonl", "../view/testdata/modquic-shards/shard-0/results.jsonl"} {
		cs = append(cs, readFixture(t, path))
	}
	c := carlucci()
	for name, recs := range map[string][]*result.Record{
		"published": carlucciRecords(2030, 1450, 1140, 1140, 3000, 2500), "today": carlucciRecords(1430, 1100, 1040, 970, 2500, 2500),
		"reversed": carlucciRecords(1000, 1450, 2030, 2030, 2000, 3000), "none": nil,
		"fair3": flowRuns(3, 2.80e6, 0.012, 0.001, [2]float64{1.5e6, 1.3e6}), "starved": flowRuns(3, 1.5e6, 0.08, 0.001, [2]float64{2.6e6, 0.2e6}),
		"fair1": flowRuns(1, 2.80e6, 0.012, 0, [2]float64{1.5e6, 1.3e6}), "bounds": flowRuns(3, 2.80e6, 0.020, 0.001, [2]float64{1.8668e6, 0.9332e6}),
	} {
		cs = append(cs, goldenCase{"carlucci-" + name, c, c.Plan(Quick), recs})
	}
	cs = append(cs, kakhkiGolden(), muthurajGolden(false), muthurajGolden(true))
	hw, _ := Lookup(Highway2023)
	base := slices.Concat(highwayRecs("quic", 1000, 1010, 990), highwayRecs("quic-os-buffers", 500, 510, 490), highwayRecs("tcp-cubic", 2000, 2020, 1980),
		highwayRecs("tcp-cubic-no-offload", 1000, 1010, 990), highwayRecs("quic-no-offload", 900, 910, 890))
	for name, recs := range map[string][]*result.Record{
		"clear": slices.Concat(base, highwayRecs("quic-no-gso", 800, 810, 790)), "more": slices.Concat(base, highwayRecs("quic-no-gso", 400, 404, 396)),
		"flat":  append(highwayRecs("quic", 1000, 1200, 800), highwayRecs("quic-os-buffers", 990, 1190, 810)...),
		"third": append(highwayRecs("quic", 1000, 1020, 980), highwayRecs("ngtcp2-cubic", 330, 335, 325)...),
		"alike": append(highwayRecs("quic", 1000, 1020, 980), highwayRecs("ngtcp2-cubic", 1100, 1120, 1080)...),
		"on":    append(highwayRecs("quic", 1000, 1020, 980), highwayRecs("ngtcp2-cubic", 1500, 2500, 700)...),
	} {
		cs = append(cs, goldenCase{"highway-" + name, hw, hw.Plan(Quick), recs})
	}
	for _, c := range cs {
		for _, r := range c.recs {
			if c.st.Name == Highway2023 && r.Env == nil {
				r.Env = &result.Env{CPUs: 2} // the differences name the host's cores, unrecorded: this host's
			}
		}
	}
	return append(cs, modquicGolden()...)
}

// kakhkiGolden is TestKakhkiHeatmapsAndFindings' grid.
func kakhkiGolden() goldenCase {
	st := kakhki()
	p := st.Plan(Quick)
	obj, lnk := p.Parts[0].Config, p.Parts[1].Config
	recs := gridRecords("objects", obj.Pages, obj.Links, func(p, l string) float64 { return 1300 },
		func(p, l string) float64 {
			if p == "100x5KB" {
				return 1250
			}
			return 1000
		}, func(p, l string) float64 { return 900 })
	recs = append(recs, gridRecords("links", lnk.Pages, lnk.Links,
		func(p, l string) float64 {
			switch {
			case strings.Contains(l, "loss"):
				return 3000
			case strings.HasPrefix(l, "rate=5mbit"):
				return 2000
			}
			return 1000
		}, func(p, l string) float64 { return 1000 }, func(p, l string) float64 { return 950 })...)
	return goldenCase{"kakhki-grid", st, p, recs}
}

// muthurajGolden is TestMuthurajJudgement's records, QUIC twice as slow when slow.
func muthurajGolden(slow bool) goldenCase {
	st := muthuraj()
	var recs []*result.Record
	seed := uint64(100)
	for _, cc := range []string{"cubic", "bbr"} {
		for _, r := range MuthurajReference {
			link, page := GridLink(r.RateMbit, 0, 0), GridPage(1, r.Size)
			q := r.QUICMs
			if slow {
				q *= 2
			}
			recs = append(recs, synth(Muthuraj2024, cc, page, link, "h2", result.Cold, r.TCPBBRMs, 8, seed)...)
			recs = append(recs, synth(Muthuraj2024, cc, page, link, "h3", result.Cold, q, 8, seed+1)...)
			seed += 2
		}
	}
	name := "muthuraj-reference"
	if slow {
		name += "-slow"
	}
	return goldenCase{name, st, st.Plan(Quick), recs}
}

// modquicGolden is TestModQUICJudges' records.
func modquicGolden() []goldenCase {
	st, _ := Lookup(ModQUIC)
	all := func(bbr, cubic, tcp []float64, bbrQ, cubicQ float64, lossyBBR []float64) []*result.Record {
		var recs []*result.Record
		for _, p := range []string{"limited", "sufficient", "lossy"} {
			b := bbr
			if p == "lossy" && lossyBBR != nil {
				b = lossyBBR
			}
			recs = append(recs, modquicRecs(p, "h3:bbr", bbrQ, b...)...)
			recs = append(recs, modquicRecs(p, "h3:cubic", cubicQ, cubic...)...)
			recs = append(recs, modquicRecs(p, "h1:cubic", 40, tcp...)...)
		}
		return recs
	}
	return []goldenCase{
		{"modquic-clear", st, st.Plan(Quick), all([]float64{9.6, 9.65, 9.55}, []float64{8.0, 8.1, 7.9}, []float64{7.0, 7.05, 6.95}, 10, 40, nil)},
		{"modquic-other", st, st.Plan(Quick), all([]float64{9.6, 9.65, 9.55}, []float64{8.0, 8.1, 7.9}, []float64{7.0, 7.05, 6.95}, 60, 40, []float64{5.0, 5.1, 4.9})},
		{"modquic-flat", st, st.Plan(Quick), all([]float64{8.0, 9.0, 7.0}, []float64{8.1, 7.0, 9.1}, []float64{7.0, 8.0, 6.0}, 40, 40, nil)},
	}
}

// TestVerdictsGolden renders every golden case's findings (the console text), findings.json and
// report.md and compares them byte for byte with testdata/verdicts (-update rewrites them): the
// verdicts, their evidence and the formatted numbers of every study stay as they were.
func TestVerdictsGolden(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			e := Evaluate(c.st, c.plan, c.recs)
			js := e.Judge()
			var b bytes.Buffer
			if err := WriteFindings(&b, e, js); err != nil {
				t.Fatal(err)
			}
			b.WriteString("\n--- findings.json\n")
			if err := e.writeJSON(&b, js); err != nil {
				t.Fatal(err)
			}
			b.WriteString("\n--- report.md\n")
			if err := e.writeMarkdown(&b, e.sections(js)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "verdicts", c.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b.Bytes(), want) {
				t.Errorf("%s differs from %s (go test -run TestVerdictsGolden -update rewrites it):\n%s", c.name, path, firstDiff(b.String(), string(want)))
			}
		})
	}
}

// firstDiff is the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, a, b)
		}
	}
	return ""
}
