package server

import (
	"bytes"
	"compress/flate"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestBulk fetches sized bulk objects over every protocol with a per-connection congestion
// control and checks the size, the headers, the connection facts and that the body does not
// compress (it is pseudo-random).
func TestBulk(t *testing.T) {
	s := startServer(t, "")
	for _, p := range []string{"h1", "h2", "h3"} {
		t.Run(p, func(t *testing.T) {
			c := newClient(t, s, p)
			cc := "reno"
			if p == "h3" {
				cc = QUICCCName
			}
			resp, body := c.get(t, http.MethodGet, BulkPath+"?bytes=300000&cc="+cc)
			if resp.StatusCode != 200 || len(body) != 300000 || resp.Proto != wantProto[p] {
				t.Fatalf("status %d, %d bytes, %s", resp.StatusCode, len(body), resp.Proto)
			}
			if !bytes.Equal(body[:bulkChunk], s.bulk) || !bytes.Equal(body[bulkChunk:], s.bulk[:300000-bulkChunk]) {
				t.Fatal("body is not the bulk buffer written again and again")
			}
			if got := resp.Header.Get(HeaderCC); got != cc {
				t.Fatalf("%s = %q, want %q", HeaderCC, got, cc)
			}
			id, err := strconv.ParseUint(resp.Header.Get(HeaderConnID), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", HeaderConnID, err)
			}
			st, ok := s.ConnStats(id)
			if !ok || st.CC != cc || st.Protocol != p || st.BodyBytes < 300000 {
				t.Fatalf("ConnStats(%d) = %+v, %v", id, st, ok)
			}
			if p != "h3" && (st.TCPCC != "reno" || !st.Open || st.SegmentsOut < 1) { // loopback segments are up to 64 KiB
				t.Fatalf("TCP connection facts %+v", st)
			}
			var z bytes.Buffer
			w, _ := flate.NewWriter(&z, flate.BestCompression)
			w.Write(body)
			w.Close()
			if z.Len() < len(body)*99/100 {
				t.Fatalf("body compresses to %d of %d bytes", z.Len(), len(body))
			}
		})
	}
}

// TestBulkBadRequests checks the refusals: a bad size, a bad TCP algorithm, and any controller
// but NewReno on QUIC.
func TestBulkBadRequests(t *testing.T) {
	s := startServer(t, "")
	cases := []struct{ protocol, query, want string }{
		{"h1", "bytes=-1", "bad bytes"},
		{"h1", "bytes=x", "bad bytes"},
		{"h2", "cc=no/such", "bad cc"},
		{"h1", "cc=nosuchcc", "TCP_CONGESTION"},
		{"h3", "cc=cubic", "quic-go runs only newreno"},
	}
	for _, c := range cases {
		t.Run(c.protocol+" "+c.query, func(t *testing.T) {
			resp, body := newClient(t, s, c.protocol).get(t, http.MethodGet, BulkPath+"?"+c.query)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), c.want) {
				t.Fatalf("status %d, body %q; want 400 with %q", resp.StatusCode, body, c.want)
			}
		})
	}
	if _, ok := s.ConnStats(1 << 40); ok {
		t.Fatal("ConnStats of an unknown connection")
	}
}

// TestBulkSink posts a body and checks that its length is answered.
func TestBulkSink(t *testing.T) {
	s := startServer(t, "")
	c := newClient(t, s, "h2")
	resp, err := c.Post(c.base+BulkPath, "application/octet-stream", bytes.NewReader(make([]byte, 123456)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	if resp.StatusCode != 200 || strings.TrimSpace(b.String()) != "123456" || resp.Header.Get(HeaderCC) != "cubic" {
		t.Fatalf("status %d, body %q, cc %q", resp.StatusCode, b.String(), resp.Header.Get(HeaderCC))
	}
}
