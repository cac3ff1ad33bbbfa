package matrix

import (
	"context"
	"testing"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/interop"
)

// TestIntegrationExchangeChromium runs Chromium as the client of the quic-go server (the
// endpoint of the release pltlab links) in handshake and http3, through their emulated link:
// each passes, judged from the capture decrypted with both key logs (Chromium's from
// --ssl-key-log-file) and from the bytes its page's fetch() read, and the record names
// Chromium's version. About 10 s.
func TestIntegrationExchangeChromium(t *testing.T) {
	needExchange(t, QUICGo)
	testenv.Require(t, "chromium")
	srv := openPeers(t, QUICGo)[QUICGo]
	client, err := OpenPeer(context.Background(), Chromium, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"handshake", "http3"} {
		c, _ := LookupExchange(name)
		rec := runCase(t, c, client, srv, interop.Pass)
		if w := rec.Observed.Wire; w == nil || w.ALPN != "h3" {
			t.Errorf("%s: ALPN not h3 in the decrypted capture: %+v", name, w)
		}
	}
}
