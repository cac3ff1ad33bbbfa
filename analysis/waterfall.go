package analysis

import (
	"fmt"
	"html"
	"io"
	"math"
	"net/url"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/result"
)

// Waterfall layout, in SVG pixels.
const (
	wfWidth  = 960 // whole figure
	wfLabel  = 250 // label column (object path and connection)
	wfRow    = 16  // one object
	wfTop    = 34  // legend and milestone labels
	wfBottom = 24  // time axis
)

// wfPhase is one coloured span of a waterfall bar.
type wfPhase struct {
	name, color string
}

// Waterfall phases (colours after WebPageTest's waterfall: dns teal, connect orange, ssl purple,
// wait green, receive blue).
var (
	wfQueued  = wfPhase{"queued/blocked", "#d0d0d0"}
	wfConnect = wfPhase{"connect", "#f5a623"}
	wfTLS     = wfPhase{"TLS", "#b36ae2"}
	wfWait    = wfPhase{"wait (request to first byte)", "#4caf50"}
	wfRecv    = wfPhase{"receive", "#2f7ed8"}
	wfPhases  = []wfPhase{wfQueued, wfConnect, wfTLS, wfWait, wfRecv}
)

// wfConnColors tell connections apart (one stripe per row in its connection's colour).
var wfConnColors = []string{"#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4", "#f032e6", "#9a6324", "#808000", "#000075"}

// WriteWaterfall writes the waterfall of one load as an SVG: one row per fetch (the document,
// then the resources by start time) with its Resource Timing phases where the record has them
// (queued/blocked = startTime to connectStart or requestStart, connect, TLS from
// secureConnectionStart, wait = requestStart to responseStart, receive = responseStart to
// responseEnd; one grey bar for records without phases), the connection it used (label "cN", N
// numbering Chromium's connection IDs in order of first use, and a colour stripe), and the page's
// milestones as vertical lines: TTFB, FCP, DCL and load. Times in ms from the navigation start.
func WriteWaterfall(w io.Writer, rec *result.Record) error { return WriteWaterfallAxis(w, rec, 0) }

// WaterfallEndMs returns the time (ms) a waterfall of recs ends at: the last PLT or resource end
// of any of them. Waterfalls drawn with WriteWaterfallAxis at this end share one time axis.
func WaterfallEndMs(recs ...*result.Record) float64 {
	end := 0.0
	for _, rec := range recs {
		end = math.Max(end, rec.PLTMs)
		for _, r := range waterfallRows(rec) {
			end = math.Max(end, r.EndMs)
		}
	}
	return end
}

// WriteWaterfallAxis is WriteWaterfall with the time axis reaching at least endMs (so the
// waterfalls of several loads drawn with their WaterfallEndMs share one scale).
func WriteWaterfallAxis(w io.Writer, rec *result.Record, endMs float64) error {
	rows := waterfallRows(rec)
	if len(rows) == 0 {
		return fmt.Errorf("waterfall: load %d has no resources", rec.Run)
	}
	end := niceCeil(math.Max(endMs, WaterfallEndMs(rec)) * 1.02)
	height := wfTop + len(rows)*wfRow + wfBottom
	x := func(ms float64) float64 { return wfLabel + math.Max(ms, 0)/end*(wfWidth-wfLabel-10) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", wfWidth, height, wfWidth, height)
	writeLegend(&b)
	conns := connNumbers(rows)
	home := hostOf(rows[0].URL) // the document's (or first fetch's) host
	for i, r := range rows {
		writeRow(&b, r, wfTop+i*wfRow, conns, home, x)
	}
	writeAxis(&b, end, height, x)
	writeMilestones(&b, rec, height, x)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// waterfallRows returns the document then the resources sorted by start.
func waterfallRows(rec *result.Record) []result.Resource {
	var rows []result.Resource
	if rec.Document != nil {
		rows = append(rows, *rec.Document)
	}
	res := slices.Clone(rec.Resources)
	slices.SortStableFunc(res, func(a, b result.Resource) int {
		switch {
		case a.StartMs < b.StartMs:
			return -1
		case a.StartMs > b.StartMs:
			return 1
		}
		return 0
	})
	return append(rows, res...)
}

// connNumbers numbers the connection IDs 1, 2, ... in order of first use.
func connNumbers(rows []result.Resource) map[string]int {
	out := map[string]int{}
	for _, r := range rows {
		if _, ok := out[r.ConnectionID]; !ok && r.ConnectionID != "" {
			out[r.ConnectionID] = len(out) + 1
		}
	}
	return out
}

// wfSpan is one phase of a fetch, from and to in ms.
type wfSpan struct {
	from, to float64
	phase    wfPhase
}

// spans splits a fetch into its phases (start, end, phase); phases absent from the record are
// left out.
func spans(r result.Resource) []wfSpan {
	if r.ResponseStartMs <= 0 || r.RequestStartMs <= 0 {
		return []wfSpan{{r.StartMs, r.EndMs, wfQueued}}
	}
	var out []wfSpan
	add := func(a, b float64, p wfPhase) {
		if b > a {
			out = append(out, wfSpan{a, b, p})
		}
	}
	connect := r.ConnectEndMs > r.ConnectStartMs && r.ConnectStartMs > 0
	if connect {
		add(r.StartMs, r.ConnectStartMs, wfQueued)
		tls := r.ConnectEndMs
		if r.TLSStartMs > 0 && r.TLSStartMs < r.ConnectEndMs {
			tls = r.TLSStartMs
		}
		add(r.ConnectStartMs, tls, wfConnect)
		add(tls, r.ConnectEndMs, wfTLS)
		add(r.ConnectEndMs, r.RequestStartMs, wfQueued)
	} else {
		add(r.StartMs, r.RequestStartMs, wfQueued)
	}
	add(r.RequestStartMs, r.ResponseStartMs, wfWait)
	add(r.ResponseStartMs, r.EndMs, wfRecv)
	return out
}

// hostOf is the host of a URL ("" when it has none).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// rowLabel is a row's label: the URL's path, prefixed with the first label of its host and a
// colon when the host is not home's ("o1: /img/0003.jpg" for a page's origin o1), so that a
// page's origins, and the connections they share (h2 and h3 coalescing), show in the waterfall.
func rowLabel(raw, home string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Path == "" {
		return raw
	}
	label := u.Path
	if h := u.Hostname(); h != "" && h != home {
		first, _, _ := strings.Cut(h, ".")
		label = first + ": " + truncate(label, 30-len(first)-2)
	}
	return label
}

func writeRow(b *strings.Builder, r result.Resource, y int, conns map[string]int, home string, x func(float64) float64) {
	label := rowLabel(r.URL, home)
	conn := ""
	if n := conns[r.ConnectionID]; n > 0 {
		conn = fmt.Sprintf("c%d", n)
		color := wfConnColors[(n-1)%len(wfConnColors)]
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="6" height="%d" fill="%s"><title>connection %s (Chromium id %s)</title></rect>`+"\n",
			wfLabel-10, y+2, wfRow-4, color, conn, html.EscapeString(r.ConnectionID))
	}
	fmt.Fprintf(b, `<text x="4" y="%d">%s<title>%s</title></text><text x="%d" y="%d" text-anchor="end" fill="#555">%s</text>`+"\n",
		y+wfRow-4, html.EscapeString(truncate(label, 30)), html.EscapeString(r.URL), wfLabel-14, y+wfRow-4, conn)
	for _, s := range spans(r) {
		a, e, p := s.from, s.to, s.phase
		fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s %s: %.1f-%.1f ms</title></rect>`+"\n",
			x(a), y+3, math.Max(x(e)-x(a), 0.5), wfRow-6, p.color, html.EscapeString(label), p.name, a, e)
	}
}

func writeLegend(b *strings.Builder) {
	lx := wfLabel
	for _, p := range wfPhases {
		fmt.Fprintf(b, `<rect x="%d" y="4" width="10" height="10" fill="%s"/><text x="%d" y="13">%s</text>`+"\n", lx, p.color, lx+13, p.name)
		lx += 20 + 6*len(p.name)
	}
	fmt.Fprintf(b, `<text x="4" y="13" fill="#555">object (connection)</text>`+"\n")
}

func writeAxis(b *strings.Builder, end float64, height int, x func(float64) float64) {
	step := niceCeil(end / 8)
	y := height - wfBottom + 4
	for t := 0.0; t <= end+1e-9; t += step {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/><text x="%.1f" y="%d" text-anchor="middle" fill="#555">%.0f ms</text>`+"\n",
			x(t), wfTop-4, x(t), y, x(t), y+12, t)
	}
}

// writeMilestones draws TTFB, FCP, DCL and load as vertical lines with their names.
func writeMilestones(b *strings.Builder, rec *result.Record, height int, x func(float64) float64) {
	for i, m := range []struct {
		name  string
		ms    float64
		color string
	}{{"TTFB", rec.TTFBMs, "#4caf50"}, {"FCP", rec.FCPMs, "#ff9800"}, {"DCL", rec.DCLMs, "#2f7ed8"}, {"load", rec.PLTMs, "#d0021b"}} {
		if m.ms <= 0 {
			continue
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-dasharray="4 2"><title>%s %.1f ms</title></line>`+"\n",
			x(m.ms), wfTop-6, x(m.ms), height-wfBottom+4, m.color, m.name, m.ms)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" fill="%s" font-size="10">%s %.0f</text>`+"\n", x(m.ms)+2, wfTop-6+(i%2)*8-2, m.color, m.name, m.ms)
	}
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n+3:]
}
