package matrix

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/interop"
)

// openPeers opens the peers named, skipping ngtcp2 when it is not installed.
func openPeers(t *testing.T, names ...string) map[string]Peer {
	t.Helper()
	out := map[string]Peer{}
	for _, n := range names {
		if n == Ngtcp2 && Ngtcp2Missing() != nil {
			t.Skipf("ngtcp2 not installed")
		}
		p, err := OpenPeer(context.Background(), n, Options{Progress: func(s string) { t.Log(s) }})
		if err != nil {
			t.Fatal(err)
		}
		out[n] = p
	}
	return out
}

// TestIntegrationExchangeDebug runs the cases of $EXCHANGE_CASES between $EXCHANGE_PAIRS
// (server>client,...) and logs their records (a tool for looking at them, skipped otherwise).
func TestIntegrationExchangeDebug(t *testing.T) {
	cases, pairs := os.Getenv("EXCHANGE_CASES"), os.Getenv("EXCHANGE_PAIRS")
	if testing.Short() || cases == "" || pairs == "" {
		t.Skip("set EXCHANGE_CASES and EXCHANGE_PAIRS")
	}
	for _, pair := range strings.Split(pairs, ",") {
		sc := strings.Split(pair, ">")
		peers := openPeers(t, sc...)
		for _, name := range strings.Split(cases, ",") {
			c, _ := LookupExchange(name)
			rec := RunExchange(context.Background(), c, peers[sc[1]], peers[sc[0]], nil)
			b, _ := json.Marshal(rec.Evidence.Wire)
			t.Logf("%s server %s client %s: %s: %s (%.0f ms)\n%s %+v", name, sc[0], sc[1], rec.Outcome, rec.Reason, rec.DurationMS, b, rec.Evidence.Files)
			_ = interop.Pass
		}
	}
}
