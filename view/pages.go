package view

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/result"
)

// render executes the named template into a buffer first, so a failure is one error page.
func (s *Server) render(c *gin.Context, name string, data any) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		s.opts.Logger.Error("view: render", "page", name, "err", err)
		s.fail(c, http.StatusInternalServerError, "could not render the page: "+err.Error())
		return
	}
	c.Data(http.StatusOK, "text/html; charset=utf-8", buf.Bytes())
}

// fail answers with an error page.
func (s *Server) fail(c *gin.Context, code int, msg string) {
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, "error", map[string]string{"Title": http.StatusText(code), "Msg": msg}); err != nil {
		c.String(code, "%s\n", msg)
		return
	}
	c.Data(code, "text/html; charset=utf-8", buf.Bytes())
}

// option is one choice of the compare form: a whole set or one group.
type option struct {
	Value, Label string
	A, B         bool
}

// options lists every set and group for the compare form, preselecting a and b.
func (s *Server) options(ls []*loaded, a, b string) []option {
	var out []option
	for _, l := range ls {
		if l.err != nil {
			continue
		}
		out = append(out, option{Value: l.set.ID, Label: l.set.Name + " (whole set)", A: a == l.set.ID, B: b == l.set.ID})
		for _, g := range l.report.Groups {
			v := l.set.ID + "/" + groupID(g)
			out = append(out, option{Value: v, Label: l.set.Name + ": " + l.label(g), A: a == v, B: b == v})
		}
	}
	return out
}

// all loads every set of a fresh scan.
func (s *Server) all() []*loaded {
	sets, files := s.scan()
	s.mu.Lock()
	s.sets = sets
	s.mu.Unlock()
	out := make([]*loaded, len(sets))
	for i, st := range sets {
		out[i] = s.load(st, files)
	}
	return out
}

func (s *Server) index(c *gin.Context) {
	ls := s.all()
	var sums []summary
	for _, l := range ls {
		sums = append(sums, summarise(l))
	}
	a, b := "", ""
	if opts := s.options(ls, "", ""); len(opts) > 1 {
		a, b = opts[0].Value, opts[1].Value
		if len(opts) > 2 {
			b = opts[2].Value
		}
	}
	s.render(c, "index", map[string]any{"Roots": s.roots, "Sets": sums, "Options": s.options(ls, a, b), "Cut": s.scanCut()})
}

// setRoute dispatches /set/ID/REST: the set's page, a group, a load, its live events, an
// evidence file, a study figure or a study part's report.
func (s *Server) setRoute(c *gin.Context) {
	l, ok := s.set(c.Param("id"))
	if !ok {
		s.fail(c, http.StatusNotFound, "no result set "+strconv.Quote(c.Param("id"))+" under the served paths")
		return
	}
	rest := strings.TrimPrefix(c.Param("rest"), "/")
	parts := strings.Split(rest, "/")
	switch {
	case rest == "":
		s.setPage(c, l)
	case rest == "events":
		s.events(c, l.set)
	case len(parts) == 2 && parts[0] == "group" && l.err == nil:
		s.groupPage(c, l, parts[1])
	case len(parts) == 2 && parts[0] == "load" && l.err == nil:
		s.loadPage(c, l, parts[1])
	case len(parts) == 4 && parts[0] == "artifact" && l.err == nil:
		s.artifact(c, l, parts[1], parts[2])
	case len(parts) == 1 && strings.HasSuffix(rest, ".svg") && l.study != nil && l.study.Figure != nil:
		s.studyFigure(c, l, strings.TrimSuffix(rest, ".svg"))
	case len(parts) == 2 && parts[1] == "report.html" && l.study != nil && l.study.Part != nil:
		s.partReport(c, l, parts[0])
	default:
		s.fail(c, http.StatusNotFound, "no such page: "+c.Request.URL.Path)
	}
}

// base is the URL of a set's page.
func base(st *Set) string { return "/set/" + st.ID + "/" }

// groupRow is one row of a groups table.
type groupRow struct {
	G           *analysis.Group
	Label, Href string
}

func groupRows(l *loaded, gs []*analysis.Group) []groupRow {
	out := make([]groupRow, len(gs))
	for i, g := range gs {
		out[i] = groupRow{G: g, Label: l.label(g), Href: base(l.set) + "group/" + groupID(g)}
	}
	return out
}

// cmpRow is one row of a comparisons table.
type cmpRow struct {
	C           *analysis.Comparison
	Label, Href string
	A, Alpha    float64
}

func (s *Server) setPage(c *gin.Context, l *loaded) {
	sum := summarise(l)
	d := map[string]any{"Set": l.set, "Base": base(l.set), "Files": l.set.Files, "Kind": sum.Kind, "Open": sum.Live != "", "Loads": sum.Loads,
		"Partial": sum.Partial}
	if l.err != nil {
		d["Err"] = l.err.Error()
		s.render(c, "set", d)
		return
	}
	if n := l.stats.Corrupt + l.stats.RefusedCount; n > 0 {
		d["Skipped"] = fmt.Sprintf("%d corrupt or refused line(s) skipped", n)
	}
	d["Groups"] = groupRows(l, l.report.Groups)
	if g := interopGridOf(l.recs); g != nil {
		d["Interop"] = g
	}
	var cmps []cmpRow
	for _, cm := range l.report.Comparisons {
		cmps = append(cmps, cmpRow{C: cm, Label: fmt.Sprintf("%s vs %s, page %s, link %s, %s", cm.Protocol, cm.Baseline, cm.Page, cm.Link, cm.Mode),
			Href: s.compareHref(l, cm), A: analysis.EffectSizeA(cm.MannWhitney, cm.N, cm.BaselineN), Alpha: l.report.Options.Alpha})
	}
	d["Comparisons"] = cmps
	d["Options"] = s.options([]*loaded{l}, "", "")
	if l.study != nil {
		d["Study"] = l.study
	} else if body, err := l.report.HTMLBody(); err == nil {
		d["Report"] = body
	} else {
		d["Report"] = template.HTMLEscapeString(err.Error())
	}
	s.render(c, "set", d)
}

// compareHref links a report comparison to the compare page of its two groups.
func (s *Server) compareHref(l *loaded, cm *analysis.Comparison) string {
	var a, b string
	for _, g := range l.report.Groups {
		switch {
		case g.Key == cm.Key:
			a = groupID(g)
		case g.Protocol == cm.Baseline && g.Page == cm.Page && g.Link == cm.Link && g.Mode == cm.Mode && g.Settings == cm.Settings:
			b = groupID(g)
		}
	}
	if a == "" || b == "" {
		return ""
	}
	return "/compare?a=" + l.set.ID + "/" + b + "&b=" + l.set.ID + "/" + a
}

// loadRow is one load of a group page.
type loadRow struct {
	R                   *result.Record
	Href, Time, Outcome string
	Median              bool
}

func (s *Server) groupPage(c *gin.Context, l *loaded, id string) {
	g := l.group(id)
	if g == nil {
		s.fail(c, http.StatusNotFound, "no group "+strconv.Quote(id)+" in "+l.set.Name)
		return
	}
	label := l.label(g)
	var ecdf, box bytes.Buffer
	if err := analysis.WriteGroupPlot(&ecdf, analysis.ECDFPlot, label, []string{g.Protocol}, []*analysis.Group{g}, analysis.PLT, "svg"); err != nil {
		ecdf.Reset()
		ecdf.WriteString(template.HTMLEscapeString(err.Error()))
	}
	if err := analysis.WriteGroupPlot(&box, analysis.BoxPlot, label, []string{g.Protocol}, []*analysis.Group{g}, analysis.PLT, "svg"); err != nil {
		box.Reset()
		box.WriteString(template.HTMLEscapeString(err.Error()))
	}
	var rows []loadRow
	for _, r := range g.Loads() {
		rows = append(rows, loadRow{R: r, Href: base(l.set) + "load/" + strconv.Itoa(l.loadIndex(r)),
			Time: r.Time.UTC().Format("15:04:05"), Outcome: result.Classify(r).String(), Median: r == g.MedianLoad})
	}
	s.render(c, "group", map[string]any{"Set": l.set, "Base": base(l.set), "Label": label, "G": g,
		"ECDF": analysis.InlineSVG(ecdf.String()), "Box": analysis.InlineSVG(box.String()), "Loads": rows})
}

// record returns the load with URL ID n.
func (l *loaded) record(n string) *result.Record {
	i, err := strconv.Atoi(n)
	if err != nil || i < 0 || i >= len(l.recs) || !l.recs[i].IsLoad() {
		return nil
	}
	return l.recs[i]
}

// groupOf returns the group a load belongs to.
func (l *loaded) groupOf(r *result.Record) *analysis.Group {
	for _, g := range l.report.Groups {
		for _, x := range g.Loads() {
			if x == r {
				return g
			}
		}
	}
	return nil
}

// direction is one row of the emulator table.
type direction struct {
	Name string
	D    result.Direction
}

func (s *Server) loadPage(c *gin.Context, l *loaded, n string) {
	r := l.record(n)
	if r == nil {
		s.fail(c, http.StatusNotFound, "no page load "+strconv.Quote(n)+" in "+l.set.Name)
		return
	}
	d := map[string]any{"Set": l.set, "Base": base(l.set), "Facts": facts(r), "Resources": r.Resources,
		"Title":     fmt.Sprintf("%s run %d: %s, PLT %.1f ms", r.Experiment, r.Run, r.Protocol, r.PLTMs),
		"Artifacts": s.artifacts(l, r, n)}
	if g := l.groupOf(r); g != nil {
		d["GroupHref"], d["GroupLabel"] = base(l.set)+"group/"+groupID(g), l.label(g)
	}
	if len(r.Resources) > 0 || r.Document != nil {
		var buf bytes.Buffer
		if err := analysis.WriteWaterfall(&buf, r); err == nil {
			d["Waterfall"] = buf.String()
		}
	}
	if r.Visual != nil {
		d["Visual"] = r.Visual
	}
	if e := r.Emulator; e != nil {
		d["Emulator"] = []direction{{"down (server to browser)", e.Down}, {"up (browser to server)", e.Up}}
	}
	s.render(c, "load", d)
}

// frameURL is a filmstrip thumbnail as a data: URI (the CSP allows data: images only).
func frameURL(jpeg []byte) template.URL {
	return template.URL("data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(jpeg))
}

// facts are the load's recorded facts, in the order a reader checks them.
func facts(r *result.Record) [][2]string {
	f := [][2]string{
		{"experiment, run", fmt.Sprintf("%s, run %d", r.Experiment, r.Run)},
		{"time", r.Time.UTC().Format("2006-01-02 15:04:05.000 UTC")},
		{"protocol requested, observed", r.Protocol + ", " + r.ObservedProtocol},
		{"mode", string(r.Mode)},
		{"outcome", result.Classify(r).String()},
		{"valid", strconv.FormatBool(r.Valid) + " " + r.InvalidReason},
		{"page", fmt.Sprintf("%s (%d objects, %d bytes)", r.Page.Spec, r.Page.Objects, r.Page.TotalBytes)},
		{"link", fmt.Sprintf("%s (down %d bit/s, up %d bit/s, RTT %g ms, loss %g, queue %d B, shaper %s)",
			r.Link.Spec, r.Link.DownBps, r.Link.UpBps, r.Link.RTTMs, r.Link.Loss, r.Link.QueueBytes, r.Link.Shaper)},
		{"PLT, TTFB, FCP, DCL (ms)", fmt.Sprintf("%.1f, %.1f, %.1f, %.1f", r.PLTMs, r.TTFBMs, r.FCPMs, r.DCLMs)},
		{"connect, TLS (ms)", fmt.Sprintf("%.1f, %.1f", r.ConnectMs, r.TLSMs)},
		{"timed out", strconv.FormatBool(r.TimedOut)},
		{"TCP CC, TLS version", r.TCPCC + ", " + r.TLSVersion},
		{"resumed, 0-RTT", fmt.Sprintf("%t, %t", r.Resumed, r.Used0RTT)},
		{"browser", r.Browser},
	}
	if len(r.Origins) > 0 {
		var hs []string
		for _, o := range r.Origins {
			h := fmt.Sprintf("%s: %d connection(s)", o.Host, o.Conns)
			if o.Shared > 0 {
				h += fmt.Sprintf(", %d shared with another host", o.Shared)
			}
			hs = append(hs, h)
		}
		f = append(f, [2]string{"origins (connections the server served each on)", strings.Join(hs, "; ")},
			[2]string{"coalesced (one connection served several hosts)", strconv.FormatBool(r.Coalesced)})
	}
	if rp := r.Replay; rp != nil {
		v := fmt.Sprintf("%s (sha256 %s): %d hits (%d by query), %d misses", rp.Archive, rp.Digest, rp.Hits, rp.QueryMatches, rp.Misses)
		if len(rp.Missed) > 0 {
			v += ": " + strings.Join(rp.Missed, ", ")
		}
		if rp.Deterministic {
			v += "; deterministic Date and Math.random"
		}
		f = append(f, [2]string{"replayed archive", v})
	}
	if r.ConfigHash != "" {
		f = append(f, [2]string{"config hash, shard", r.ConfigHash + ", " + r.Shard})
	}
	return f
}
