package selfcheck

import (
	"net/netip"
	"strings"
	"testing"
	"time"
)

// rebindStream is n datagrams seen at the host 10 ms apart, from the sources given in turn
// (each for n/len(from) datagrams), every one echoed but those listed in lost.
func rebindStream(n int, from []string, lost ...int) ([]rebindSeen, map[int]bool) {
	var seen []rebindSeen
	echoed := map[int]bool{}
	t0 := time.Unix(0, 0)
	for i := range n {
		seen = append(seen, rebindSeen{seq: i, at: t0.Add(time.Duration(i) * rebindGap), from: netip.MustParseAddrPort(from[i*len(from)/n])})
		echoed[i] = true
	}
	for _, i := range lost {
		delete(echoed, i)
	}
	return seen, echoed
}

func TestRebindLine(t *testing.T) {
	for _, tc := range []struct {
		name, link string
		from       []string
		lost       []int
		lossy      bool
		pass       bool
		want       string
	}{
		{"port moved, echoes back", "rate=10mbit,rtt=30ms,rebind=port@1s/5s", []string{"100.64.0.6:4000", "100.64.0.6:5000"}, []int{250, 251}, false, true, "2 sources (100.64.0.6:4000 -> 100.64.0.6:5000), 1 changes; 498 of 500 echoes"},
		{"no change seen", "rate=10mbit,rtt=30ms,rebind=port@1s/5s", []string{"100.64.0.6:4000"}, nil, false, false, "1 sources"},
		{"addr: port moved alone", "rate=10mbit,rtt=30ms,rebind=addr@1s/5s", []string{"100.64.0.6:4000", "100.64.0.6:5000"}, nil, false, false, "1 changes"},
		{"addr moved", "rate=10mbit,rtt=30ms,rebind=addr@1s/5s", []string{"100.64.0.6:4000", "100.64.0.7:5000"}, nil, false, true, "500 of 500 echoes"},
		{"echoes lost beyond a change", "rate=10mbit,rtt=30ms,rebind=port@1s/5s", []string{"100.64.0.6:4000", "100.64.0.6:5000"}, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, false, false, "488 of 500"},
		{"lossy link: echoes not asked", "rate=10mbit,rtt=30ms,loss=5%,rebind=port@1s/5s", []string{"100.64.0.6:4000", "100.64.0.6:5000"}, []int{1, 2, 3, 4, 5, 6, 7, 8, 9}, true, true, "not asked"},
		{"once: no change asked", "rate=10mbit,rtt=30ms,rebind=port@1s/0s", []string{"100.64.0.6:4000"}, nil, false, true, "no change asked"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testChecker(tc.link, true)
			seen, echoed := rebindStream(500, tc.from, tc.lost...)
			c.rebindLine(5*time.Second, 500, seen, echoed, tc.lossy)
			if len(c.res.Lines) != 1 {
				t.Fatalf("%d lines", len(c.res.Lines))
			}
			l := c.res.Lines[0]
			if l.Pass != tc.pass || !strings.Contains(l.Measured+" "+l.Tolerance, tc.want) {
				t.Errorf("pass %v, want %v; %q / %q, want %q in it", l.Pass, tc.pass, l.Measured, l.Tolerance, tc.want)
			}
		})
	}
}
