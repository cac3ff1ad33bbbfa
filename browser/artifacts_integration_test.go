//go:build linux

package browser

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"github.com/pltlab/pltlab/pages"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestIntegrationArtifacts loads a page once per protocol with a HAR and a NetLog and checks
// them: one HAR entry per fetch, on the protocol's httpVersion, with connection IDs and timings
// consistent with Resource Timing; a NetLog that is complete JSON once the browser closed, with
// a load index line. With -update it also records the network events the HAR golden test reads.
func TestIntegrationArtifacts(t *testing.T) {
	chrome := needChromium(t)
	dir, m := genPage(t, "8x20KB")
	ctx := context.Background()
	srv, ns := startServer(t, dir)
	info := srv.Info()
	for _, p := range protocol.Table {
		t.Run(p.Name, func(t *testing.T) {
			out := t.TempDir()
			pageURL := info.URL(p.Name)
			u, _ := url.Parse(pageURL)
			port, _ := strconv.Atoi(u.Port())
			b, err := Launch(ctx, WithChrome(chrome), WithNetNS(ns), WithProtocol(p.Name), WithSPKI(info.SPKI),
				WithResolve(info.Host, "127.0.0.1"), WithPort(port), WithNetLog(out, ""), WithCreator("test"))
			if err != nil {
				t.Fatal(err)
			}
			target := Target{URL: pageURL, Manifest: m, Timeout: 20 * time.Second,
				HARPath: filepath.Join(out, "load.har"), Label: "run-0000"}
			if *update {
				target.eventsPath = filepath.Join("testdata", "har", "events-"+p.Name+".jsonl")
			}
			rec := mustLoad(t, b, target)
			checkValid(t, rec, p.Name, m.Objects)
			netlog := b.NetLogPath()
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			h := readHAR(t, target.HARPath)
			checkHAR(t, h, p, len(m.Objects)+1)
			checkHARTimings(t, h, rec.Resources)
			conns := map[string]bool{}
			for _, r := range rec.Resources {
				if r.ConnectionID == "" {
					t.Errorf("resource %s: no connection id", r.URL)
				}
				conns[r.ConnectionID] = true
			}
			t.Logf("%s: %d entries on %d connections; PLT %.0f ms", p.Name, len(h.Log.Entries), len(conns), rec.PLTMs)
			checkNetLog(t, netlog)
			if p.Version == protocol.HTTP1 && len(conns) < 2 {
				t.Errorf("h1 used %d connection(s) for %d objects, want several", len(conns), len(m.Objects))
			}
		})
	}
}

func readHAR(t *testing.T, path string) *pages.HARFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var h pages.HARFile
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("HAR %s: %v", path, err)
	}
	return &h
}

// checkHAR checks the entries' count, protocol, status and connection.
func checkHAR(t *testing.T, h *pages.HARFile, p protocol.Protocol, want int) {
	t.Helper()
	if h.Log.Version != "1.2" || len(h.Log.Pages) != 1 {
		t.Errorf("HAR version %q with %d pages, want 1.2 with 1", h.Log.Version, len(h.Log.Pages))
	}
	if len(h.Log.Entries) != want {
		t.Errorf("HAR has %d entries, want %d", len(h.Log.Entries), want)
	}
	for _, e := range h.Log.Entries {
		if e.Response.HTTPVersion != p.NextHop || e.Response.Status != 200 || e.Connection == "" {
			t.Errorf("entry %s: httpVersion %q status %d connection %q, want %s 200 and a connection",
				e.Request.URL, e.Response.HTTPVersion, e.Response.Status, e.Connection, p.NextHop)
		}
		if n := bodyLen(t, e.Response.Content); n != e.Response.Content.Size || n == 0 {
			t.Errorf("entry %s: recorded body of %d bytes (encoding %q), content.size %d; want the whole body",
				e.Request.URL, n, e.Response.Content.Encoding, e.Response.Content.Size)
		}
	}
}

// bodyLen returns the length of the body c records (content.text, base64-decoded when so encoded).
func bodyLen(t *testing.T, c pages.HARContent) int64 {
	t.Helper()
	if c.Text == nil {
		return 0
	}
	if c.Encoding != "base64" {
		return int64(len(*c.Text))
	}
	b, err := base64.StdEncoding.DecodeString(*c.Text)
	if err != nil {
		t.Errorf("content.text is not base64: %v", err)
	}
	return int64(len(b))
}

// HAR-versus-Resource-Timing bounds. The two views agree on a fetch from its request's send to
// its last byte: the HAR's send, wait and receive against Resource Timing's responseEnd less
// requestStart; the durations as a whole were measured over 1350 fetches at 3 Mbit/s 0.04 ms apart at the median, 0.15 ms at p95 and 12.6 ms
// at most (a fetch whose DevTools event was delivered late on a busy machine). So on one page
// the median difference must stay within harMedianMs (12 x the measured median), at most 5 %
// of the fetches (at least one) may exceed harP95Ms (6 x the measured p95; a HAR built from the
// wrong event, e.g. the request's send instead of the fetch's start, is a round trip off,
// >= 20 ms here, on every fetch), and none harMaxMs (above the measured maximum).
//
// They do not always agree on when a fetch started. The HAR's blocked phase runs from
// DevTools' requestWillBeSent (the request's issue, as Chrome's own HAR export counts it),
// Resource Timing's from its startTime, and Chromium stamps the issue up to tens of ms before
// startTime for some subresources: on quiet machines, 1.5 and 6.4 ms (h3, 2026-12-07) and
// 29.8 ms (h2, 2026-12-06) on 3 of about 70 fetches, every other time under 0.2 ms; the network
// parts of those fetches agreed within 0.05 ms. So what comes before the send (the HAR's blocked,
// dns and connect; Resource Timing's requestStart less startTime) is checked on its own: never
// shorter in the HAR by more than harP95Ms (a HAR that left out the queueing is caught), and
// never longer by more than harIssueSkewMs.
const (
	harMedianMs    = 0.5
	harP95Ms       = 1.0
	harMaxMs       = 15.0
	harIssueSkewMs = 50.0
)

// checkHARTimings checks that the subresources' HAR timings match their Resource Timing
// entries within the bounds above: each fetch from its send, and what came before the send.
func checkHARTimings(t *testing.T, h *pages.HARFile, res []result.Resource) {
	t.Helper()
	byURL := map[string]pages.HAREntry{}
	for _, e := range h.Log.Entries {
		byURL[e.Request.URL] = e
	}
	var diffs []float64
	defer func() {
		if len(diffs) == 0 {
			return
		}
		slices.Sort(diffs)
		t.Logf("HAR vs Resource Timing differences from the send (ms): %.3f", diffs)
		if med := diffs[len(diffs)/2]; med > harMedianMs {
			t.Errorf("HAR vs Resource Timing: median of %d differences %.2f ms, want <= %.1f ms", len(diffs), med, harMedianMs)
		}
		over, allowed := 0, max(1, len(diffs)/20)
		for _, d := range diffs {
			if d > harP95Ms {
				over++
			}
		}
		if over > allowed {
			t.Errorf("HAR vs Resource Timing: %d of %d differences above %.1f ms, want at most %d", over, len(diffs), harP95Ms, allowed)
		}
	}()
	for _, r := range res {
		e, ok := byURL[r.URL]
		if !ok {
			t.Errorf("resource %s not in the HAR", r.URL)
			continue
		}
		// The request's part: from its send (Resource Timing's requestStart) to its last byte.
		// Everything before it (queueing, the connect, waiting for a connection) is the start.
		sent := max(e.Timings.Blocked, 0) + max(e.Timings.DNS, 0) + max(e.Timings.Connect, 0)
		d := math.Abs((e.Time - sent) - (r.EndMs - r.RequestStartMs))
		skew := sent - (r.RequestStartMs - r.StartMs)
		if r.RequestStartMs <= 0 { // no phase boundaries (a cross-origin entry without Timing-Allow-Origin)
			d, skew = math.Abs(e.Time-(r.EndMs-r.StartMs)), 0
		}
		diffs = append(diffs, d)
		if d > harP95Ms || math.Abs(skew) > harP95Ms {
			// What the two views hold, so that a gap can be explained from the log alone.
			t.Logf("resource %s: HAR time %.2f ms, %.2f before its send (started %s, timings %+v) vs Resource Timing %.2f ms, %.2f before requestStart (%+v)",
				r.URL, e.Time, sent, e.StartedDateTime, e.Timings, r.EndMs-r.StartMs, r.RequestStartMs-r.StartMs, r)
		}
		if d > harMaxMs {
			t.Errorf("resource %s: from the send: HAR %.2f ms, Resource Timing %.2f ms: more than %.0f ms apart", r.URL, e.Time-sent, r.EndMs-r.RequestStartMs, harMaxMs)
		}
		if skew < -harP95Ms || skew > harIssueSkewMs {
			t.Errorf("resource %s: HAR %.2f ms before the send, Resource Timing %.2f ms before requestStart: want the HAR's at most %.0f ms shorter and %.0f ms longer",
				r.URL, sent, r.RequestStartMs-r.StartMs, harP95Ms, harIssueSkewMs)
		}
		if e.Connection != r.ConnectionID {
			t.Errorf("resource %s: HAR connection %s, record %s", r.URL, e.Connection, r.ConnectionID)
		}
	}
}

// checkNetLog checks that the NetLog is complete JSON with events and that its index has a line.
func checkNetLog(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nl struct {
		Constants map[string]any    `json:"constants"`
		Events    []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(b, &nl); err != nil {
		t.Fatalf("NetLog %s is not complete JSON: %v", path, err)
	}
	if len(nl.Events) == 0 || nl.Constants["timeTickOffset"] == nil {
		t.Errorf("NetLog %s: %d events, timeTickOffset %v", path, len(nl.Events), nl.Constants["timeTickOffset"])
	}
	idx, err := os.ReadFile(path + ".loads.jsonl")
	if err != nil || strings.Count(string(idx), "\n") != 1 {
		t.Errorf("NetLog index: %q, %v; want one line", idx, err)
	}
}
