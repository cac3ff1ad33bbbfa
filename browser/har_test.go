package browser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/pages"

	"github.com/chromedp/cdproto/network"
	"github.com/pltlab/pltlab/protocol"
)

// TestHARGolden builds the HAR of each recorded load (testdata/har/events-PROTOCOL.jsonl, made by
// TestIntegrationArtifacts -update) and compares it with testdata/har/PROTOCOL.har (rewritten
// with -update).
func TestHARGolden(t *testing.T) {
	for _, p := range protocol.Table {
		t.Run(p.Name, func(t *testing.T) {
			h := goldenHAR(t, p.Name)
			got, err := json.MarshalIndent(h, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", "har", p.Name+".har")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("HAR differs from %s (run with -update after checking the change)", golden)
			}
			checkHARInvariants(t, h, p)
		})
	}
}

// goldenHAR builds the HAR of a recorded load with fixed page facts.
func goldenHAR(t *testing.T, name string) *pages.HARFile {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "har", "events-"+name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, err := readEvents(f)
	if err != nil {
		t.Fatal(err)
	}
	h, err := buildHAR(events, harPageInfo{URL: "https://plt.test/index.html", Browser: "HeadlessChrome/156.0",
		Creator: "test", DCLMs: 50, PLTMs: 100})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// checkHARInvariants: every entry has the protocol's httpVersion, a connection, non-negative
// phases whose sum is the entry's time, and bodies of the served sizes.
func checkHARInvariants(t *testing.T, h *pages.HARFile, p protocol.Protocol) {
	t.Helper()
	if len(h.Log.Entries) < 2 {
		t.Fatalf("%d entries", len(h.Log.Entries))
	}
	for _, e := range h.Log.Entries {
		tm := e.Timings
		sum := max(tm.Blocked, 0) + max(tm.DNS, 0) + max(tm.Connect, 0) + tm.Send + tm.Wait + tm.Receive
		switch {
		case e.Request.HTTPVersion != p.NextHop:
			t.Errorf("%s: httpVersion %q, want %q", e.Request.URL, e.Request.HTTPVersion, p.NextHop)
		case e.Connection == "" || e.Connection == "0" && p.Version != protocol.HTTP1:
			t.Errorf("%s: connection %q", e.Request.URL, e.Connection)
		case tm.Send < 0 || tm.Wait < 0 || tm.Receive < 0 || tm.SSL > tm.Connect:
			t.Errorf("%s: bad timings %+v", e.Request.URL, tm)
		case sum-e.Time > 0.01 || e.Time-sum > 0.01:
			t.Errorf("%s: time %.3f, phases sum to %.3f", e.Request.URL, e.Time, sum)
		case strings.HasSuffix(e.Request.URL, ".jpg") && e.Response.Content.Size != 20000:
			t.Errorf("%s: content size %d, want 20000", e.Request.URL, e.Response.Content.Size)
		}
	}
}

func TestHARTimings(t *testing.T) {
	// The seventh h1 request of a page: a connection was opened for it (0.2-4.7 ms) but it was sent
	// only at 57.7 ms, when a connection was free; that wait is blocked time.
	tm := harTimingsFrom(t, `{"requestTime":10.0,"proxyStart":-1,"proxyEnd":-1,"dnsStart":0.2,"dnsEnd":0.25,
		"connectStart":0.25,"connectEnd":4.75,"sslStart":0.5,"sslEnd":4.7,"sendStart":57.75,"sendEnd":58.5,
		"receiveHeadersStart":59,"receiveHeadersEnd":59.25}`, 9.99, 10.1)
	want := pages.HARTimings{Blocked: 10 + 0.2 + 53, DNS: 0.05, Connect: 4.5, SSL: 4.2, Send: 0.75, Wait: 0.75, Receive: 40.75}
	if tm != want {
		t.Errorf("timings\n got %+v\nwant %+v", tm, want)
	}
	// A request on a reused connection: no dns, connect or ssl.
	tm = harTimingsFrom(t, `{"requestTime":10.0,"dnsStart":-1,"dnsEnd":-1,"connectStart":-1,"connectEnd":-1,
		"sslStart":-1,"sslEnd":-1,"sendStart":1,"sendEnd":1.5,"receiveHeadersEnd":20}`, 10.0, 10.05)
	want = pages.HARTimings{Blocked: 1, DNS: -1, Connect: -1, SSL: -1, Send: 0.5, Wait: 18.5, Receive: 30}
	if tm != want {
		t.Errorf("reused connection timings\n got %+v\nwant %+v", tm, want)
	}
}

func harTimingsFrom(t *testing.T, timing string, issued, finished float64) pages.HARTimings {
	t.Helper()
	ev := []netEvent{
		{Method: "Network.requestWillBeSent", Params: json.RawMessage(`{"requestId":"1","loaderId":"1","documentURL":"https://plt.test/","request":{"url":"https://plt.test/a.jpg","method":"GET","headers":{},"initialPriority":"Low","referrerPolicy":"no-referrer"},"timestamp":` + ftoa(issued) + `,"wallTime":1796115208.4,"initiator":{"type":"parser"},"redirectHasExtraInfo":false,"type":"Image"}`)},
		{Method: "Network.responseReceived", Params: json.RawMessage(`{"requestId":"1","loaderId":"1","timestamp":10.06,"type":"Image","response":{"url":"https://plt.test/a.jpg","status":200,"statusText":"","headers":{},"mimeType":"image/jpeg","charset":"","connectionReused":false,"connectionId":7,"encodedDataLength":100,"securityState":"secure","protocol":"http/1.1","timing":` + timing + `},"hasExtraInfo":false}`)},
		{Method: "Network.loadingFinished", Params: json.RawMessage(`{"requestId":"1","timestamp":` + ftoa(finished) + `,"encodedDataLength":1100}`)},
	}
	h, err := buildHAR(ev, harPageInfo{URL: "https://plt.test/"})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Log.Entries) != 1 {
		t.Fatalf("%d entries", len(h.Log.Entries))
	}
	e := h.Log.Entries[0]
	if e.Connection != "7" || e.Response.HeadersSize != 100 || e.Response.BodySize != 1000 || e.TransferSize != 1100 {
		t.Errorf("connection %q headers %d body %d transfer %d", e.Connection, e.Response.HeadersSize, e.Response.BodySize, e.TransferSize)
	}
	return e.Timings
}

func ftoa(f float64) string { b, _ := json.Marshal(f); return string(b) }

// TestHARBodies checks that recorded response bodies go into content.text: UTF-8 text as is,
// other bytes as base64 with content.encoding "base64", and none for a request without a body.
func TestHARBodies(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "har", "events-h2.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	events, err := readEvents(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	reqs, order, err := groupEvents(events)
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[network.RequestID][]byte{order[0]: []byte("<!DOCTYPE html>\n"), order[1]: {0xff, 0xd8, 0xff, 0xe0}}
	h, err := buildHAR(events, harPageInfo{URL: "https://plt.test/index.html", DCLMs: -1, PLTMs: -1, Bodies: bodies})
	if err != nil {
		t.Fatal(err)
	}
	if len(reqs) < 3 || len(h.Log.Entries) < 3 {
		t.Fatalf("%d requests, %d entries", len(reqs), len(h.Log.Entries))
	}
	tests := []struct{ text, encoding string }{{"<!DOCTYPE html>\n", ""}, {"/9j/4A==", "base64"}, {"", ""}}
	for i, tt := range tests {
		c := h.Log.Entries[i].Response.Content
		text := ""
		if c.Text != nil {
			text = *c.Text
		}
		if text != tt.text || c.Encoding != tt.encoding || (c.Text == nil) != (tt.text == "") {
			t.Errorf("entry %d (%s): text %q encoding %q, want %q %q", i, h.Log.Entries[i].Request.URL, text, c.Encoding, tt.text, tt.encoding)
		}
	}
}

// harValidatorVersion is the npm har-validator release the validator test installs.
const harValidatorVersion = "5.1.5"

// TestIntegrationHARValidator validates the golden HARs, with a text and a base64 body recorded,
// with the npm package har-validator (an independent implementation of the HAR 1.2 JSON schema), installed with npm into a folder under
// the system temporary directory that is kept between runs. Needs node and npm (make deps) and
// the npm registry; skipped with -short, and without node unless $CI is set.
func TestIntegrationHARValidator(t *testing.T) {
	if testing.Short() {
		t.Skip("installs an npm package: skipped with -short")
	}
	node, nerr := exec.LookPath("node")
	npm, perr := exec.LookPath("npm")
	if nerr != nil || perr != nil {
		if os.Getenv("CI") == "" {
			t.Skip("node or npm not installed (make deps installs them)")
		}
		t.Fatal("CI is set and node or npm is missing")
	}
	dir := filepath.Join(os.TempDir(), "pltlab-har-validator-"+harValidatorVersion)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "har-validator")); err != nil {
		cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", dir, "har-validator@"+harValidatorVersion)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install har-validator: %v\n%s", err, out)
		}
	}
	const script = `const v = require('har-validator');
const h = JSON.parse(require('fs').readFileSync(process.argv[1], 'utf8'));
v.har(h).then(() => console.log('valid')).catch(e => { console.error(JSON.stringify(e.errors || e.message)); process.exit(1); });`
	for _, p := range protocol.Table {
		t.Run(p.Name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), p.Name+".har")
			h := goldenHAR(t, p.Name)
			h.Log.Entries[0].Response.Content.SetBody([]byte("<!DOCTYPE html>\n"))    // text
			h.Log.Entries[1].Response.Content.SetBody([]byte{0xff, 0xd8, 0xff, 0xe0}) // base64
			b, _ := json.Marshal(h)
			if err := os.WriteFile(f, b, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(node, "-e", script, f)
			cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(dir, "node_modules"))
			if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "valid" {
				t.Errorf("har-validator rejects the %s HAR: %v\n%s", p.Name, err, out)
			}
		})
	}
}

// BenchmarkBuildHAR is the cost of building and encoding the HAR of a recorded h1 load (9 fetches).
func BenchmarkBuildHAR(b *testing.B) {
	f, err := os.Open(filepath.Join("testdata", "har", "events-h1.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	events, err := readEvents(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		h, err := buildHAR(events, harPageInfo{URL: "https://plt.test/"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(h); err != nil {
			b.Fatal(err)
		}
	}
}

// readEvents reads what writeEvents wrote.
func readEvents(r io.Reader) ([]netEvent, error) {
	var out []netEvent
	dec := json.NewDecoder(r)
	for dec.More() {
		var e netEvent
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("read events: %w", err)
		}
		e.Params = bytes.TrimSpace(e.Params)
		out = append(out, e)
	}
	return out, nil
}
