package studies

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// ImplicitRTT is the RTT of the real path Kakhki et al. added their "extra" delay to, as the
// 2024 replication (Muthuraj) took it: 36 ms.
const ImplicitRTT = 36 * time.Millisecond

// GridLink is the LINK spec of one cell of the Kakhki et al. link grid (IMC 2017, Table 2): rate
// in Mbit/s both ways, RTT = ImplicitRTT + extra, total loss in percent split evenly between the
// two directions (as the 2024 replication's scripts do), droptail queue of 2 BDP (the 2024
// replication's; the 2017 paper gives none). Loss 0 gives no loss key.
func GridLink(rateMbit int, extra time.Duration, lossPct float64) string {
	s := fmt.Sprintf("rate=%dmbit,rtt=%dms,queue=2bdp", rateMbit, (ImplicitRTT + extra).Milliseconds())
	if lossPct > 0 {
		s += ",loss=" + strconv.FormatFloat(lossPct/2, 'f', -1, 64) + "%"
	}
	return s
}

// GridPage is the page spec of COUNT objects of SIZE bytes ("10x100KB").
func GridPage(count int, size int64) string {
	return pages.Spec{Items: []pages.Item{{Count: count, Size: size}}}.String()
}

// GridPages returns the pages of counts x sizes that pages.MaxTotalBytes allows (the 2 GB page
// 200 x 10 MB does not fit), and one line per page left out.
func GridPages(counts []int, sizes []int64) (ok []string, left []string) {
	for _, c := range counts {
		for _, s := range sizes {
			if int64(c)*s > pages.MaxTotalBytes {
				left = append(left, fmt.Sprintf("page %s left out: %s exceed pltlab's page limit of %s", GridPage(c, s),
					pages.HumanBytes(int64(c)*s), pages.HumanBytes(pages.MaxTotalBytes)))
				continue
			}
			ok = append(ok, GridPage(c, s))
		}
	}
	return ok, left
}

// Comparison names one TCP-versus-QUIC comparison of a cell.
type Comparison struct {
	// Name is "cold" (QUIC with a full handshake) or "0-RTT" (QUIC resuming with 0-RTT, our warm
	// h3), both against TCP (h2) cold.
	Name string
	// QUIC is the QUIC arm's mode.
	QUIC result.Mode
}

// Comparisons are the two TCP-versus-QUIC comparisons of Kakhki et al.
var Comparisons = []Comparison{{Name: "cold", QUIC: result.Cold}, {Name: "0-RTT", QUIC: result.Warm}}

// Cell is one (page, link) of a grid with its TCP-versus-QUIC comparisons.
type Cell struct {
	// Part is the part the loads came from.
	Part string
	// Page and Link are the specs as given; PageSpec and LinkSpec parsed.
	Page, Link string
	PageSpec   pages.Spec
	LinkSpec   linkspec.Spec
	// Diffs are indexed like Comparisons.
	Diffs [2]Diff
}

// cells returns every (page, link) of the named parts with h2 and h3 loads, comparing h2
// cold (TCP) with h3 cold and warm (QUIC) by CompareMeans.
func (e *Support) cells(parts ...string) []Cell {
	var out []Cell
	for _, name := range parts {
		pr := e.Part(name)
		if pr == nil {
			continue
		}
		for _, l := range pr.Part.Config.Links {
			ls, err := linkspec.Parse(l)
			if err != nil {
				continue
			}
			for _, p := range pr.Part.Config.Pages {
				ps, err := pages.ParseSpec(p)
				if err != nil {
					continue
				}
				tcp := pr.Sample(p, l, "h2", result.Cold)
				if tcp == nil {
					continue
				}
				c := Cell{Part: name, Page: p, Link: l, PageSpec: ps, LinkSpec: ls}
				for i, cmp := range Comparisons {
					c.Diffs[i] = CompareMeans(tcp, pr.Sample(p, l, "h3", cmp.QUIC))
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// objectOf returns the count and size of a single-item page (ok false for a mixed page).
func objectOf(s pages.Spec) (count int, size int64, ok bool) {
	if len(s.Items) != 1 {
		return 0, 0, false
	}
	return s.Items[0].Count, s.Items[0].Size, true
}

// LinkMaps returns one DiffMap per (link, comparison) over object count (y) x object size (x),
// for every link with at least two pages, colours saturating at +-100 % (Kakhki et al.).
func LinkMaps(cells []Cell) []analysis.DiffMap {
	var links []string
	byLink := map[string][]Cell{}
	for _, c := range cells {
		if _, _, ok := objectOf(c.PageSpec); !ok {
			continue
		}
		if byLink[c.Link] == nil {
			links = append(links, c.Link)
		}
		byLink[c.Link] = append(byLink[c.Link], c)
	}
	var out []analysis.DiffMap
	for _, l := range links {
		cs := byLink[l]
		if len(cs) < 2 {
			continue
		}
		var counts []float64
		var sizes []float64
		for _, c := range cs {
			n, s, _ := objectOf(c.PageSpec)
			counts, sizes = addSorted(counts, float64(n)), addSorted(sizes, float64(s))
		}
		for i, cmp := range Comparisons {
			m := analysis.DiffMap{Title: fmt.Sprintf("TCP vs QUIC %s, %% diff (TCP-QUIC)/QUIC\nlink %s", cmp.Name, l),
				XLabel: "object size", YLabel: "objects", Range: 100}
			for _, s := range sizes {
				m.XTicks = append(m.XTicks, pages.HumanBytes(int64(s)))
			}
			for _, n := range counts {
				m.YTicks = append(m.YTicks, strconv.Itoa(int(n)))
			}
			for _, c := range cs {
				n, s, _ := objectOf(c.PageSpec)
				d := c.Diffs[i]
				m.Cells = append(m.Cells, analysis.DiffCell{X: slices.Index(sizes, float64(s)), Y: slices.Index(counts, float64(n)), Pct: d.Pct, Significant: d.Significant})
			}
			out = append(out, m)
		}
	}
	return out
}

// PageMaps returns one DiffMap per (page, loss, delay variation, comparison) over RTT (y) x rate
// (x), for every page measured over at least two links of one loss rate and delay variation,
// colours saturating at +-100 %.
func PageMaps(cells []Cell) []analysis.DiffMap {
	type key struct {
		page string
		loss float64
		dv   time.Duration
	}
	var keys []key
	byKey := map[key][]Cell{}
	for _, c := range cells {
		k := key{c.Page, c.LinkSpec.Loss, max(c.LinkSpec.DownImp.DelayVar, c.LinkSpec.UpImp.DelayVar)}
		if byKey[k] == nil {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], c)
	}
	var out []analysis.DiffMap
	for _, k := range keys {
		cs := byKey[k]
		if len(cs) < 2 {
			continue
		}
		var rates, rtts []float64
		for _, c := range cs {
			rates, rtts = addSorted(rates, float64(c.LinkSpec.Down)), addSorted(rtts, float64(c.LinkSpec.RTT))
		}
		for i, cmp := range Comparisons {
			title := fmt.Sprintf("TCP vs QUIC %s, %% diff (TCP-QUIC)/QUIC\npage %s, loss %g %% per direction", cmp.Name, k.page, 100*k.loss)
			if k.dv > 0 {
				title += fmt.Sprintf(", delay variation +-%v", k.dv)
			}
			m := analysis.DiffMap{Title: title,
				XLabel: "rate (Mbit/s)", YLabel: "RTT (ms)", Range: 100}
			for _, r := range rates {
				m.XTicks = append(m.XTicks, strconv.FormatFloat(r/1e6, 'g', 4, 64))
			}
			for _, r := range rtts {
				m.YTicks = append(m.YTicks, strconv.FormatInt(time.Duration(r).Milliseconds(), 10))
			}
			for _, c := range cs {
				d := c.Diffs[i]
				m.Cells = append(m.Cells, analysis.DiffCell{X: slices.Index(rates, float64(c.LinkSpec.Down)),
					Y: slices.Index(rtts, float64(c.LinkSpec.RTT)), Pct: d.Pct, Significant: d.Significant})
			}
			out = append(out, m)
		}
	}
	return out
}

// addSorted inserts v into the ascending set xs.
func addSorted(xs []float64, v float64) []float64 {
	i, found := slices.BinarySearch(xs, v)
	if found {
		return xs
	}
	return slices.Insert(xs, i, v)
}

// diffMapFigure is a figure of heatmap panels.
func diffMapFigure(maps []analysis.DiffMap, file, caption string) Figure {
	return Figure{File: file, Caption: caption, Render: func(w io.Writer, format string) error {
		return analysis.WriteDiffMaps(w, maps, format)
	}}
}

// cellTable lists every cell: page, link, means, both comparisons.
func cellTable(cells []Cell) Table {
	t := Table{Header: []string{"page", "link", "TCP (h2) mean", "QUIC mean", "QUIC 0-RTT mean", "diff cold", "diff 0-RTT", "n TCP/QUIC/0-RTT"}}
	for _, c := range cells {
		t.Rows = append(t.Rows, []string{c.Page, c.Link, quantity.FormatMsUnit(c.Diffs[0].Mean, 0), quantity.FormatMsUnit(c.Diffs[0].RefMean, 0), quantity.FormatMsUnit(c.Diffs[1].RefMean, 0),
			c.Diffs[0].String(), c.Diffs[1].String(), fmt.Sprintf("%d/%d/%d", c.Diffs[0].N, c.Diffs[0].NRef, c.Diffs[1].NRef)})
	}
	return t
}

// cellTests are the Welch tests of comparison i of the cells, one claim each, the claimed way
// QUIC faster (way 1) or TCP faster (way -1): a family for fold (Holm over the cells).
func cellTests(cells []Cell, i int, way float64) []claim {
	out := make([]claim, len(cells))
	for k, c := range cells {
		out[k] = testClaim(c.Diffs[i].P, way*c.Diffs[i].Pct)
	}
	return out
}

// count tallies verdicts.
func count(vs []Verdict) map[Verdict]int {
	n := map[Verdict]int{}
	for _, v := range vs {
		n[v]++
	}
	return n
}

// meanPct is the mean of comparison i's percent differences over cells (NaN when none).
func meanPct(cells []Cell, i int) float64 {
	var sum float64
	n := 0
	for _, c := range cells {
		if !math.IsNaN(c.Diffs[i].Pct) {
			sum += c.Diffs[i].Pct
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// filterCells keeps the cells for which keep is true.
func filterCells(cells []Cell, keep func(Cell) bool) []Cell {
	var out []Cell
	for _, c := range cells {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// mbit formats a rate in Mbit/s.
func mbit(r linkspec.Rate) string {
	return strings.TrimSuffix(strconv.FormatFloat(float64(r)/1e6, 'g', 4, 64), ".0")
}

// enough keeps the cells whose every measured comparison (the cold one always; 0-RTT where the
// part has warm h3 loads) has at least MinLoads loads per arm (fewer cannot reach p < 0.01);
// the heatmaps still show every cell.
func enough(cells []Cell) []Cell {
	return filterCells(cells, func(c Cell) bool {
		for i, d := range c.Diffs {
			if i > 0 && d.NRef == 0 {
				continue // the part does not measure this comparison
			}
			if d.N < MinLoads || d.NRef < MinLoads {
				return false
			}
		}
		return true
	})
}

// tooFewCells is the judgement when no cell has enough loads.
func tooFewCells() Judgement {
	return notRun(fmt.Sprintf("too few loads for p < 0.01 at this scale (need %d per arm and cell)", MinLoads))
}
