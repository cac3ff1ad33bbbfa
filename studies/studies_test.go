package studies

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// allStudies is every registered study plus the calibration variant.
func allStudies() []*Study { return append(All(), CarlucciCalibration()) }

func TestPlansValidAndWithinBudget(t *testing.T) {
	var smokeTotal time.Duration
	for _, st := range allStudies() {
		for _, sc := range Scales {
			t.Run(st.Name+st.Option+"/"+string(sc), func(t *testing.T) {
				p := st.Plan(sc)
				if p.Study != st.Name || p.Scale != sc {
					t.Errorf("plan names %s/%s", p.Study, p.Scale)
				}
				if err := p.Validate(); err != nil {
					t.Fatalf("invalid plan: %v", err)
				}
				if (len(p.Parts) == 0 || p.Loads() == 0) && (p.Custom == nil || p.Custom.Runs() == 0) && len(p.Flows) == 0 {
					t.Fatal("plan has no loads and no runs of its own")
				}
				est, err := p.Estimate()
				if err != nil {
					t.Fatal(err)
				}
				switch sc {
				case Smoke:
					smokeTotal += est
					if est > SmokeBudget {
						t.Errorf("smoke estimate %v above %v", est, SmokeBudget)
					}
				case Quick:
					if est > QuickBudget {
						t.Errorf("quick estimate %v above %v", est, QuickBudget)
					}
				}
				if sc != Full && len(p.ScaledDown) == 0 {
					t.Error("a scaled-down plan must say what it scaled down")
				}
				names := map[string]bool{}
				for _, part := range p.Parts {
					if names[part.Name] || part.Name == "" || part.Title == "" {
						t.Errorf("part %q: empty or duplicate name or title", part.Name)
					}
					names[part.Name] = true
				}
			})
		}
	}
	// The integration test runs every study's smoke scale (without the calibration); keep it
	// a few minutes in CI.
	if smokeTotal > 8*time.Minute {
		t.Errorf("all smoke scales together estimated at %v: keep CI fast", smokeTotal)
	}
}

func TestFullIsThePublishedGrid(t *testing.T) {
	k := kakhki().Plan(Full)
	c := k.Parts[0].Config
	if len(c.Links) != 4*3*3 {
		t.Errorf("kakhki full has %d links, want 36 (Table 2: 4 rates x 3 RTTs x 3 losses)", len(c.Links))
	}
	if len(c.Pages) != 6*7-1 {
		t.Errorf("kakhki full has %d pages, want 41 (6 counts x 7 sizes, without the 2 GB page)", len(c.Pages))
	}
	if !slices.ContainsFunc(k.NotRun, func(s string) bool { return strings.Contains(s, "200x10MB") }) {
		t.Errorf("the left-out 200x10MB page is not named: %v", k.NotRun)
	}
	m := muthuraj().Plan(Full)
	if m.Parts[0].Config.Runs != 19 || m.Parts[0].Config.Warmup != 1 {
		t.Errorf("muthuraj full: %d runs after %d warm-ups, want 20 rounds with the first dropped", m.Parts[0].Config.Runs, m.Parts[0].Config.Warmup)
	}
	if m.Parts[0].Config.TCPCC != "cubic" || m.Parts[1].Config.TCPCC != "bbr" {
		t.Errorf("muthuraj parts: %s and %s, want cubic and bbr", m.Parts[0].Config.TCPCC, m.Parts[1].Config.TCPCC)
	}
}

func TestGridLink(t *testing.T) {
	for _, tc := range []struct {
		rate   int
		extra  time.Duration
		loss   float64
		want   string
		rtt    time.Duration
		perDir float64
	}{
		{5, 0, 0, "rate=5mbit,rtt=36ms,queue=2bdp", 36 * time.Millisecond, 0},
		{100, 100 * time.Millisecond, 1, "rate=100mbit,rtt=136ms,queue=2bdp,loss=0.5%", 136 * time.Millisecond, 0.005},
		{10, 50 * time.Millisecond, 0.1, "rate=10mbit,rtt=86ms,queue=2bdp,loss=0.05%", 86 * time.Millisecond, 0.0005},
	} {
		t.Run(tc.want, func(t *testing.T) {
			got := GridLink(tc.rate, tc.extra, tc.loss)
			if got != tc.want {
				t.Fatalf("GridLink = %q, want %q", got, tc.want)
			}
			sp, err := linkspec.Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			if sp.RTT != tc.rtt || math.Abs(sp.Loss-tc.perDir) > 1e-12 {
				t.Errorf("parsed rtt %v loss %v, want %v and %v per direction", sp.RTT, sp.Loss, tc.rtt, tc.perDir)
			}
		})
	}
}

func TestFindingsDefined(t *testing.T) {
	for _, st := range allStudies() {
		ids := map[string]bool{}
		if len(st.Findings) == 0 {
			t.Errorf("%s has no findings", st.Name)
		}
		for _, f := range st.Findings {
			if f.ID == "" || f.Claim == "" || f.Source == "" || f.Criterion == "" || f.Judge == nil || ids[f.ID] {
				t.Errorf("%s finding %q: empty field or duplicate id", st.Name, f.ID)
			}
			ids[f.ID] = true
		}
		if st.Citation == "" || st.Title == "" || st.Sections == nil || st.Differences == nil {
			t.Errorf("%s: citation, title, sections and differences are required", st.Name)
		}
	}
}

func TestParseScaleAndLookup(t *testing.T) {
	for _, s := range []string{"smoke", "quick", "full"} {
		if sc, err := ParseScale(s); err != nil || string(sc) != s {
			t.Errorf("ParseScale(%q) = %q, %v", s, sc, err)
		}
	}
	if _, err := ParseScale("huge"); err == nil || !strings.Contains(err.Error(), `"huge"`) || !strings.Contains(err.Error(), "smoke, quick, full") {
		t.Errorf("ParseScale(huge) error %v: must name the value and the accepted ones", err)
	}
	if _, err := Lookup("nope2020"); err == nil || !strings.Contains(err.Error(), "carlucci2015, kakhki2017, muthuraj2024") {
		t.Errorf("Lookup error %v: must list the studies", err)
	}
	if st, err := Lookup("kakhki2017"); err != nil || st.Name != "kakhki2017" {
		t.Errorf("Lookup(kakhki2017) = %v, %v", st, err)
	}
}

// synth makes n valid loads of one arm around meanMs (+-5 %, seeded) for a part's experiment.
func synth(study, part, page, link, proto string, mode result.Mode, meanMs float64, n int, seed uint64) []*result.Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []*result.Record
	for i := range n {
		out = append(out, &result.Record{V: 1, Experiment: PartExperiment(study, part), Run: i, Mode: mode, Protocol: proto,
			ObservedProtocol: proto, Page: result.Page{Spec: page}, Link: result.Link{Spec: link}, Valid: true,
			PLTMs: meanMs * (0.95 + 0.1*rng.Float64())})
	}
	return out
}

// carlucciRecords are synthetic lossless (and lossy) loads with the given medians in ms.
func carlucciRecords(h1, h2, h3, h3w, lossyH2, lossyH3 float64) []*result.Record {
	var recs []*result.Record
	const n = 15
	for i, a := range []struct {
		proto string
		mode  result.Mode
		ms    float64
	}{{"h1", result.Cold, h1}, {"h2", result.Cold, h2}, {"h3", result.Cold, h3}, {"h3", result.Warm, h3w}} {
		recs = append(recs, synth("carlucci2015", "lossless", "carlucci2015", "carlucci2015", a.proto, a.mode, a.ms, n, uint64(i))...)
	}
	for _, l := range CarlucciLossyLinks {
		recs = append(recs, synth("carlucci2015", "lossy", "carlucci2015", l, "h2", result.Cold, lossyH2, n, 11)...)
		recs = append(recs, synth("carlucci2015", "lossy", "carlucci2015", l, "h3", result.Cold, lossyH3, n, 12)...)
	}
	return recs
}

// verdicts judges recs as the quick plan of st and returns the verdict per finding ID.
func verdicts(st *Study, sc Scale, recs []*result.Record) map[string]Judgement {
	return verdictsOn(st, sc, Host{}, recs)
}

// verdictsOn is verdicts of a run planned on host h (a machine without ngtcp2, say).
func verdictsOn(st *Study, sc Scale, h Host, recs []*result.Record) map[string]Judgement {
	e := Evaluate(st, st.PlanOn(sc, h), recs)
	out := map[string]Judgement{}
	for i, j := range e.Judge() {
		out[st.Findings[i].ID] = j
	}
	return out
}

func TestCarlucciJudgement(t *testing.T) {
	st := carlucci()
	for _, tc := range []struct {
		name string
		recs []*result.Record
		want map[string]Verdict
	}{
		{"as published", carlucciRecords(2030, 1450, 1140, 1140, 3000, 2500), map[string]Verdict{
			"lossless-vs-http": Reproduced, "lossless-order": Reproduced, "lossless-ratios": Reproduced, "lossy": Reproduced,
			"fec": NotTestable, "safe-alone": NotRun, "safe-sharing": NotRun}},
		{"today's ratios", carlucciRecords(1430, 1100, 1040, 970, 2500, 2500), map[string]Verdict{
			"lossless-vs-http": Reproduced, "lossless-order": Reproduced, "lossless-ratios": Contradicted, "lossy": Inconclusive}},
		{"reversed", carlucciRecords(1000, 1450, 2030, 2030, 2000, 3000), map[string]Verdict{
			"lossless-vs-http": Contradicted, "lossless-order": Contradicted, "lossy": Contradicted}},
		{"no records", nil, map[string]Verdict{"lossless-vs-http": NotRun, "lossless-order": NotRun, "lossy": NotRun, "fec": NotTestable}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := verdicts(st, Quick, tc.recs)
			for id, want := range tc.want {
				if got[id].Verdict != want {
					t.Errorf("%s: %s (%s), want %s", id, got[id].Verdict, got[id].Evidence, want)
				}
			}
		})
	}
}

func TestPctDiffAndSignificance(t *testing.T) {
	if got := PctDiff(150, 100); got != 50 {
		t.Errorf("PctDiff(150, 100) = %v, want 50 (QUIC faster is positive)", got)
	}
	if got := PctDiff(100, 200); got != -50 {
		t.Errorf("PctDiff(100, 200) = %v, want -50", got)
	}
	if !math.IsNaN(PctDiff(1, 0)) || !math.IsNaN(PctDiff(math.NaN(), 1)) {
		t.Error("PctDiff must be NaN for a zero QUIC mean or a NaN input")
	}
	clear := CompareMeans([]float64{200, 201, 199, 202, 198}, []float64{100, 101, 99, 102, 98})
	if !clear.Significant || math.Abs(clear.Pct-100) > 1e-9 || !(clear.P < 0.01) {
		t.Errorf("clear difference: %+v", clear)
	}
	noisy := CompareMeans([]float64{100, 300, 150, 250}, []float64{120, 280, 170, 200})
	if noisy.Significant {
		t.Errorf("noisy difference marked significant: %+v", noisy)
	}
	short := CompareMeans([]float64{100}, []float64{50, 60})
	if short.Significant || !math.IsNaN(short.P) {
		t.Errorf("one load cannot be significant: %+v", short)
	}
	if s := noisy.String(); !strings.Contains(s, "n.s.") {
		t.Errorf("String() of a non-significant diff = %q, want n.s.", s)
	}
	// One load a side is not tested at all: it is not "not significant".
	if s, want := short.String(), "+81.8 % (p=n/a, too few loads to test)"; s != want {
		t.Errorf("String() of an untested diff = %q, want %q", s, want)
	}
	if s, want := gainText(short), "+81.8 % (100 vs 55 Mbit/s, p=n/a, too few runs to test)"; s != want {
		t.Errorf("gainText of an untested diff = %q, want %q", s, want)
	}
}

// gridRecords are synthetic kakhki loads: tcp and quic means per (page, link).
func gridRecords(part string, pages, links []string, tcp, quic, quic0 func(page, link string) float64) []*result.Record {
	var recs []*result.Record
	seed := uint64(1)
	for _, p := range pages {
		for _, l := range links {
			recs = append(recs, synth(Kakhki2017, part, p, l, "h2", result.Cold, tcp(p, l), 6, seed)...)
			recs = append(recs, synth(Kakhki2017, part, p, l, "h3", result.Cold, quic(p, l), 6, seed+1)...)
			recs = append(recs, synth(Kakhki2017, part, p, l, "h3", result.Warm, quic0(p, l), 6, seed+2)...)
			seed += 3
		}
	}
	return recs
}

func TestKakhkiHeatmapsAndFindings(t *testing.T) {
	st := kakhki()
	plan := st.Plan(Quick)
	obj, lnk := plan.Parts[0].Config, plan.Parts[1].Config
	lowRate := func(l string) bool { return strings.HasPrefix(l, "rate=5mbit") }
	recs := gridRecords("objects", obj.Pages, obj.Links,
		func(p, l string) float64 { return 1300 },
		func(p, l string) float64 {
			if p == "100x5KB" {
				return 1250 // QUIC cold barely faster: the edge comes from 0-RTT
			}
			return 1000
		},
		func(p, l string) float64 { return 900 })
	recs = append(recs, gridRecords("links", lnk.Pages, lnk.Links,
		func(p, l string) float64 {
			switch {
			case strings.Contains(l, "loss"):
				return 3000
			case lowRate(l):
				return 2000
			}
			return 1000
		},
		func(p, l string) float64 { return 1000 },
		func(p, l string) float64 { return 950 })...)
	e := Evaluate(st, plan, recs)
	cells := e.cells(kakhkiGridParts...)
	if len(cells) != len(obj.Pages)+len(lnk.Links) {
		t.Fatalf("%d cells, want %d", len(cells), len(obj.Pages)+len(lnk.Links))
	}
	lm := LinkMaps(cells)
	if len(lm) != 2 { // one link with 6 pages, cold and 0-RTT
		t.Fatalf("%d per-link maps, want 2", len(lm))
	}
	if len(lm[0].XTicks) != 2 || len(lm[0].YTicks) != 3 || len(lm[0].Cells) != 6 || lm[0].Range != 100 {
		t.Errorf("per-link map: x %v y %v, %d cells, range %v", lm[0].XTicks, lm[0].YTicks, len(lm[0].Cells), lm[0].Range)
	}
	pm := PageMaps(cells)
	// 10x100KB: loss-free 2 rates x 2 RTTs and lossy 2 rates x 1 RTT; cold and 0-RTT each. The
	// objects part's single link gives no per-page map.
	if len(pm) != 4 {
		t.Fatalf("%d per-page maps, want 4", len(pm))
	}
	got := verdicts(st, Quick, recs)
	for id, want := range map[string]Verdict{"quic-faster": Reproduced, "low-rate-loss": Reproduced, "0rtt-small": Reproduced, "mobile": NotRun} {
		if got[id].Verdict != want {
			t.Errorf("%s: %s (%s), want %s", id, got[id].Verdict, got[id].Evidence, want)
		}
	}
	if _, err := linkspec.Parse(KakhkiReorderLinks[0]); err != nil && got["reordering"].Verdict != NotTestable {
		t.Errorf("reordering without delayvar: %s, want not testable", got["reordering"].Verdict)
	}
}

func TestCalibrationLoss(t *testing.T) {
	paper := [3]float64{2030, 1450, 1140}
	if l := CalibrationLoss(paper, paper); l != 0 {
		t.Errorf("loss of the paper itself = %v, want 0", l)
	}
	// All three 10 % too slow: ratios exact, absolute term only.
	slow := [3]float64{2233, 1595, 1254}
	want := sq(math.Log(1.1)) / 2
	if l := CalibrationLoss(slow, paper); math.Abs(l-want) > 1e-4 {
		t.Errorf("loss of a uniform 10 %% slowdown = %v, want %v", l, want)
	}
	// Too slow and too fast by the same factor cost the same (log error).
	up := [3]float64{2030 * 1.2, 1450, 1140}
	down := [3]float64{2030 / 1.2, 1450, 1140}
	if a, b := CalibrationLoss(up, paper), CalibrationLoss(down, paper); math.Abs(a-b) > 1e-12 {
		t.Errorf("loss not symmetric in log: %v vs %v", a, b)
	}
	if !math.IsNaN(CalibrationLoss([3]float64{0, 1, 1}, paper)) || !math.IsNaN(CalibrationLoss([3]float64{math.NaN(), 1, 1}, paper)) {
		t.Error("a missing median must give NaN")
	}
	cs := RankCandidates([]Candidate{{Page: "b", Loss: 0.2}, {Page: "nan", Loss: math.NaN()}, {Page: "a", Loss: 0.01}, {Page: "c", Loss: 0.2}})
	var order []string
	for _, c := range cs {
		order = append(order, c.Page)
	}
	if strings.Join(order, ",") != "a,b,c,nan" {
		t.Errorf("ranking %v, want a,b,c,nan", order)
	}
	r := Candidate{Medians: [3]float64{2233, 1450, 1140}}.Residuals(paper)
	if math.Abs(r[0]-10) > 0.01 || r[1] != 0 || math.Abs(r[3]-(100*(1/1.1-1))) > 0.01 {
		t.Errorf("residuals %v", r)
	}
}

func TestCalibrationPagesAndRanking(t *testing.T) {
	pgs := CalibrationPages([]int{10, 30}, []int64{300_000})
	if strings.Join(pgs, ",") != "10x30KB,30x10KB" {
		t.Fatalf("pages %v", pgs)
	}
	st := CarlucciCalibration()
	plan := st.Plan(Smoke)
	var recs []*result.Record
	// 30x10KB matches the paper; 10x30KB has too small an HTTP/1.1 penalty.
	for page, ms := range map[string][3]float64{"30x10KB": {2030, 1450, 1140}, "10x30KB": {1400, 1300, 1200}} {
		for i, proto := range []string{"h1", "h2", "h3"} {
			recs = append(recs, synth("carlucci2015", "calibrate", page, "carlucci2015", proto, result.Cold, ms[i], 5, uint64(i))...)
		}
	}
	e := Evaluate(st, plan, recs)
	cs := e.Candidates()
	if len(cs) != 2 || cs[0].Page != "30x10KB" || !cs[0].Ordered {
		t.Fatalf("candidates %+v", cs)
	}
	got := verdicts(st, Smoke, recs)
	if got["composition"].Verdict != Reproduced || got["order-robust"].Verdict != Reproduced {
		t.Errorf("verdicts %+v", got)
	}
	// One load per protocol and candidate is noise: no verdict.
	var one []*result.Record
	for _, r := range recs {
		if r.Run == 0 {
			one = append(one, r)
		}
	}
	got = verdicts(st, Smoke, one)
	if got["composition"].Verdict != NotRun || got["order-robust"].Verdict != NotRun {
		t.Errorf("one load per candidate: verdicts %+v, want not run", got)
	}
}

func TestWriteReportOpensWithFindings(t *testing.T) {
	dir := t.TempDir()
	st := carlucci()
	e := Evaluate(st, st.Plan(Smoke), carlucciRecords(2030, 1450, 1140, 1140, 3000, 2500))
	js, err := WriteReport(dir, e)
	if err != nil {
		t.Fatal(err)
	}
	if len(js) != len(st.Findings) {
		t.Fatalf("%d judgements for %d findings", len(js), len(st.Findings))
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(md)
	first := strings.Index(s, "\n## ")
	if first < 0 || !strings.HasPrefix(s[first:], "\n## Findings") {
		t.Errorf("report.md does not open with the findings table:\n%.600s", s)
	}
	for _, want := range []string{"| h3 warm | QUIC (0-RTT) | 1.14 s |", "## Lossy channel", "## What differs from the published testbed",
		"## Scale: what was run and what was scaled down", "## Safe deployment", "FEC"} {
		if !strings.Contains(s, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, f := range append(slices.Clone(ReportFiles), "lossless-plt.svg", "lossless-plt.png", "lossless/report.md", "lossy/report.html") {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s missing or empty: %v", f, err)
		}
	}
}

func TestMuthurajJudgement(t *testing.T) {
	st := muthuraj()
	plan := st.Plan(Quick)
	var recs []*result.Record
	seed := uint64(100)
	for _, cc := range []string{"cubic", "bbr"} {
		for _, r := range MuthurajReference {
			link, page := GridLink(r.RateMbit, 0, 0), GridPage(1, r.Size)
			recs = append(recs, synth(Muthuraj2024, cc, page, link, "h2", result.Cold, r.TCPBBRMs, 8, seed)...)
			recs = append(recs, synth(Muthuraj2024, cc, page, link, "h3", result.Cold, r.QUICMs, 8, seed+1)...)
			seed += 2
		}
	}
	got := verdicts(st, Quick, recs)
	// The quick plan measures 10 and 100 Mbit/s. With 8 loads an arm the published differences
	// of the 10 MB pages, which the authors found equal (+0.1 % and +1.4 %), are not shown equal
	// within 5 % (intervals -7.3..+2.5 and -5.6..+4.8 %): inconclusive, not reproduced on the
	// absence of a difference.
	for id, want := range map[string]Verdict{"reference-direction": Inconclusive, "small-objects": Reproduced, "bbr-in-quic": NotRun} {
		if got[id].Verdict != want {
			t.Errorf("%s: %s (%s), want %s", id, got[id].Verdict, got[id].Evidence, want)
		}
	}
	if len(plan.Parts) != 4 || plan.Parts[1].Config.TCPCC != "bbr" || plan.Parts[3].Config.QUICCC != "bbr" || plan.Parts[3].Config.H3Stack != server.StackNgtcp2 {
		t.Fatalf("parts %+v", plan.Parts)
	}
	// QUIC twice as slow everywhere: the tests exclude the claims.
	for _, r := range recs {
		if r.Protocol == "h3" {
			r.PLTMs *= 2
		}
	}
	got = verdicts(st, Quick, recs)
	if got["reference-direction"].Verdict != Contradicted || got["small-objects"].Verdict != Contradicted {
		t.Errorf("QUIC twice as slow: %+v", got)
	}
}

func TestPlanResumed(t *testing.T) {
	plan := muthuraj().Plan(Smoke)
	cs := plan.Configs(RunOptions{})
	// The interrupted run made the first 3 loads of the first part only.
	var recs []*result.Record
	for i, j := range experiment.Order(cs[0])[:3] {
		recs = append(recs, &result.Record{V: 1, Experiment: cs[0].Name, Run: i, Protocol: j.Arm.Protocol, Mode: j.Arm.Mode,
			Page: result.Page{Spec: cs[0].Pages[j.Page]}, Link: result.Link{Spec: cs[0].Links[j.Link]}, Warmup: j.Warmup, Valid: true, PLTMs: 100})
	}
	pr, err := plan.Prepare(RunOptions{Resume: recs})
	if err != nil {
		t.Fatal(err)
	}
	if r0, r1 := len(pr.Parts[0].Left()), len(pr.Parts[1].Left()); r0 != len(experiment.Order(cs[0]))-3 || r1 != len(experiment.Order(cs[1])) {
		t.Errorf("remaining %d and %d loads", r0, r1)
	}
	// A record that is not the scheduled load: refused, naming the part.
	recs[2].Protocol = "h1"
	if _, err := plan.Prepare(RunOptions{Resume: recs}); err == nil || !strings.Contains(err.Error(), "part cubic") {
		t.Errorf("mismatched records: error %v, want one naming part cubic", err)
	}
}

func TestCarlucciRatiosNeedBoundedCI(t *testing.T) {
	recs := carlucciRecords(2030, 1450, 1140, 1140, 3000, 2500)
	n := 0
	for _, r := range recs {
		if r.Experiment == "carlucci2015/lossless" && r.Protocol == "h1" && n < 8 {
			r.TimedOut, r.DeadlineMs, r.PLTMs = true, 30000, 30000
			n++
		}
	}
	if got := verdicts(carlucci(), Quick, recs)["lossless-ratios"]; got.Verdict != NotRun {
		t.Errorf("ratios with half of h1 censored: %s (%s), want not run", got.Verdict, got.Evidence)
	}
}

// flowRecs are one run's flow lines of a mix: goodputs in bit/s and loss ratios per flow, on the
// carlucci2015 link (3 Mbit/s), each flow with a 10 s series of 100 ms bins around its goodput
// (a sawtooth of +-sway of it with period 3 s, as a congestion-controlled flow's, plus seeded
// noise of 2 %), steady from 2 s.
func flowRecs(run int, specs []string, goodputs, losses []float64, jain float64, sway float64) []*result.Record {
	var out []*result.Record
	sum := 0.0
	for _, g := range goodputs {
		sum += g
	}
	rng := rand.New(rand.NewPCG(uint64(run)+7, uint64(len(specs))))
	for i, s := range specs {
		proto, cc, _ := strings.Cut(s, ":")
		series := make([]float64, 100)
		for b := range series {
			phase := float64(b%30)/30 - 0.5
			if len(specs) > 1 && i == 1 {
				phase = -phase // sharing flows trade the bottleneck
			}
			series[b] = goodputs[i] * (1 + 2*sway*phase + 0.02*rng.NormFloat64())
		}
		out = append(out, &result.Record{V: 1, Kind: result.KindFlow, Experiment: "carlucci2015/flows", Run: run, Protocol: proto, CC: cc, Valid: true,
			Link: result.Link{Spec: "carlucci2015", DownBps: 3_000_000},
			Flow: &result.Flow{FlowIndex: i, Flows: len(specs), Mix: strings.Join(specs, "+"), GoodputBps: goodputs[i], LossRatio: losses[i],
				Utilization: sum / 3e6, Jain: jain, BinMs: 100, Series: series, SteadyFromS: 2, SteadyToS: 10, JainFromS: 2, JainToS: 10}})
	}
	return out
}

// flowRuns are runs of the three carlucci2015 mixes: TCP alone, QUIC alone (goodput and loss
// ratio given, the loss ratio varying by +-spread between runs) and the two sharing (goodputs
// given).
func flowRuns(runs int, quicAlone, quicLoss, spread float64, shared [2]float64) []*result.Record {
	var out []*result.Record
	for r := range runs {
		d := spread * float64(r-1) // -spread, 0, +spread
		j := (shared[0] + shared[1]) * (shared[0] + shared[1]) / (2 * (shared[0]*shared[0] + shared[1]*shared[1]))
		out = slices.Concat(out,
			flowRecs(r, []string{"h2:cubic"}, []float64{2.85e6}, []float64{0.010 - d}, 1, 0.1),
			flowRecs(r, []string{"h3:newreno"}, []float64{quicAlone}, []float64{quicLoss + d}, 1, 0.1),
			flowRecs(r, []string{"h3:newreno", "h2:cubic"}, []float64{shared[0], shared[1]}, []float64{0.02, 0.02}, j, 0.1))
	}
	return out
}

// TestCarlucciFlowsJudgement: the flow criteria are judged by intervals, reproduced and
// contradicted alike, and a value on its bound or without an interval is inconclusive.
func TestCarlucciFlowsJudgement(t *testing.T) {
	fair := flowRuns(3, 2.80e6, 0.012, 0.001, [2]float64{1.5e6, 1.3e6})
	ms := readFlowResults(fair, "carlucci2015/flows")
	if len(ms) != 9 || len(ms[2].Flows) != 2 || math.Abs(ms[2].Flows[0].Share-1.5/2.8) > 1e-9 || math.Abs(ms[1].Flows[0].Utilization-2.8/3) > 1e-9 ||
		len(ms[1].Flows[0].Steady) != 80 || len(ms[2].Common) != 2 {
		t.Fatalf("flow results %+v", ms)
	}
	for _, tc := range []struct {
		name         string
		recs         []*result.Record
		alone, share Verdict
	}{
		{"fair, 3 runs", fair, Reproduced, Reproduced},
		// QUIC alone at half the goodput with 8 % loss; sharing, TCP starved (Jain 0.57).
		{"starved, 3 runs", flowRuns(3, 1.5e6, 0.08, 0.001, [2]float64{2.6e6, 0.2e6}), Contradicted, Contradicted},
		// One run: goodput and Jain have their block interval, the loss ratio none.
		{"fair, 1 run", flowRuns(1, 2.80e6, 0.012, 0, [2]float64{1.5e6, 1.3e6}), Inconclusive, Reproduced},
		// The loss difference on its bound (QUIC 0.0200 against TCP 0.0100 + 1 pp), and Jain's
		// index on its bound (0.9: shares 0.67 / 0.33).
		{"on the bounds", flowRuns(3, 2.80e6, 0.020, 0.001, [2]float64{1.8668e6, 0.9332e6}), Inconclusive, Inconclusive},
	} {
		got := verdicts(carlucci(), Quick, tc.recs)
		if got["safe-alone"].Verdict != tc.alone || got["safe-sharing"].Verdict != tc.share {
			t.Errorf("%s: safe-alone %s (%s), safe-sharing %s (%s); want %s, %s", tc.name, got["safe-alone"].Verdict, got["safe-alone"].Evidence,
				got["safe-sharing"].Verdict, got["safe-sharing"].Evidence, tc.alone, tc.share)
		}
	}
}

// TestFlowRunsLeftOut: a flow run with a flow that is not valid (the emulator late) is left out
// of the part's results whole, its partner flow too, and the flows section says which and why;
// a starved flow stays, a fact of the mix. Before, readFlowResults pooled invalid flows.
func TestFlowRunsLeftOut(t *testing.T) {
	recs := flowRuns(3, 2.80e6, 0.012, 0.001, [2]float64{1.5e6, 1.3e6})
	var shared []*result.Record
	for _, r := range recs {
		if r.Flows == 2 {
			shared = append(shared, r)
		}
	}
	shared[0].Valid, shared[0].InvalidReason = false, "emulator late: a packet left 9.10 ms after its time (down), bound 5.00 ms"
	shared[3].Valid, shared[3].Starved, shared[3].GoodputBps = false, true, 0
	ms := readFlowResults(recs, "carlucci2015/flows")
	two := 0
	for _, m := range ms {
		if len(m.Flows) == 2 {
			two++
			if m.Run == shared[0].Run {
				t.Errorf("run %d of the shared mix kept with an invalid flow: %+v", m.Run, m)
			}
		}
	}
	if len(ms) != 8 || two != 2 {
		t.Fatalf("%d results, %d shared; want 8, 2 (the starved run kept)", len(ms), two)
	}
	e := Evaluate(carlucci(), carlucci().Plan(Quick), recs)
	text := strings.Join(carlucciFlowSection(e).Text, " ")
	if !strings.Contains(text, "1 run(s) left out") || !strings.Contains(text, "h3:newreno+h2:cubic run 0, emulator late: a packet left 9.10 ms") {
		t.Errorf("flows section: %s", text)
	}
}

// TestDefaultScaleJudgesEveryFinding checks every study's default scale against every
// finding's minimum: records made exactly as the plan schedules them (warm-ups included, every
// load valid, flows of every mix) must leave no finding "not run". Before, muthuraj2024 quick
// left 4 measured loads per arm, under MinLoads, and judged nothing.
func TestDefaultScaleJudgesEveryFinding(t *testing.T) {
	for _, st := range All() {
		t.Run(st.Name, func(t *testing.T) {
			plan := st.Plan(st.DefaultScale)
			recs := scheduledRecords(plan, "")
			if st.Name == Highway2023 { // its own schedule: every arm on every path, every run
				recs = append(recs, highwayScheduled(plan.Scale)...)
			}
			if st.Name == Evolution { // its own schedule: every case against every server
				recs = append(recs, evolutionScheduled(plan)...)
			}
			if !Complete(plan, recs) {
				t.Fatal("the records of every scheduled load are not a complete run")
			}
			e := Evaluate(st, plan, recs)
			for i, j := range e.Judge() {
				if j.Verdict == NotRun {
					t.Errorf("finding %d (%s) not run at the default scale %s: %s", i+1, st.Findings[i].ID, plan.Scale, j.Evidence)
				}
				if j.Verdict != NotTestable && len(j.Cells) == 0 && !strings.HasPrefix(st.Findings[i].ID, "safe-") {
					t.Errorf("finding %d (%s) names no cell", i+1, st.Findings[i].ID)
				}
			}
		})
	}
}

// TestDecidePlan: the inconclusive lossy finding yields one part per undecided cell, measuring
// the loads per arm still missing with the part's settings and a seed of its own, named so that
// Evaluate pools its loads with the part's; the pooled judgement warns about the second look.
func TestDecidePlan(t *testing.T) {
	st := carlucci()
	recs := carlucciRecords(1430, 1100, 1040, 970, 1000, 990)
	e := Evaluate(st, FromRecords(st.Plan(Quick), recs), recs)
	j := e.Judge()[3]
	if j.Verdict != Inconclusive || len(j.Needs) == 0 {
		t.Fatalf("lossy: %s (%s), %d needs", j.Verdict, j.Evidence, len(j.Needs))
	}
	dp, skipped := DecidePlan(e)
	if len(dp.Parts)+len(skipped) != len(j.Needs) {
		t.Fatalf("%d parts + %d skipped for %d needs", len(dp.Parts), len(skipped), len(j.Needs))
	}
	for i, p := range dp.Parts {
		c := p.Config
		if !strings.HasPrefix(p.Name, "lossy/decide/") || len(c.Links) != 1 || len(c.Arms) != 2 || c.Runs <= 0 || c.TLS != "1.2" || c.Seed == experiment.DefaultSeed {
			t.Errorf("decide part %d: %s %+v", i, p.Name, c)
		}
	}
	if len(dp.Parts) == 0 {
		t.Fatal("nothing to decide")
	}
	// Loads made by the decide plan pool with the lossy part's and are warned about.
	c := dp.Parts[0].Config
	more := synth(Carlucci2015, dp.Parts[0].Name, c.Pages[0], c.Links[0], "h2", result.Cold, 1000, c.Runs, 77)
	more = append(more, synth(Carlucci2015, dp.Parts[0].Name, c.Pages[0], c.Links[0], "h3", result.Cold, 990, c.Runs, 78)...)
	e2 := Evaluate(st, FromRecords(st.Plan(Quick), recs), append(slices.Clone(recs), more...))
	g := e2.Part("lossy").Group(c.Pages[0], c.Links[0], "h2", result.Cold)
	if g == nil || len(g.Sample) != 15+c.Runs {
		t.Errorf("pooled h2 group: %+v, want %d loads", g, 15+c.Runs)
	}
	if w := strings.Join(e2.Warnings(), "\n"); !strings.Contains(w, "added by `reproduce --decide`") {
		t.Errorf("no warning about the added loads: %q", w)
	}
}

// TestCompleteOlderRecords: records without the scheduled field (older pltlab) are complete
// when they hold every load their own settings schedule; one load fewer is not.
func TestCompleteOlderRecords(t *testing.T) {
	st := carlucci()
	plan := st.Plan(Smoke)
	plan.Flows = nil
	var recs []*result.Record
	for _, c := range plan.Configs(RunOptions{}) {
		for i, j := range experiment.Order(c) {
			recs = append(recs, &result.Record{V: 1, Experiment: c.Name, Run: i, Mode: j.Arm.Mode, Protocol: j.Arm.Protocol,
				Page: result.Page{Spec: c.Pages[j.Page]}, Link: result.Link{Spec: c.Links[j.Link]}, Warmup: j.Warmup, Valid: true, PLTMs: 1000})
		}
	}
	if !Complete(plan, recs) {
		t.Error("every scheduled load present, no scheduled field: not complete")
	}
	if Complete(plan, recs[1:]) {
		t.Error("a load missing: complete")
	}
}
