package flows

import (
	"context"
	"testing"
	"time"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/server"
)

// BenchmarkClientLoopback measures how fast the flows client (with the server in the same
// process) can receive one flow of each protocol over the unshaped loopback link: the client's
// own ceiling, with no emulator in the way. Reported as goodput_Mbit/s; run with
// `go test -run '^$' -bench ClientLoopback -benchtime 1x ./flows`.
func BenchmarkClientLoopback(b *testing.B) {
	for _, p := range protocol.Table {
		b.Run(p.Name, func(b *testing.B) {
			l, srv := openLink(b, "none")
			cc := DefaultTCPCC
			if p.Transport == protocol.QUIC {
				cc = server.QUICCCName
			}
			for b.Loop() {
				recs, err := Run(context.Background(), l, srv, Config{Flows: []Spec{{Protocol: p.Name, CC: cc}}, Duration: 4 * time.Second})
				if err != nil || !recs[0].Valid {
					b.Fatalf("%v %+v", err, recs)
				}
				b.ReportMetric(recs[0].GoodputBps/1e6, "goodput_Mbit/s")
			}
		})
	}
}
