package analysis

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// rec returns a valid cold load of page p over link l.
func rec(proto string, ms float64) *result.Record {
	return &result.Record{V: 1, Experiment: "e", Protocol: proto, Mode: result.Cold, Valid: true, PLTMs: ms,
		DeadlineMs: 60000, Page: result.Page{Spec: "p"}, Link: result.Link{Spec: "l"}}
}

func textOf(t *testing.T, rep *Report) string {
	t.Helper()
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func groupOf(t *testing.T, rep *Report, proto string) *Group {
	t.Helper()
	for _, g := range rep.Groups {
		if g.Protocol == proto {
			return g
		}
	}
	t.Fatalf("no %s group in %+v", proto, rep.Groups)
	return nil
}

// TestHarnessErrorsCounted (issue 10 item 3): harness_error lines are counted per group as lost
// to harness, an imbalance between protocols is warned about, and a harness error whose load a
// resumed run made later is not counted.
func TestHarnessErrorsCounted(t *testing.T) {
	var recs []*result.Record
	for i := range 4 {
		recs = append(recs, rec("h1", 100+float64(i)), rec("h2", 90+float64(i)))
	}
	lost := rec("h2", 0)
	lost.Kind, lost.Valid, lost.Error, lost.Run = result.KindHarnessError, false, "launch browser: boom", 7
	again := rec("h1", 0)
	again.Kind, again.Valid, again.Run = result.KindHarnessError, false, 8
	madeLater := rec("h1", 120)
	madeLater.Run = 8
	recs = append(recs, lost, again, madeLater)
	rep := Analyze(recs, Options{})
	if g := groupOf(t, rep, "h2"); g.Lost != 1 {
		t.Errorf("h2 lost %d, want 1", g.Lost)
	}
	if g := groupOf(t, rep, "h1"); g.Lost != 0 {
		t.Errorf("h1 lost %d, want 0 (its load was made later)", g.Lost)
	}
	txt := textOf(t, rep)
	for _, want := range []string{"lost to harness", "unbalanced between protocols (h1 0, h2 1)", "2 lost to harness"} {
		if !strings.Contains(txt, want) {
			t.Errorf("report lacks %q:\n%s", want, txt)
		}
	}
}

// TestGroupsBySettings (issue 11 item 6): loads of one page and link made with different
// congestion control and TLS are never pooled; the report names each group's settings and warns.
func TestGroupsBySettings(t *testing.T) {
	var recs []*result.Record
	for i := range 5 {
		a, b := rec("h1", 100+float64(i)), rec("h1", 200+float64(i))
		a.Experiment, a.Settings = "cubic12", &result.Settings{TCPCC: "cubic", TLS: "1.2"}
		b.Experiment, b.TCPCC, b.TLSVersion = "bbr13", "bbr", "1.3" // an older record: observed settings
		h3 := rec("h3", 300)
		h3.Experiment = "bbr13"
		recs = append(recs, a, b, h3)
	}
	rep := Analyze(recs, Options{})
	if len(rep.Groups) != 3 {
		t.Fatalf("%d groups, want 3 (h1 cubic, h1 bbr, h3 bbr)", len(rep.Groups))
	}
	for _, g := range rep.Groups {
		if g.Runs != 5 {
			t.Errorf("group %+v has %d runs, want 5", g.Key, g.Runs)
		}
	}
	if len(rep.Comparisons) != 1 || rep.Comparisons[0].Settings != "tcp_cc bbr, TLS 1.3" {
		t.Errorf("comparisons %+v: want h3 vs h1 within the bbr/TLS 1.3 settings only", rep.Comparisons)
	}
	txt := textOf(t, rep)
	for _, want := range []string{"[tcp_cc cubic, TLS 1.2]", "[tcp_cc bbr, TLS 1.3]", "different settings are reported separately"} {
		if !strings.Contains(txt, want) {
			t.Errorf("report lacks %q:\n%s", want, txt)
		}
	}
}

// TestNetworkFailuresCensored (issue 11 item 9): a handshake failure is a failed measurement of
// its protocol, censored at the deadline like a timeout, not an invalid load left out.
func TestNetworkFailuresCensored(t *testing.T) {
	var recs []*result.Record
	for i := range 4 {
		recs = append(recs, rec("h3", 100+float64(i)))
	}
	f := rec("h3", 0)
	f.Valid, f.InvalidReason = false, "navigation failed: net::ERR_QUIC_PROTOCOL_ERROR"
	wrong := rec("h3", 0)
	wrong.Valid, wrong.InvalidReason = false, `page /index.html: protocol "h2", requested h3`
	recs = append(recs, f, wrong)
	rep := Analyze(recs, Options{})
	if txt := textOf(t, rep); !strings.Contains(txt, "network failures (censored at the deadline): h3: ERR_QUIC_PROTOCOL_ERROR x1") {
		t.Errorf("report does not list the network failure:\n%s", txt)
	}
	g := groupOf(t, rep, "h3")
	if g.NetFailed != 1 || g.InvalidTotal() != 1 || g.Runs != 6 || len(g.Sample) != 5 || !math.IsInf(g.Max, 1) {
		t.Errorf("group: %d failed, %d invalid, %d runs, sample %v: want 1, 1, 6 and the failure censored", g.NetFailed, g.InvalidTotal(), g.Runs, g.Sample)
	}
	if g.NetErrors["ERR_QUIC_PROTOCOL_ERROR"] != 1 {
		t.Errorf("net errors %v", g.NetErrors)
	}
}

// TestCountsAndNA (issue 11 item 10): n < 6 gives no ratio CI and a CI from 0 to infinity
// prints n/a (p-values that underflow: quantity.TestFormatP).
func TestCountsAndNA(t *testing.T) {
	rep := Analyze([]*result.Record{rec("h1", 1000), rec("h2", 859)}, Options{})
	c := rep.Comparisons[0]
	if !math.IsNaN(c.RatioLow) || !regexp.MustCompile(`0\.859\s+n/a\s`).MatchString(textOf(t, rep)) {
		t.Errorf("n=1 ratio CI [%v, %v]; want n/a\n%s", c.RatioLow, c.RatioHigh, textOf(t, rep))
	}
	if got := fmtRatioCI(0, math.Inf(1)); got != "n/a" {
		t.Errorf("fmtRatioCI(0, inf) = %q, want n/a", got)
	}
}

// TestValidateOnRead (issue 11 item 10): out-of-range records are refused on read and named.
func TestValidateOnRead(t *testing.T) {
	good := rec("h1", 500)
	huge := rec("h1", 1e308)
	unknown := rec("h9", 500)
	neg := rec("h2", -1)
	in := jsonlOf([]*result.Record{good, huge, unknown, neg})
	var logBuf bytes.Buffer
	recs, _, st, err := readRecords(strings.NewReader(in), "f.jsonl", slog.New(slog.NewTextHandler(&logBuf, nil)))
	if err != nil || len(recs) != 1 || st.RefusedCount != 3 || st.Corrupt != 0 {
		t.Fatalf("read %d records, stats %+v, err %v: want 1 kept and 3 refused", len(recs), st, err)
	}
	for _, want := range []string{"f.jsonl:2: plt_ms 1e+308", `f.jsonl:3: protocol "h9": accepted h1, h2, h3`, "f.jsonl:4: plt_ms -1"} {
		if !slices.ContainsFunc(st.Refused, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("refused %q lacks %q", st.Refused, want)
		}
	}
}

// TestDefaultBaseline (issue 11 item 11): without h1 the baseline is the first measured protocol
// in table order, for the report as for run's summary.
func TestDefaultBaseline(t *testing.T) {
	rep := Analyze([]*result.Record{rec("h3", 90), rec("h2", 100)}, Options{})
	if rep.Options.Baseline != "h2" || len(rep.Comparisons) != 1 {
		t.Fatalf("baseline %q, %d comparisons; want h2 and 1", rep.Options.Baseline, len(rep.Comparisons))
	}
	if !strings.Contains(textOf(t, rep), "median(h2)") {
		t.Error("the methods footer does not name the baseline used")
	}
	for _, tc := range []struct {
		in   []string
		want string
	}{{[]string{"h3", "h1"}, "h1"}, {[]string{"h3", "h2"}, "h2"}, {[]string{"h3"}, "h3"}, {nil, ""}} {
		if got := BaselineFor(tc.in); got != tc.want {
			t.Errorf("BaselineFor(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestBoxMatchesTable (issue 11 item 8): the box's quartiles are the table's (type 7).
func TestBoxMatchesTable(t *testing.T) {
	var recs []*result.Record
	for v := 100.0; v <= 900; v += 100 {
		recs = append(recs, rec("h1", v))
	}
	g := Analyze(recs, Options{}).Groups[0]
	b, err := boxFor(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.Quartile1 != g.P25 || b.Median != g.Median || b.Quartile3 != g.P75 || g.P25 != 300 || g.P75 != 700 {
		t.Errorf("box %v/%v/%v, table %v/%v/%v: want equal, 300/500/700", b.Quartile1, b.Median, b.Quartile3, g.P25, g.Median, g.P75)
	}
}

// TestNaturalOrder: groups sort by the numbers in their specs, not as strings.
func TestNaturalOrder(t *testing.T) {
	var recs []*result.Record
	for _, l := range []string{"rate=20mbit", "rate=5mbit", "rate=100mbit"} {
		r := rec("h1", 100)
		r.Link.Spec = l
		recs = append(recs, r)
	}
	var got []string
	for _, g := range Analyze(recs, Options{}).Groups {
		got = append(got, g.Link)
	}
	if want := []string{"rate=5mbit", "rate=20mbit", "rate=100mbit"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// TestWarningsCapped: a binary file gives at most MaxWarnings warnings and one summary line.
func TestWarningsCapped(t *testing.T) {
	var in strings.Builder
	for i := range 500 {
		fmt.Fprintf(&in, "\x00\x01garbage %d\n", i)
	}
	var logBuf bytes.Buffer
	_, _, st, _ := readRecords(strings.NewReader(in.String()), "bin", slog.New(slog.NewTextHandler(&logBuf, nil)))
	if n := strings.Count(logBuf.String(), "\n"); st.Corrupt != 500 || n != MaxWarnings+1 {
		t.Errorf("%d corrupt, %d log lines; want 500 and %d", st.Corrupt, n, MaxWarnings+1)
	}
}

// TestPartialReport (issue 11 item 7): a file with fewer loads than scheduled says it is partial.
func TestPartialReport(t *testing.T) {
	var recs []*result.Record
	for i := range 3 {
		r := rec("h1", 100)
		r.Run, r.Scheduled = i, 10
		recs = append(recs, r)
	}
	rep := Analyze(recs, Options{})
	if !rep.Partial || !strings.Contains(textOf(t, rep), "PARTIAL: experiment e made 3 of its 10 scheduled loads") {
		t.Errorf("partial %v:\n%s", rep.Partial, textOf(t, rep))
	}
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "PARTIAL") {
		t.Errorf("the markdown report (a reproduction's report.md) does not say PARTIAL:\n%s", md.String())
	}
	recs[0].Scheduled, recs[1].Scheduled, recs[2].Scheduled = 3, 3, 3
	if Analyze(recs, Options{}).Partial {
		t.Error("a complete experiment reported partial")
	}
}

// TestProtocolAndModeAlike: protocol and mode are read alike, as written in lower case: "H2"
// and "hot" (and "Cold") are refused, each naming what is accepted (on 3e73eb5 "hot" made a
// group of its own while "H2" was refused).
func TestProtocolAndModeAlike(t *testing.T) {
	withMode := func(proto string, m result.Mode) *result.Record { r := rec(proto, 500); r.Mode = m; return r }
	in := jsonlOf([]*result.Record{withMode("h2", result.Cold), withMode("h2", ""), withMode("H2", result.Cold), withMode("h2", "hot"), withMode("h2", "Cold")})
	recs, _, st, err := readRecords(strings.NewReader(in), "f.jsonl", nil)
	if err != nil || len(recs) != 2 || st.RefusedCount != 3 {
		t.Fatalf("read %d records, stats %+v, err %v: want 2 kept and 3 refused", len(recs), st, err)
	}
	for _, want := range []string{`f.jsonl:3: protocol "H2": accepted h1, h2, h3`, `f.jsonl:4: mode "hot": accepted cold, warm`, `f.jsonl:5: mode "Cold": accepted cold, warm`} {
		if !slices.ContainsFunc(st.Refused, func(s string) bool { return strings.HasPrefix(s, want) }) {
			t.Errorf("refused %q lacks %q", st.Refused, want)
		}
	}
}

// TestControlsEscaped: terminal escape codes in a result file's strings (page spec, link,
// experiment, invalid reason) are written escaped by the text, markdown and CSV reports (on
// 3e73eb5 they were printed raw), and an escaper's writes split inside a C1 control still
// escape it.
func TestControlsEscaped(t *testing.T) {
	bad := rec("h1", 500)
	bad.Page.Spec, bad.Link.Spec, bad.Experiment = "\x1b[31mRED", "none\x1b[2J", "e\x1b]0;title\x07"
	inv := rec("h2", 600)
	inv.Page, inv.Link, inv.Valid, inv.InvalidReason = bad.Page, bad.Link, false, "bad\x1b[5m\u009b"
	rep := Analyze([]*result.Record{bad, inv, rec("h1", 400)}, Options{})
	for _, f := range []Format{Text, Markdown, CSV} {
		var b bytes.Buffer
		if err := rep.Write(&b, f); err != nil {
			t.Fatal(err)
		}
		if out := b.String(); strings.ContainsAny(out, "\x1b\x07\u009b") || !strings.Contains(out, `\x1b[31mRED`) {
			t.Errorf("%s report holds a raw control character or lacks the escaped spec:\n%s", f, out)
		}
	}
	var b bytes.Buffer
	w := escapeControls(&b)
	w.Write([]byte("a\xc2"))
	w.Write([]byte("\x9bb\xc2"))
	w.Write([]byte("\xa9\t\n"))
	if got := b.String(); got != "a\\u009bb©\t\n" {
		t.Errorf("split writes: %q", got)
	}
}
