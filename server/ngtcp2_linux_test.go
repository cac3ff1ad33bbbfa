//go:build linux

package server

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestNgtcp2Qlog: the facts of a connection are read from ngtcp2's qlog as documented on parse:
// bytes sent, the response streams' extent, requests, 0-RTT received and resumption from the
// Handshake-space CRYPTO bytes against the certificate's length.
func TestNgtcp2Qlog(t *testing.T) {
	dir := t.TempDir()
	ev := func(ms int, name, data string) string {
		return fmt.Sprintf("\x1e{\"time\":%d,\"name\":%q,\"data\":%s}\n", ms, name, data)
	}
	write := func(name string, hsCrypto int, zeroRTT bool) string {
		var b strings.Builder
		b.WriteString("\x1e{\"qlog_format\":\"JSON-SEQ\",\"qlog_version\":\"0.3\"}\n")
		b.WriteString(ev(0, "transport:packet_sent", `{"frames":[{"frame_type":"crypto","offset":0,"length":90}],"header":{"packet_type":"initial"},"raw":{"length":166}}`))
		b.WriteString(ev(1, "transport:packet_sent", fmt.Sprintf(`{"frames":[{"frame_type":"crypto","offset":0,"length":%d}],"header":{"packet_type":"handshake"},"raw":{"length":%d}}`, hsCrypto, hsCrypto+40)))
		if zeroRTT {
			b.WriteString(ev(1, "transport:packet_received", `{"frames":[{"frame_type":"stream","stream_id":0,"offset":0,"length":40}],"header":{"packet_type":"0RTT"},"raw":{"length":80}}`))
		}
		// stream 0: 1000 B then a retransmission of its first 500 B; stream 4: 300 B; stream 3 is
		// the server's control stream (not a response); a truncated last line is skipped.
		b.WriteString(ev(5, "transport:packet_sent", `{"frames":[{"frame_type":"stream","stream_id":0,"offset":0,"length":1000},{"frame_type":"stream","stream_id":3,"offset":0,"length":20}],"header":{"packet_type":"1RTT"},"raw":{"length":1100}}`))
		b.WriteString(ev(9, "transport:packet_sent", `{"frames":[{"frame_type":"stream","stream_id":0,"offset":0,"length":500},{"frame_type":"stream","stream_id":4,"offset":0,"length":300}],"header":{"packet_type":"1RTT"},"raw":{"length":900}}`))
		b.WriteString("\x1e{\"time\":12,\"name\":\"transport:pack")
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	st := &ngtcp2Stack{cc: "bbr2", certLen: 400, next: ngtcp2IDBase}
	full, err := st.parse(write("full.sqlog", 700, false))
	if err != nil {
		t.Fatal(err)
	}
	want := ConnInfo{ID: ngtcp2IDBase, Protocol: "h3", ALPN: "h3", TLSVersion: "1.3", QUICCC: "bbr2", Qlog: "full.sqlog",
		BytesSent: 166 + 740 + 1100 + 900, BodyBytes: 1000 + 300, Requests: 2}
	full.Opened, full.Closed = time.Time{}, time.Time{}
	if !reflect.DeepEqual(full, want) {
		t.Errorf("full handshake:\n got %+v\nwant %+v", full, want)
	}
	res, err := st.parse(write("resumed.sqlog", 120, true))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || !res.Used0RTT || res.ID != ngtcp2IDBase+1 || res.Opened.IsZero() || res.Closed.Before(res.Opened) {
		t.Errorf("resumed with 0-RTT: %+v", res)
	}
	if _, err := st.parse(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing qlog parsed")
	}
}
