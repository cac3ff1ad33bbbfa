package view

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// interopLines are interop case records as `pltlab interop --out` writes them (the case's own
// record is the line) and one as a study writes it (wrapped in "interop").
const interopLines = `{"v":1,"kind":"interop_case","time":"2026-12-07T02:00:00Z","case":"handshake","rule":"RFC 9000 §17.2","client":"quic-go","server":"ngtcp2","versions":{"client":"v0.65.0","server":"0.12.1"},"link":"rate=10mbit,rtt=30ms","outcome":"pass","reason":"one handshake, HANDSHAKE_DONE seen","evidence":{"wire":{"handshakes":1}}}
{"v":1,"kind":"interop_case","time":"2026-12-07T02:00:01Z","case":"zerortt","client":"quic-go","server":"ngtcp2","versions":{"client":"v0.65.0","server":"0.12.1"},"link":"rate=10mbit,rtt=30ms","outcome":"fail","reason":"no early_data <accepted>","evidence":{"wire":{"zero_rtt_packets":3}}}
{"v":1,"kind":"interop_case","time":"2026-12-07T02:00:02Z","case":"zerortt","client":"quic-go","server":"ngtcp2","versions":{"client":"v0.65.0","server":"0.12.1"},"link":"rate=10mbit,rtt=30ms","outcome":"pass","reason":"0-RTT accepted","evidence":{}}
{"v":1,"kind":"interop_case","experiment":"evolution/matrix","run":0,"time":"2026-12-07T02:00:03Z","valid":true,"interop":{"v":1,"kind":"interop_case","case":"v2","client":"pltlab-probe","server":"quic-go@v0.40.1","outcome":"unsupported","reason":"the server does not offer QUIC v2","evidence":{}}}
`

// TestInteropGrid: a set of interop case records, as `pltlab interop --out` writes them and as
// a study wraps them, gets a grid of case x (client → server) whose cells count the runs'
// outcomes in the worst outcome's colour, with each run's reason (escaped) and evidence below.
func TestInteropGrid(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "interop.jsonl"), []byte(interopLines), 0o644); err != nil {
		t.Fatal(err)
	}
	s, ts := newTest(t, Options{Roots: []string{dir}})
	id := setID(t, s, "interop.jsonl")
	code, page, _ := get(t, ts, "/set/"+id+"/")
	if code != 200 {
		t.Fatalf("set page %d:\n%.2000s", code, page)
	}
	for _, want := range []string{
		`<section id="interop">`,
		`<th>quic-go → ngtcp2</th><th>pltlab-probe → quic-go@v0.40.1</th>`,
		`<td class="io-pass">pass 1</td><td class="io-none">not run</td>`,
		`<td class="io-fail">pass 1, fail 1</td>`,
		`<td class="io-none">not run</td><td class="io-unsupported">unsupported 1</td>`,
		`no early_data &lt;accepted&gt;`,
		`&#34;zero_rtt_packets&#34;: 3`,
		`client v0.65.0; server 0.12.1`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("interop page lacks %q:\n%.4000s", want, page)
		}
	}
	if strings.Contains(page, `id="groups"`) {
		t.Error("an interop-only set shows an empty Groups section")
	}
}
