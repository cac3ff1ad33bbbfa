package view

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

const (
	studyFile = "../testdata/carlucci2015-quick-a9b0be5.jsonl"
	runDir    = "testdata/run"
)

// newTest serves roots with opts on an httptest server.
func newTest(t *testing.T, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts
}

// get fetches path and returns the status and body.
func get(t *testing.T, ts *httptest.Server, path string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// setID returns the ID of the set whose name ends with suffix.
func setID(t *testing.T, s *Server, suffix string) string {
	t.Helper()
	for _, st := range s.Sets() {
		if strings.HasSuffix(st.Name, suffix) {
			return st.ID
		}
	}
	t.Fatalf("no set %s in %v", suffix, s.Sets())
	return ""
}

// TestNumbersMatchReportJSON checks that every median and Mann-Whitney p-value on a set's
// page is the one 'pltlab report --format json' gives for the same file.
func TestNumbersMatchReportJSON(t *testing.T) {
	for _, file := range []string{studyFile, runDir + "/run.jsonl"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, ts := newTest(t, Options{Roots: []string{file}})
			_, page, _ := get(t, ts, "/set/"+s.Sets()[0].ID+"/")
			rep, err := analysis.AnalyzeFiles([]string{file}, nil, analysis.Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := rep.WriteJSON(&buf); err != nil {
				t.Fatal(err)
			}
			var js struct {
				Groups []struct {
					Page, Link, Mode, Protocol, Settings string
					MedianMs                             *float64 `json:"median_ms"`
				} `json:"groups"`
				Comparisons []struct {
					Page, Link, Mode, Protocol, Baseline string
					P                                    *float64 `json:"p_mann_whitney"`
				} `json:"comparisons"`
			}
			if err := json.Unmarshal(buf.Bytes(), &js); err != nil {
				t.Fatal(err)
			}
			if len(js.Groups) == 0 {
				t.Fatal("report has no groups")
			}
			for _, g := range js.Groups {
				want := ""
				if g.MedianMs != nil {
					want = strconv.FormatFloat(*g.MedianMs, 'g', -1, 64)
				}
				re := regexp.MustCompile(`<tr class="group" data-protocol="` + regexp.QuoteMeta(g.Protocol) + `" data-page="` + regexp.QuoteMeta(g.Page) +
					`" data-link="` + regexp.QuoteMeta(escape(g.Link)) + `" data-mode="` + g.Mode + `" data-settings="[^"]*" data-median="([^"]*)"`)
				m := re.FindStringSubmatch(page)
				if m == nil {
					t.Fatalf("group %s %s %s %s not on the page", g.Protocol, g.Page, g.Link, g.Mode)
				}
				if m[1] != want {
					t.Errorf("group %s %s: page median %q, report json %q", g.Protocol, g.Link, m[1], want)
				}
			}
			if len(js.Comparisons) == 0 {
				t.Fatal("report has no comparisons")
			}
			for _, c := range js.Comparisons {
				want := ""
				if c.P != nil {
					want = strconv.FormatFloat(*c.P, 'g', -1, 64)
				}
				re := regexp.MustCompile(`<tr class="comparison" data-protocol="` + c.Protocol + `" data-baseline="` + c.Baseline + `" data-page="` + regexp.QuoteMeta(c.Page) +
					`" data-link="` + regexp.QuoteMeta(escape(c.Link)) + `" data-mode="` + c.Mode + `" data-p="([^"]*)"`)
				m := re.FindStringSubmatch(page)
				if m == nil {
					t.Fatalf("comparison %s vs %s %s not on the page", c.Protocol, c.Baseline, c.Link)
				}
				if m[1] != want {
					t.Errorf("comparison %s vs %s %s: page p %q, report json %q", c.Protocol, c.Baseline, c.Link, m[1], want)
				}
			}
		})
	}
}

// escape is html/template's attribute escaping of the characters in link specs.
func escape(s string) string { return strings.ReplaceAll(s, "%", "%") }

// TestStudyPage checks the findings table comes first, links to sections that exist, and that
// the report's figures and parts are served.
func TestStudyPage(t *testing.T) {
	s, ts := newTest(t, Options{Roots: []string{studyFile}, Study: fakeStudy})
	id := setID(t, s, ".jsonl")
	code, page, _ := get(t, ts, "/set/"+id+"/")
	if code != 200 || !strings.Contains(page, `<section id="findings">`) || !strings.Contains(page, `href="#lossy"`) {
		t.Fatalf("study page (%d) lacks the findings table or its links:\n%.2000s", code, page)
	}
	if strings.Index(page, `id="findings"`) > strings.Index(page, `class="study-report"`) {
		t.Error("findings table is not first")
	}
	if code, _, h := get(t, ts, "/set/"+id+"/fig1.svg"); code != 200 || h.Get("Content-Type") != "image/svg+xml" {
		t.Errorf("figure: %d %s", code, h.Get("Content-Type"))
	}
	if code, _, _ := get(t, ts, "/set/"+id+"/nofig.svg"); code != 404 {
		t.Errorf("missing figure: %d, want 404", code)
	}
}

// fakeStudy is a StudyFunc with one finding that points at section "lossy".
func fakeStudy(recs []*result.Record) (*Study, error) {
	return &Study{Title: "a study", Body: `<section id="lossy"><h2>Lossy</h2><img src="fig1.svg"></section>`,
		Findings: []Finding{{Claim: "QUIC is faster", Verdict: "reproduced", Evidence: "p = 0.001", See: []Anchor{{"Lossy", "lossy"}}}},
		Figure: func(w io.Writer, file, format string) (bool, error) {
			if file != "fig1" {
				return false, nil
			}
			_, err := io.WriteString(w, "<svg></svg>")
			return true, err
		}}, nil
}

// TestPagesOfARun follows the index to a group, a load and its HAR, and a compare page.
func TestPagesOfARun(t *testing.T) {
	s, ts := newTest(t, Options{Roots: []string{runDir}})
	code, idx, h := get(t, ts, "/")
	if code != 200 || h.Get("Content-Security-Policy") != CSP {
		t.Fatalf("index: %d, CSP %q", code, h.Get("Content-Security-Policy"))
	}
	if strings.Contains(idx, ".loads.jsonl") {
		t.Error("a NetLog load index is listed as a result set")
	}
	id := setID(t, s, "run.jsonl")
	_, page, _ := get(t, ts, "/set/"+id+"/")
	groups := regexp.MustCompile(`href="(/set/[^"]+/group/[0-9a-f]+)"`).FindAllStringSubmatch(page, -1)
	if len(groups) != 3 {
		t.Fatalf("%d group links, want 3 (h1, h2, h3)", len(groups))
	}
	_, gp, _ := get(t, ts, groups[1][1])
	if !strings.Contains(gp, `id="ecdf"`) || !strings.Contains(gp, "<svg") || !strings.Contains(gp, "(median load)") {
		t.Fatalf("group page lacks its ECDF or median load:\n%.1500s", gp)
	}
	load := regexp.MustCompile(`href="(/set/[^"]+/load/[0-9]+)"`).FindStringSubmatch(gp)
	_, lp, _ := get(t, ts, load[1])
	if !strings.Contains(lp, `id="waterfall"`) || !strings.Contains(lp, "Evidence files") {
		t.Fatalf("load page lacks its waterfall or evidence files:\n%.1500s", lp)
	}
	har := regexp.MustCompile(`href="(/set/[^"]+/artifact/[0-9]+/[0-9]+/load\.har)"`).FindStringSubmatch(lp)
	if har == nil {
		t.Fatal("no HAR download link")
	}
	code, body, h := get(t, ts, har[1])
	if code != 200 || !strings.HasPrefix(h.Get("Content-Disposition"), "attachment") || !json.Valid([]byte(body)) {
		t.Fatalf("HAR download: %d %q, valid JSON %v", code, h.Get("Content-Disposition"), json.Valid([]byte(body)))
	}
	a, b := strings.TrimPrefix(groups[1][1], "/set/"), strings.TrimPrefix(groups[2][1], "/set/")
	a, b = strings.Replace(a, "/group/", "/", 1), strings.Replace(b, "/group/", "/", 1)
	code, cp, _ := get(t, ts, "/compare?a="+a+"&b="+b)
	for _, want := range []string{`class="comparison"`, `class="ecdf"`, `class="waterfall"`, "Settings that differ"} {
		if code != 200 || !strings.Contains(cp, want) {
			t.Fatalf("compare page (%d) lacks %q", code, want)
		}
	}
	if !strings.Contains(cp, "<td>protocol</td>") {
		t.Error("compare of h2 and h3 does not list protocol among the settings that differ")
	}
}

// TestSafety: bad paths, traversal, symlinks out of the tree, huge files, methods, binding.
func TestSafety(t *testing.T) {
	t.Run("bad path", func(t *testing.T) {
		_, err := New(Options{Roots: []string{"/no/such/dir"}})
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), `"/no/such/dir"`) {
			t.Fatalf("error %v: want one line naming the path", err)
		}
	})
	root := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.har")
	os.WriteFile(secret, []byte(`{"secret":true}`), 0o644)
	os.WriteFile(filepath.Join(outside, "other.jsonl"), mustRead(t, runDir+"/run.jsonl"), 0o644)
	// a results file whose first load lists evidence outside the tree, by .. and by symlink
	recs := mustRead(t, runDir+"/run.jsonl")
	lines := strings.Split(strings.TrimSpace(string(recs)), "\n")
	var r map[string]any
	json.Unmarshal([]byte(lines[3]), &r)
	r["artifacts"] = []string{"../../" + strings.TrimPrefix(secret, "/"), "evil/link.har", "ok/load.har"}
	b, _ := json.Marshal(r)
	lines[3] = string(b)
	os.WriteFile(filepath.Join(root, "r.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "evil"), 0o755)
	os.Symlink(secret, filepath.Join(root, "evil", "link.har"))
	os.MkdirAll(filepath.Join(root, "ok"), 0o755)
	os.WriteFile(filepath.Join(root, "ok", "load.har"), []byte(`{"log":{}}`), 0o644)
	os.Symlink(filepath.Join(outside, "other.jsonl"), filepath.Join(root, "linked.jsonl"))
	os.Symlink(outside, filepath.Join(root, "linkdir"))
	huge := filepath.Join(root, "huge.jsonl")
	os.WriteFile(huge, []byte(lines[1]+"\n"), 0o644)
	os.Truncate(huge, 2<<20) // sparse: over the limit below
	s, ts := newTest(t, Options{Roots: []string{root}, MaxFileBytes: 1 << 20})

	t.Run("symlinks out of the tree are not listed", func(t *testing.T) {
		for _, st := range s.Sets() {
			if strings.Contains(st.Name, "linked") || strings.Contains(st.Name, "other") {
				t.Errorf("set %s is outside the tree", st.Name)
			}
		}
	})
	t.Run("evidence outside the tree is not served", func(t *testing.T) {
		id := setID(t, s, "r.jsonl")
		for i, want := range []int{404, 404, 200} {
			code, body, _ := get(t, ts, "/set/"+id+"/artifact/3/"+strconv.Itoa(i)+"/x")
			if code != want || strings.Contains(body, `"secret":true`) {
				t.Errorf("artifact %d: %d (want %d), body %.80q", i, code, want, body)
			}
		}
	})
	t.Run("traversal in the URL", func(t *testing.T) {
		for _, p := range []string{"/set/../../etc/passwd", "/static/..%2f..%2fview.go", "/set/x/%2e%2e/%2e%2e/etc/passwd", "/static/../view_test.go"} {
			code, body, _ := get(t, ts, p)
			if code == 200 && (strings.Contains(body, "root:") || strings.Contains(body, "package view")) {
				t.Errorf("%s served a file: %d", p, code)
			}
		}
	})
	t.Run("huge file", func(t *testing.T) {
		id := setID(t, s, "huge.jsonl")
		code, page, _ := get(t, ts, "/set/"+id+"/")
		if code != 200 || !strings.Contains(page, "bytes, over the") {
			t.Fatalf("huge file page (%d) does not say it is over the limit", code)
		}
		_, idx, _ := get(t, ts, "/")
		if !strings.Contains(idx, "bytes, over the") {
			t.Error("index does not say the huge file is over the limit")
		}
	})
	t.Run("read-only", func(t *testing.T) {
		resp, err := http.Post(ts.URL+"/", "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST: %d, want 405", resp.StatusCode)
		}
	})
	t.Run("loopback", func(t *testing.T) {
		for addr, want := range map[string]bool{"127.0.0.1:8080": true, "localhost:1": true, "[::1]:80": true, ":8080": false, "0.0.0.0:80": false, "10.0.0.1:80": false} {
			if got, err := IsLoopback(addr); err != nil || got != want {
				t.Errorf("IsLoopback(%s) = %v, %v; want %v", addr, got, err, want)
			}
		}
		if _, err := IsLoopback("8080"); err == nil {
			t.Error("IsLoopback(8080): no error")
		}
	})
	t.Run("no external assets", func(t *testing.T) {
		id := setID(t, s, "r.jsonl")
		for _, p := range []string{"/", "/set/" + id + "/", "/static/live.js", "/static/view.css"} {
			_, body, _ := get(t, ts, p)
			if m := regexp.MustCompile(`(src|href)="(https?:)?//`).FindString(body); m != "" {
				t.Errorf("%s refers to an external asset: %s", p, m)
			}
		}
	})
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLiveEvents appends lines to a file while its event stream is open and checks the next
// update counts them.
func TestLiveEvents(t *testing.T) {
	lines := strings.SplitAfter(string(mustRead(t, runDir+"/run.jsonl")), "\n")
	f := filepath.Join(t.TempDir(), "live.jsonl")
	os.WriteFile(f, []byte(strings.Join(lines[:4], "")), 0o644)
	s, ts := newTest(t, Options{Roots: []string{f}, Poll: 20 * time.Millisecond})
	resp, err := http.Get(ts.URL + "/set/" + s.Sets()[0].ID + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	next := func() update {
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				var u update
				if err := json.Unmarshal([]byte(data), &u); err != nil {
					t.Fatal(err)
				}
				return u
			}
		}
		t.Fatal("event stream ended")
		return update{}
	}
	first := next()
	fh, _ := os.OpenFile(f, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString(strings.Join(lines[4:], ""))
	fh.Close()
	second := next()
	if first.Loads >= second.Loads || second.Loads != 6 || second.Scheduled != 9 || len(second.Groups) != 3 {
		t.Fatalf("updates: first %d loads, then %d of %d scheduled in %d groups; want 6 of 9 in 3", first.Loads, second.Loads, second.Scheduled, len(second.Groups))
	}
	if !second.Recent[0].Fresh {
		t.Error("the appended load is not marked fresh")
	}
}

// TestShardedRunMerged splits a run into two shard files of one configuration and checks the
// index lists one set with every load, and that a third file of another configuration stays
// apart.
func TestShardedRunMerged(t *testing.T) {
	dir := t.TempDir()
	lines := strings.Split(strings.TrimSpace(string(mustRead(t, runDir+"/run.jsonl"))), "\n")
	shards := [2][]string{}
	for i, l := range lines {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		r["shard"] = fmt.Sprintf("%d/2", i%2)
		b, _ := json.Marshal(r)
		shards[i%2] = append(shards[i%2], string(b))
	}
	for i, sh := range shards {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i)), []byte(strings.Join(sh, "\n")+"\n"), 0o644)
	}
	other := strings.ReplaceAll(strings.Join(shards[0], "\n"), `"config_hash":"`, `"config_hash":"f`)
	os.WriteFile(filepath.Join(dir, "zother.jsonl"), []byte(other+"\n"), 0o644)
	s, ts := newTest(t, Options{Roots: []string{dir}})
	sets := s.Sets()
	if len(sets) != 2 || len(sets[0].Files) != 2 || sets[0].Shards != 2 {
		t.Fatalf("sets %+v: want the two shards merged and the other configuration apart", sets)
	}
	_, idx, _ := get(t, ts, "/")
	if !strings.Contains(idx, "sharded run (2 shard files merged)") {
		t.Error("index does not say the run is sharded")
	}
	l, _ := s.set(sets[0].ID)
	// each shard's lines carry its own schedule's size (here 9 each): the set's is their sum
	if sm := summarise(l); sm.Loads != 6 || sm.Scheduled != 18 {
		t.Errorf("merged set: %d loads, %d scheduled; want 6 and 18", sm.Loads, sm.Scheduled)
	}
}

// TestLoadPageEvidence checks a shaped load measured with --visual and every artifact kind:
// its page shows the filmstrip and visual metrics, the emulator counters, and download links
// for its HAR, qlog and pcapng (the NetLog, left out of testdata for its size, is named as
// not found).
func TestLoadPageEvidence(t *testing.T) {
	s, ts := newTest(t, Options{Roots: []string{"testdata/shaped"}})
	id := setID(t, s, "shaped.jsonl")
	l, _ := s.set(id)
	n := -1
	for i, r := range l.recs {
		if r.IsLoad() && r.Protocol == "h3" {
			n = i
		}
	}
	_, page, _ := get(t, ts, "/set/"+id+"/load/"+strconv.Itoa(n))
	for _, want := range []string{`src="data:image/jpeg;base64,`, "SpeedIndex", `<table class="emulator">`, "queue drops",
		"(HAR,", "(qlog,", "(pcapng,", "netlog-h3-1.json <span class=\"error\">(not found"} {
		if !strings.Contains(page, want) {
			t.Errorf("load page lacks %q:\n%.3000s", want, page[strings.Index(page, "<h1>"):])
		}
	}
	pcap := regexp.MustCompile(`href="(/set/[^"]+/artifact/[0-9]+/[0-9]+/link\.pcapng)"`).FindStringSubmatch(page)
	if pcap == nil {
		t.Fatal("no pcapng link")
	}
	code, body, _ := get(t, ts, pcap[1])
	if code != 200 || len(body) < 28 || body[:4] != "\x0a\x0d\x0d\x0a" {
		t.Errorf("pcapng download: %d, %d bytes, magic %q", code, len(body), body[:min(4, len(body))])
	}
}

// TestArtifactsOfTwoRuns: two result sets of one experiment name, their --artifacts folders
// served beside them, hold the same relative evidence paths: each set's load links its own
// run's file (Record.ArtifactsDir), and a record that does not name its directory gets no link
// when several files match (on 8436f4a both sets linked the same HAR).
func TestArtifactsOfTwoRuns(t *testing.T) {
	root := t.TempDir()
	lines := strings.Split(strings.TrimSpace(string(mustRead(t, runDir+"/run.jsonl"))), "\n")
	for _, run := range []string{"a", "b"} {
		art := filepath.Join(root, run, "art")
		os.MkdirAll(filepath.Join(art, "exp", "run-0003"), 0o755)
		os.WriteFile(filepath.Join(art, "exp", "run-0003", "load.har"), []byte(`{"run":"`+run+`"}`), 0o644)
		var out []string
		for i, l := range lines {
			if i == 3 {
				var r map[string]any
				json.Unmarshal([]byte(l), &r)
				r["artifacts"] = []string{"exp/run-0003/load.har"}
				r["artifacts_dir"] = art
				if run == "b" {
					r["run"] = 3
				}
				b, _ := json.Marshal(r)
				l = string(b)
			}
			out = append(out, l)
		}
		os.WriteFile(filepath.Join(root, run, "results.jsonl"), []byte(strings.Join(out, "\n")+"\n"), 0o644)
	}
	s, ts := newTest(t, Options{Roots: []string{root}})
	for _, run := range []string{"a", "b"} {
		id := setID(t, s, run+"/results.jsonl")
		code, body, _ := get(t, ts, "/set/"+id+"/artifact/3/0/load.har")
		if code != 200 || !strings.Contains(body, `"run":"`+run+`"`) {
			t.Errorf("set %s: artifact %d %q, want its own run's file", run, code, body)
		}
	}
	// Without the directory, two candidates: no guess.
	noDir := strings.Replace(string(mustRead(t, filepath.Join(root, "a", "results.jsonl"))), `"artifacts_dir":"`+filepath.Join(root, "a", "art")+`",`, "", 1)
	os.WriteFile(filepath.Join(root, "a", "results.jsonl"), []byte(noDir), 0o644)
	s2, ts2 := newTest(t, Options{Roots: []string{root}})
	id := setID(t, s2, "a/results.jsonl")
	if code, body, _ := get(t, ts2, "/set/"+id+"/artifact/3/0/load.har"); code != 404 || !strings.Contains(body, "2 files under the served paths end in") {
		t.Errorf("ambiguous artifact: %d %.200q", code, body)
	}
}

// TestOneParsePerChange: many clients asking for a set at once after it changed share one
// parse (on 8436f4a each of 100 live clients re-read a 40 MB file: 90 s of parsing, no update
// within 15 s).
func TestOneParsePerChange(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "r.jsonl")
	os.WriteFile(path, mustRead(t, runDir+"/run.jsonl"), 0o644)
	s, _ := newTest(t, Options{Roots: []string{root}})
	var st *Set
	for _, x := range s.Sets() {
		st = x
	}
	s.load(st, nil)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte("\n"))
	f.Close()
	os.Chtimes(path, time.Now().Add(time.Second), time.Now().Add(time.Second))
	before := s.parsed.Load()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() { defer wg.Done(); s.load(st, nil) }()
	}
	wg.Wait()
	if n := s.parsed.Load() - before; n != 1 {
		t.Errorf("%d parses for one change and 50 clients, want 1", n)
	}
}

// TestStringsMatchReportText checks that the view prints the same strings as 'pltlab report'
// for the same file: every group's median and CI cell and every comparison's p-value cells are
// cells of the report's markdown tables, formatted alike (quantity.FormatMs, FormatCI, FormatP).
func TestStringsMatchReportText(t *testing.T) {
	for _, file := range []string{studyFile, runDir + "/run.jsonl"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, ts := newTest(t, Options{Roots: []string{file}})
			_, page, _ := get(t, ts, "/set/"+s.Sets()[0].ID+"/")
			rep, err := analysis.AnalyzeFiles([]string{file}, nil, analysis.Options{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := rep.WriteMarkdown(&buf); err != nil {
				t.Fatal(err)
			}
			cells := map[string]bool{}
			for _, line := range strings.Split(buf.String(), "\n") {
				for _, c := range strings.Split(line, "|") {
					c = strings.TrimSpace(c)
					cells[c], cells[strings.TrimSuffix(c, " (exact)")] = true, true
				}
			}
			groups := regexp.MustCompile(`(?s)<tr class="group" data-protocol=.*?</tr>`).FindAllString(page, -1)
			if len(groups) == 0 {
				t.Fatal("no group rows on the page")
			}
			td := regexp.MustCompile(`<td>([^<]*)</td>`)
			for _, row := range groups {
				tds := td.FindAllStringSubmatch(row, -1)
				if len(tds) < 7 {
					t.Fatalf("group row %q", row)
				}
				median := tds[5][1] // after runs, valid, censored, invalid, lost
				if !cells[median] {
					t.Errorf("the page's median %q is no cell of the report", median)
				}
			}
			comps := regexp.MustCompile(`(?s)<tr class="comparison" data-protocol=.*?</tr>`).FindAllString(page, -1)
			for _, row := range comps {
				m := regexp.MustCompile(`<td>([^<(]*?)(?: \(exact\))?</td><td>[^<]*</td><td>([^<]*)</td><td>(?:yes|no)`).FindStringSubmatch(row)
				if m == nil {
					t.Fatalf("comparison row %q", row)
				}
				for _, p := range m[1:] {
					if !cells[p] {
						t.Errorf("the page's p-value %q is no cell of the report", p)
					}
				}
			}
		})
	}
}

// TestNodeOverlapsShown checks that the view warns, as 'pltlab report' does, of shards that ran
// at once on a node with too few CPUs for them (plan.NodeOverlaps through analysis.Open).
func TestNodeOverlapsShown(t *testing.T) {
	b, err := os.ReadFile(runDir + "/run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := result.NewWriter(&out)
	rd := result.NewReader(bytes.NewReader(b), "run.jsonl")
	i := 0
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for {
		r, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !r.IsLoad() {
			continue
		}
		// Two shards on one 2-core node, their loads interleaved over the same minute.
		r.Shard = fmt.Sprintf("%d/2", i%2)
		r.Env.Host, r.Env.CPUs = "node-a", 2
		r.Time = t0.Add(time.Duration(i) * 5 * time.Second)
		r.Run = i
		i++
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	file := filepath.Join(t.TempDir(), "overlap.jsonl")
	if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := analysis.Open([]string{file}, nil, nil, plan.MergeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Warnings) == 0 || !strings.Contains(o.Warnings[0], "node node-a: shards [0/2 1/2] ran at once") {
		t.Fatalf("warnings %q", o.Warnings)
	}
	s, ts := newTest(t, Options{Roots: []string{file}})
	if !strings.Contains(page(t, s, ts), template.HTMLEscapeString(o.Warnings[0])) {
		t.Errorf("the view does not warn %q", o.Warnings[0])
	}
	// These lines have no plan line: the completeness cannot be checked, and the view says so.
	if o.CompletenessErr == nil || !strings.Contains(page(t, s, ts), "completeness not checked") {
		t.Errorf("no plan line: completeness error %v", o.CompletenessErr)
	}
}

// page returns the page of the server's first set.
func page(t *testing.T, s *Server, ts *httptest.Server) string {
	t.Helper()
	_, body, _ := get(t, ts, "/set/"+s.Sets()[0].ID+"/")
	return body
}

// TestFactsShowOriginsAndReplay: a load's facts name each origin's connections, whether one
// connection served several hosts, and what a replayed archive answered.
func TestFactsShowOriginsAndReplay(t *testing.T) {
	r := &result.Record{V: 1, Protocol: "h2", ObservedProtocol: "h2",
		Origins:   []result.OriginConns{{Host: "plt.test", Conns: 1, Shared: 1}, {Host: "o1.p6c6f0276.plt.test", Conns: 1, Shared: 1}},
		Coalesced: true,
		Replay:    &result.Replay{Archive: "/tmp/a.har", Digest: "ab12", Hits: 4, QueryMatches: 1, Misses: 1, Missed: []string{"GET https://plt.test/x.css"}}}
	got := map[string]string{}
	for _, f := range facts(r) {
		got[f[0]] = f[1]
	}
	if o := got["origins (connections the server served each on)"]; o != "plt.test: 1 connection(s), 1 shared with another host; o1.p6c6f0276.plt.test: 1 connection(s), 1 shared with another host" {
		t.Errorf("origins fact %q", o)
	}
	if got["coalesced (one connection served several hosts)"] != "true" {
		t.Errorf("coalesced fact %q", got["coalesced (one connection served several hosts)"])
	}
	if rp := got["replayed archive"]; rp != "/tmp/a.har (sha256 ab12): 4 hits (1 by query), 1 misses: GET https://plt.test/x.css" {
		t.Errorf("replay fact %q", rp)
	}
}

// TestBadFirstLineSkipped: a results file whose first line is empty, NaN or cut short (a killed
// run, then resumed) is listed, as 'pltlab report' reads it, and its page says a line was
// skipped (on 3e73eb5 the index said "No result files"); a .jsonl file of something else is not.
func TestBadFirstLineSkipped(t *testing.T) {
	run := string(mustRead(t, runDir+"/run.jsonl"))
	for _, tc := range []struct{ name, first, skipped string }{
		{"empty", "", ""},
		{"nan", "NaN", "1 corrupt or refused line(s) skipped"},
		{"cut", run[:40], "1 corrupt or refused line(s) skipped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "run.jsonl"), []byte(tc.first+"\n"+run), 0o644)
			os.WriteFile(filepath.Join(dir, "other.jsonl"), []byte("\n{\"name\":\"not a record\"}\n"), 0o644)
			s, ts := newTest(t, Options{Roots: []string{dir}})
			if sets := s.Sets(); len(sets) != 1 {
				t.Fatalf("sets %+v: want run.jsonl alone", sets)
			}
			_, page, _ := get(t, ts, "/set/"+setID(t, s, "run.jsonl"))
			if tc.skipped != "" && !strings.Contains(page, tc.skipped) {
				t.Errorf("the set's page does not say %q", tc.skipped)
			}
		})
	}
}

// TestStudyShardsGrouped: the shard files of one sharded study run (`pltlab reproduce modquic
// --scale smoke --shard I/2 --out DIR/shard-I`: each file opens with the study's plan line,
// which has no configuration hash) are one set; the file of a second run of one of those
// shards beside them starts a set of its own.
func TestStudyShardsGrouped(t *testing.T) {
	dir := t.TempDir()
	for _, sh := range []string{"shard-0", "shard-1", "shard-1-again"} {
		src := filepath.Join("testdata/modquic-shards", strings.TrimSuffix(sh, "-again"), "results.jsonl")
		os.MkdirAll(filepath.Join(dir, sh), 0o755)
		os.WriteFile(filepath.Join(dir, sh, "results.jsonl"), mustRead(t, src), 0o644)
	}
	s, ts := newTest(t, Options{Roots: []string{dir}})
	sets := s.Sets()
	if len(sets) != 2 || len(sets[0].Files) != 2 || sets[0].Shards != 2 || len(sets[1].Files) != 1 {
		for _, st := range sets {
			t.Logf("set %s: %d shards, files %v", st.Name, st.Shards, st.Files)
		}
		t.Fatalf("%d sets: want the study's two shards merged and the second run of shard 1 apart", len(sets))
	}
	_, idx, _ := get(t, ts, "/")
	if !strings.Contains(idx, "sharded run (2 shard files merged)") {
		t.Error("index does not say the study run is sharded")
	}
}
