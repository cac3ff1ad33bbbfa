package experiment

import (
	"slices"
	"testing"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
)

// TestOriginConns: the server's connections per host go into the record, Coalesced when one
// connection served several hosts.
func TestOriginConns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hc        []server.HostConns
		coalesced bool
	}{
		{"h1, six and two", []server.HostConns{{Host: "plt.test", Conns: 6}, {Host: "o1.p1.plt.test", Conns: 2}}, false},
		{"h2, one for both", []server.HostConns{{Host: "plt.test", Conns: 1, Shared: 1}, {Host: "o1.p1.plt.test", Conns: 1, Shared: 1}}, true},
		{"nothing", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rec result.Record
			originConns(&rec, tc.hc)
			var want []result.OriginConns
			for _, h := range tc.hc {
				want = append(want, result.OriginConns{Host: h.Host, Conns: h.Conns, Shared: h.Shared})
			}
			if !slices.Equal(rec.Origins, want) || rec.Coalesced != tc.coalesced {
				t.Errorf("origins %+v coalesced %v, want %+v %v", rec.Origins, rec.Coalesced, want, tc.coalesced)
			}
		})
	}
}
