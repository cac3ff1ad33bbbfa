package view

import (
	"bytes"
	"fmt"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/result"
)

// side is one side of a comparison: a group of a set.
type side struct {
	L           *loaded
	G           *analysis.Group
	Label, Href string
}

// pair is one compared pair of groups.
type pair struct {
	A, B                   side
	Rows                   []groupRow
	Cmp                    []cmpRow
	ECDF                   string
	Diff                   [][3]string
	WaterfallA, WaterfallB string
	LoadA, LoadB           string
}

// compare serves /compare?a=X&b=Y, X and Y each SET or SET/GROUP: two groups side by side, or
// two whole sets with their groups paired by page, link, mode and protocol.
func (s *Server) compare(c *gin.Context) {
	a, b := c.Query("a"), c.Query("b")
	ls := s.all()
	d := map[string]any{"Options": s.options(ls, a, b)}
	if a == "" || b == "" {
		d["Errs"] = []string{"choose two groups or two result sets to compare"}
		s.render(c, "compare", d)
		return
	}
	as, aerr := s.sides(ls, a)
	bs, berr := s.sides(ls, b)
	var errs []string
	for _, err := range []error{aerr, berr} {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	var pairs []pair
	var flowPairs []flowPair
	var unmatched, funmatched []string
	if len(errs) == 0 {
		if len(as) == 1 && len(bs) == 1 {
			pairs = append(pairs, makePair(as[0], bs[0]))
		} else {
			pairs, unmatched = matchSides(as, bs)
		}
		if !strings.Contains(a, "/") && !strings.Contains(b, "/") {
			flowPairs, funmatched = matchFlows(flowGroupsOf(ls, a), flowGroupsOf(ls, b))
		}
	}
	d["Errs"], d["Pairs"], d["Unmatched"] = errs, pairs, append(unmatched, funmatched...)
	d["FlowPairs"], d["FlowHeader"] = flowPairs, analysis.FlowHeader
	s.render(c, "compare", d)
}

// flowPair is one compared pair of flow groups: one flow of one mix over one link in two
// result sets.
type flowPair struct {
	// Title names the flow: "link L, mix M, flow N".
	Title string
	// Rows are A's and B's rows under analysis.FlowHeader, each led by "A" or "B".
	Rows [][]string
	// Diff lists the settings that differ between the groups' first flows (settingsDiff).
	Diff [][3]string
}

// flowGroupsOf returns the flow groups of the result set setID (none when it has none or is
// not served).
func flowGroupsOf(ls []*loaded, setID string) []*analysis.FlowGroup {
	for _, l := range ls {
		if l.set.ID == setID && l.err == nil {
			return l.report.Flows
		}
	}
	return nil
}

// matchFlows pairs the flow groups of two sets with the same link, mix and flow, a group of B
// with the same settings first; it returns the pairs and the labels of the groups left alone.
func matchFlows(as, bs []*analysis.FlowGroup) ([]flowPair, []string) {
	var pairs []flowPair
	var unmatched []string
	used := make([]bool, len(bs))
	title := func(g *analysis.FlowGroup) string {
		return fmt.Sprintf("link %s, mix %s, flow %d", g.Link, g.MixLabel(), g.Flow)
	}
	for _, x := range as {
		j := -1
		for i, y := range bs {
			if used[i] || y.Link != x.Link || y.Mix != x.Mix || y.Flow != x.Flow {
				continue
			}
			if j < 0 || y.Settings == x.Settings {
				j = i
			}
		}
		if j < 0 {
			unmatched = append(unmatched, title(x))
			continue
		}
		used[j] = true
		y := bs[j]
		pairs = append(pairs, flowPair{Title: title(x),
			Rows: [][]string{append([]string{"A"}, x.Row()...), append([]string{"B"}, y.Row()...)},
			Diff: settingsDiff(x.First, y.First)})
	}
	for j, y := range bs {
		if !used[j] {
			unmatched = append(unmatched, title(y))
		}
	}
	return pairs, unmatched
}

// sides resolves SET or SET/GROUP to its groups.
func (s *Server) sides(ls []*loaded, v string) ([]side, error) {
	setID, gid, _ := strings.Cut(v, "/")
	for _, l := range ls {
		if l.set.ID != setID {
			continue
		}
		if l.err != nil {
			return nil, fmt.Errorf("%s: %v", l.set.Name, l.err)
		}
		var out []side
		for _, g := range l.report.Groups {
			if gid == "" || groupID(g) == gid {
				out = append(out, side{L: l, G: g, Label: l.set.Name + ": " + l.label(g), Href: base(l.set) + "group/" + groupID(g)})
			}
		}
		if len(out) == 0 && (gid != "" || len(l.report.Flows) == 0) {
			return nil, fmt.Errorf("no group %q in %s", gid, l.set.Name)
		}
		return out, nil
	}
	return nil, fmt.Errorf("no result set %q under the served paths", setID)
}

// matchSides pairs the groups of two sets with the same page, link, mode and protocol.
func matchSides(as, bs []side) ([]pair, []string) {
	var pairs []pair
	var unmatched []string
	used := make([]bool, len(bs))
	for _, x := range as {
		j := slices.IndexFunc(bs, func(y side) bool {
			return y.G.Page == x.G.Page && y.G.Link == x.G.Link && y.G.Mode == x.G.Mode && y.G.Protocol == x.G.Protocol
		})
		if j < 0 {
			unmatched = append(unmatched, x.Label)
			continue
		}
		used[j] = true
		pairs = append(pairs, makePair(x, bs[j]))
	}
	for j, y := range bs {
		if !used[j] {
			unmatched = append(unmatched, y.Label)
		}
	}
	return pairs, unmatched
}

// makePair computes everything the page shows of A against B, all from package analysis: the
// groups' statistics, A compared with B (ratio, bootstrap CI, Mann-Whitney and Welch), the
// effect size, both ECDFs on one axis and both median loads' waterfalls on one time axis.
func makePair(a, b side) pair {
	p := pair{A: a, B: b}
	p.Rows = append(groupRows(a.L, []*analysis.Group{a.G}), groupRows(b.L, []*analysis.Group{b.G})...)
	p.Rows[0].Label, p.Rows[1].Label = "A: "+a.L.label(a.G), "B: "+b.L.label(b.G)
	if len(a.G.Sample) > 0 && len(b.G.Sample) > 0 {
		cm := analysis.Compare(b.G, a.G, a.L.report.Options)
		p.Cmp = []cmpRow{{C: cm, Label: "B vs A", A: analysis.EffectSizeA(cm.MannWhitney, cm.N, cm.BaselineN), Alpha: a.L.report.Options.Alpha}}
	}
	var buf bytes.Buffer
	if err := analysis.WriteGroupPlot(&buf, analysis.ECDFPlot, "A vs B", []string{"A: " + a.G.Protocol, "B: " + b.G.Protocol},
		[]*analysis.Group{a.G, b.G}, analysis.PLT, "svg"); err == nil {
		p.ECDF = analysis.InlineSVG(buf.String())
	} else {
		p.ECDF = template.HTMLEscapeString(err.Error())
	}
	ra, rb := a.G.MedianLoad, b.G.MedianLoad
	if ra == nil || rb == nil {
		return p
	}
	p.Diff = settingsDiff(ra, rb)
	p.LoadA = base(a.L.set) + "load/" + strconv.Itoa(a.L.loadIndex(ra))
	p.LoadB = base(b.L.set) + "load/" + strconv.Itoa(b.L.loadIndex(rb))
	end := analysis.WaterfallEndMs(ra, rb)
	var wa, wb bytes.Buffer
	if analysis.WriteWaterfallAxis(&wa, ra, end) == nil && analysis.WriteWaterfallAxis(&wb, rb, end) == nil {
		p.WaterfallA, p.WaterfallB = wa.String(), wb.String()
	}
	return p
}

// settingsDiff lists the settings whose values differ between the lines a and b, as package
// result defines them (result.SettingDiffs: the fields its role tags class as settings, nested
// objects flattened, e.g. link.rtt_ms), for any kind of line.
func settingsDiff(a, b any) [][3]string {
	var out [][3]string
	for _, d := range result.SettingDiffs(a, b) {
		out = append(out, [3]string{d.Path, d.A, d.B})
	}
	return out
}
