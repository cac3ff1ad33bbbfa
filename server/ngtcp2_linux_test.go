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
	full, err := st.parse(write("full.sqlog", 700, false), "bbr2")
	if err != nil {
		t.Fatal(err)
	}
	want := ConnInfo{ID: ngtcp2IDBase, Protocol: "h3", ALPN: "h3", TLSVersion: "1.3", QUICCC: "bbr2", Qlog: "full.sqlog",
		BytesSent: 166 + 740 + 1100 + 900, BodyBytes: 1000 + 300, Requests: 2}
	full.Opened, full.Closed = time.Time{}, time.Time{}
	if !reflect.DeepEqual(full, want) {
		t.Errorf("full handshake:\n got %+v\nwant %+v", full, want)
	}
	res, err := st.parse(write("resumed.sqlog", 120, true), "bbr2")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || !res.Used0RTT || res.ID != ngtcp2IDBase+1 || res.Opened.IsZero() || res.Closed.Before(res.Opened) {
		t.Errorf("resumed with 0-RTT: %+v", res)
	}
	if _, err := st.parse(filepath.Join(dir, "none"), "bbr2"); err == nil {
		t.Error("a missing qlog parsed")
	}
}

// TestNgtcp2QlogCounters: the bulk reader (parseQlogCounters, no JSON decoding) gives the same
// sender counters as the full reader on ngtcp2 0.12's event lines: packets sent and their raw
// bytes, packets declared lost, the last smoothed RTT, 0-RTT received and the trace's group_id.
func TestNgtcp2QlogCounters(t *testing.T) {
	var b strings.Builder
	b.WriteString("\x1e" + `{"qlog_format":"JSON-SEQ","qlog_version":"0.3","trace":{"vantage_point":{"name":"ngtcp2","type":"server"},"common_fields":{"protocol_type":["QUIC"],"time_format":"relative","reference_time":0,"group_id":"f4eedfaef386cd28"}}}` + "\n")
	b.WriteString("\x1e" + `{"time":0,"name":"transport:parameters_set","data":{"owner":"remote","max_idle_timeout":30000}}` + "\n")
	b.WriteString("\x1e" + `{"time":1,"name":"transport:packet_received","data":{"header":{"packet_type":"0RTT","packet_number":0},"frames":[{"frame_type":"stream","stream_id":0,"offset":0,"length":40}],"raw":{"length":80}}}` + "\n")
	for i := range 50 {
		fmt.Fprintf(&b, "\x1e"+`{"time":%d,"name":"transport:packet_sent","data":{"header":{"packet_type":"1RTT","packet_number":%d},"frames":[{"frame_type":"stream","stream_id":0,"offset":%d,"length":1400}],"raw":{"length":1452}}}`+"\n", 2+i, i, i*1400)
		if i%10 == 3 {
			fmt.Fprintf(&b, "\x1e"+`{"time":%d,"name":"recovery:packet_lost","data":{"header":{"packet_type":"1RTT","packet_number":%d}}}`+"\n", 3+i, i)
		}
		fmt.Fprintf(&b, "\x1e"+`{"time":%d,"name":"recovery:metrics_updated","data":{"min_rtt":36,"smoothed_rtt":%d.5,"latest_rtt":40,"rtt_variance":3,"pto_count":0,"congestion_window":40000,"bytes_in_flight":8649}}`+"\n", 3+i, 40+i)
	}
	b.WriteString("\x1e{\"time\":60,\"name\":\"transport:pack")
	path := filepath.Join(t.TempDir(), "a.sqlog")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	full, err := parseQlog(path, "bbr", 400)
	if err != nil {
		t.Fatal(err)
	}
	fast, err := parseQlogCounters(path, "bbr")
	if err != nil {
		t.Fatal(err)
	}
	if fast.PacketsSent != 50 || fast.PacketsLost != 5 || fast.BytesSent != 50*1452 || fast.SRTT != 89500*time.Microsecond ||
		!fast.Used0RTT || fast.ODCID != "f4eedfaef386cd28" || fast.QUICCC != "bbr" {
		t.Errorf("fast reader: %+v", fast)
	}
	if full.PacketsSent != fast.PacketsSent || full.PacketsLost != fast.PacketsLost || full.BytesSent != fast.BytesSent ||
		full.SRTT != fast.SRTT || full.Used0RTT != fast.Used0RTT || full.ODCID != fast.ODCID {
		t.Errorf("readers differ:\nfull %+v\nfast %+v", full, fast)
	}
}
