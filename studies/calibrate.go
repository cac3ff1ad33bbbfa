package studies

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
)

// Calibration grid of `reproduce carlucci2015 --calibrate`: image-only pages of COUNT objects
// of equal size summing to TOTAL bytes. Totals span the range the paper's PLTs allow at
// 3 Mbit/s (QUIC's 1.14 s leaves at most ~400 KB of serialization after its round trips; 150 KB
// would leave SPDY far above its floor), counts from one object per connection-free request
// round to many small objects.
var (
	calibrateCounts     = []int{5, 10, 30, 60}
	calibrateTotals     = []int64{200_000, 300_000, 450_000, 600_000}
	calibrateFullCounts = []int{1, 2, 5, 10, 20, 30, 50, 100}
	calibrateFullTotals = []int64{150_000, 200_000, 250_000, 300_000, 350_000, 400_000, 500_000, 600_000}
)

// calibrateArms are the arms whose PLTs are fitted: the paper's three protocols, cold.
var calibrateArms = experiment.CrossArms([]string{"h1", "h2", "h3"}, []result.Mode{result.Cold})

// CalibrationPages returns the candidate page specs of a counts x totals grid ("30x10KB"; the
// object size is total/count rounded down, so the total may fall a few bytes short).
func CalibrationPages(counts []int, totals []int64) []string {
	var out []string
	for _, t := range totals {
		for _, c := range counts {
			s := pages.Spec{Items: []pages.Item{{Count: c, Size: t / int64(c)}}}.String()
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// CalibrationLoss is the loss of a candidate against the paper: the mean squared log error of
// the three PLTs plus the mean squared log error of the two ratios to HTTP/1.1, weighted
// equally,
//
//	L = 1/2 mean_p ln(ours_p / paper_p)^2 + 1/2 mean_{p=h2,h3} ln((ours_p/ours_h1) / (paper_p/paper_h1))^2,
//
// so a candidate must match both the absolute times (set by the bytes) and the protocols'
// relative speed (set by the object count); log errors make 10 % too slow and 10 % too fast
// cost the same. ours and paper are PLTs in ms in the order h1, h2, h3; NaN when any is not
// positive.
func CalibrationLoss(ours, paper [3]float64) float64 {
	for i := range 3 {
		if !(ours[i] > 0) || !(paper[i] > 0) {
			return math.NaN()
		}
	}
	var abs, rel float64
	for i := range 3 {
		abs += sq(math.Log(ours[i] / paper[i]))
	}
	for i := 1; i < 3; i++ {
		rel += sq(math.Log((ours[i] / ours[0]) / (paper[i] / paper[0])))
	}
	return abs/6 + rel/4
}

func sq(x float64) float64 { return x * x }

// Candidate is one calibration page with its measured medians and loss.
type Candidate struct {
	// Page is the page spec.
	Page string
	// Objects and Bytes describe it.
	Objects int
	Bytes   int64
	// Medians are our median PLTs in ms, h1, h2, h3 (NaN where missing).
	Medians [3]float64
	// Loss is CalibrationLoss of Medians against the paper (NaN when incomplete).
	Loss float64
	// Ordered is true when the medians keep the paper's order h1 > h2 > h3.
	Ordered bool
	// N is the fewest loads behind any of the three medians.
	N int
}

// CalibrateMinLoads is the fewest loads per protocol and candidate for a calibration verdict:
// the sweep is affordable only with few loads (3 at quick scale), and one load is noise.
const CalibrateMinLoads = 3

// Residuals returns the candidate's relative residuals in percent: the three PLTs
// (ours/paper - 1) and the two ratios to h1.
func (c Candidate) Residuals(paper [3]float64) [5]float64 {
	var r [5]float64
	for i := range 3 {
		r[i] = 100 * (c.Medians[i]/paper[i] - 1)
	}
	for i := 1; i < 3; i++ {
		r[2+i] = 100 * ((c.Medians[i]/c.Medians[0])/(paper[i]/paper[0]) - 1)
	}
	return r
}

// RankCandidates sorts candidates by ascending loss (NaN last, then by page), in place, and
// returns them.
func RankCandidates(cs []Candidate) []Candidate {
	slices.SortStableFunc(cs, func(a, b Candidate) int {
		an, bn := math.IsNaN(a.Loss), math.IsNaN(b.Loss)
		switch {
		case an && !bn:
			return 1
		case bn && !an:
			return -1
		}
		return cmp.Or(cmp.Compare(a.Loss, b.Loss), cmp.Compare(a.Page, b.Page))
	})
	return cs
}

// carlucciPaperPLTs are the paper's HTTP/1.1, SPDY and QUIC PLTs in ms.
func carlucciPaperPLTs() [3]float64 {
	var out [3]float64
	for i, row := range CarlucciPaper[:3] {
		out[i] = row.PaperMs
	}
	return out
}

// CarlucciCalibration is the study run by `reproduce carlucci2015 --calibrate`: the candidate
// pages over the paper's link, ranked by CalibrationLoss against the paper's three PLTs.
func CarlucciCalibration() *Study {
	return &Study{
		Name:         Carlucci2015,
		Title:        "Carlucci et al., ACM SAC 2015: calibrating the unpublished page",
		Option:       "--calibrate",
		Citation:     carlucciCitation,
		DefaultScale: Quick,
		plan:         calibrationPlan,
		Findings:     calibrationFindings(),
		Sections:     calibrationSections,
		Differences:  carlucciDifferences,
		Console:      calibrationConsole,
	}
}

// calibrationConsole prints the ten best candidates.
func calibrationConsole(w io.Writer, e *Support) error {
	cs := e.Candidates()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tpage\th1\th2\th3\th2/h1\th3/h1\tloss L\tloads")
	fmt.Fprintln(tw, "paper\t-\t2.03 s\t1.45 s\t1.14 s\t0.71\t0.56\t-\t-")
	for i, c := range cs[:min(10, len(cs))] {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", i+1, c.Page, quantity.FormatSec(c.Medians[0], 0), quantity.FormatSec(c.Medians[1], 0), quantity.FormatSec(c.Medians[2], 0),
			quantity.FormatRatio(c.Medians[1]/c.Medians[0]), quantity.FormatRatio(c.Medians[2]/c.Medians[0]), fmtLoss(c.Loss), c.N)
	}
	return tw.Flush()
}

// calibrationPlan is the calibration sweep at a scale.
func calibrationPlan(sc Scale, _ Host) Plan {
	c := experiment.Config{Pages: CalibrationPages(calibrateCounts, calibrateTotals), Links: []string{Carlucci2015},
		Arms: calibrateArms, Runs: 3, Warmup: 0, Timeout: 30 * time.Second, TCPCC: "cubic", TLS: "1.2"}
	p := Plan{Study: Carlucci2015, Scale: sc}
	switch sc {
	case Smoke:
		c.Pages, c.Runs = []string{"10x30KB", "30x10KB"}, 1
		p.ScaledDown = []string{"2 candidate pages (10x30KB, 30x10KB), 1 load per protocol (quick: 16 candidates, 3 loads)"}
	case Quick:
		p.ScaledDown = []string{"16 candidates: counts 5, 10, 30, 60 x totals 200, 300, 450, 600 KB; 3 loads per protocol and candidate, no warm-up (full: 64 candidates, 5 loads)",
			"only the three cold protocols are fitted (the paper's three PLTs); h3 warm is not swept"}
	case Full:
		c.Pages, c.Runs = CalibrationPages(calibrateFullCounts, calibrateFullTotals), 5
	}
	p.Parts = []Part{{Name: "calibrate", Title: "Calibration sweep", Config: c}}
	return p
}

// Candidates returns the calibration candidates measured in the evidence, ranked.
func (e *Support) Candidates() []Candidate {
	pr := e.Part("calibrate")
	if pr == nil {
		return nil
	}
	paper := carlucciPaperPLTs()
	link := pr.Part.Config.Links[0]
	var out []Candidate
	for _, page := range pr.Part.Config.Pages {
		sp, err := pages.ParseSpec(page)
		if err != nil {
			continue
		}
		c := Candidate{Page: page, Objects: sp.Objects(), Bytes: sp.TotalBytes()}
		c.N = math.MaxInt
		for i, a := range calibrateArms {
			g := pr.Group(page, link, a.Protocol, a.Mode)
			c.Medians[i] = median(g)
			if g == nil {
				c.N = 0
			} else {
				c.N = min(c.N, len(g.Sample))
			}
		}
		c.Loss = CalibrationLoss(c.Medians, paper)
		c.Ordered = c.Medians[0] > c.Medians[1] && c.Medians[1] > c.Medians[2]
		out = append(out, c)
	}
	return RankCandidates(out)
}

// calibrationSections are the calibration report's sections: the ranked table of every
// candidate with residuals, and the sensitivity of the conclusions.
func calibrationSections(e *Support) []Section {
	cs := e.Candidates()
	paper := carlucciPaperPLTs()
	s := Section{ID: "calibration", Title: "Candidates ranked against the paper",
		Text: []string{"Loss function: L = 1/2 mean over h1, h2, h3 of ln(ours/paper)^2 + 1/2 mean over h2, h3 of ln(our ratio to h1 / paper ratio to h1)^2 " +
			"(paper: HTTP/1.1 2.03 s, SPDY 1.45 s, QUIC 1.14 s; ratios 0.71 and 0.56). sqrt(L) is roughly the typical relative error. " +
			fmt.Sprintf("Few loads per candidate (%d per protocol) keep the sweep affordable: treat close ranks as ties.", e.Plan.Parts[0].Config.Runs)}}
	t := Table{Header: []string{"rank", "page", "objects", "bytes", "h1 median", "h2 median", "h3 median", "h2/h1", "h3/h1",
		"resid. h1", "resid. h2", "resid. h3", "resid. h2/h1", "resid. h3/h1", "loss L", "order h1>h2>h3"}}
	for i, c := range cs {
		r := c.Residuals(paper)
		row := []string{fmt.Sprint(i + 1), c.Page, fmt.Sprint(c.Objects), fmt.Sprint(c.Bytes), quantity.FormatSec(c.Medians[0], 0), quantity.FormatSec(c.Medians[1], 0), quantity.FormatSec(c.Medians[2], 0),
			quantity.FormatRatio(c.Medians[1] / c.Medians[0]), quantity.FormatRatio(c.Medians[2] / c.Medians[0])}
		for _, v := range r {
			row = append(row, quantity.FormatPct(v))
		}
		row = append(row, fmtLoss(c.Loss), yesNo(c.Ordered))
		t.Rows = append(t.Rows, row)
	}
	s.Tables = []Table{t}
	return []Section{s, sensitivitySection(cs)}
}

// sensitivitySection says how much the conclusions depend on the page composition.
func sensitivitySection(cs []Candidate) Section {
	s := Section{ID: "sensitivity", Title: "How sensitive the conclusions are to the page"}
	var h2r, h3r []float64
	ordered, n := 0, 0
	for _, c := range cs {
		if math.IsNaN(c.Loss) {
			continue
		}
		n++
		if c.Ordered {
			ordered++
		}
		h2r = append(h2r, c.Medians[1]/c.Medians[0])
		h3r = append(h3r, c.Medians[2]/c.Medians[0])
	}
	if n == 0 {
		s.Text = []string{"No complete candidate: nothing to compare."}
		return s
	}
	s.Bullets = []string{
		fmt.Sprintf("The paper's order (HTTP/1.1 slowest, QUIC fastest) holds for %d of %d candidates.", ordered, n),
		fmt.Sprintf("h2/h1 ranges %.2f..%.2f and h3/h1 %.2f..%.2f over the candidates (paper 0.71 and 0.56).", slices.Min(h2r), slices.Max(h2r), slices.Min(h3r), slices.Max(h3r)),
		fmt.Sprintf("Best candidate: %s (L = %s); our carlucci2015 preset is 30x10KB.", cs[0].Page, fmtLoss(cs[0].Loss)),
	}
	for i, c := range cs {
		if c.Page == "30x10KB" {
			s.Bullets = append(s.Bullets, fmt.Sprintf("30x10KB ranks %d of %d (L = %s).", i+1, len(cs), fmtLoss(c.Loss)))
		}
	}
	return s
}

// calibrationFindings are the findings of the calibration report.
func calibrationFindings() []Finding {
	return []Finding{
		{ID: "composition", Claim: "An image-only page reproduces the paper's three PLTs (HTTP/1.1 2.03 s, SPDY 1.45 s, QUIC 1.14 s)",
			Source: "section 4 (page composition not published)", Criterion: "best candidate's sqrt(L) <= 0.10 (about 10 % typical error)",
			Judge: func(e *Support) Judgement {
				cs := e.Candidates()
				if len(cs) == 0 || math.IsNaN(cs[0].Loss) {
					return notRun("no complete candidate")
				}
				if cs[0].N < CalibrateMinLoads {
					return notRun(fmt.Sprintf("too few loads per candidate (%d, need %d)", cs[0].N, CalibrateMinLoads))
				}
				r := cs[0].Residuals(carlucciPaperPLTs())
				ev := fmt.Sprintf("best %s: L = %s, residuals h1 %s, h2 %s, h3 %s, h2/h1 %s, h3/h1 %s", cs[0].Page, fmtLoss(cs[0].Loss),
					quantity.FormatPct(r[0]), quantity.FormatPct(r[1]), quantity.FormatPct(r[2]), quantity.FormatPct(r[3]), quantity.FormatPct(r[4]))
				v, _ := fold(every, Alpha, point(math.Sqrt(cs[0].Loss) <= 0.10))
				return Judgement{Verdict: v, Evidence: ev + " (no candidate within 10 %: the candidates tried exclude it)",
					See: []string{"Candidates ranked against the paper"}}
			}},
		{ID: "order-robust", Claim: "QUIC fastest and HTTP/1.1 slowest, whatever the (unpublished) page",
			Source: "section 4", Criterion: "the order h1 > h2 > h3 of medians holds for every candidate",
			Judge: func(e *Support) Judgement {
				cs := e.Candidates()
				ordered, n := 0, 0
				var not []string
				for _, c := range cs {
					if math.IsNaN(c.Loss) {
						continue
					}
					n++
					if c.Ordered {
						ordered++
					} else {
						not = append(not, c.Page)
					}
				}
				if n == 0 {
					return notRun("no complete candidate")
				}
				if cs[0].N < CalibrateMinLoads {
					return notRun(fmt.Sprintf("too few loads per candidate (%d, need %d)", cs[0].N, CalibrateMinLoads))
				}
				ev := fmt.Sprintf("order holds for %d of %d candidates", ordered, n)
				if len(not) > 0 {
					ev += "; not for " + strings.Join(not, ", ")
				}
				v, _ := fold(every, Alpha, point(ordered == n))
				return Judgement{Verdict: v, Evidence: ev, See: []string{"How sensitive the conclusions are to the page"}}
			}},
	}
}

// fmtLoss formats a loss value ("n/a" for NaN).
func fmtLoss(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", v)
}

// yesNo is "yes" or "no".
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
