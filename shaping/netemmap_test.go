package shaping

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/netem"
)

// tcOf returns the tc command lines of the netem plan of spec.
func tcOf(t *testing.T, spec string) []string {
	t.Helper()
	s, err := linkspec.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := NetemConfig(s, "ns", "dev", netip4(1), netip4(2))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, argv := range netem.Build(cfg) {
		if argv[0] == "tc" {
			out = append(out, strings.Join(argv, " "))
		}
	}
	return out
}

func TestNetemMapping(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string
	}{
		// Gilbert-Elliott loss and reordering on a delay-free link map onto netem's own options;
		// a packet queue is a pfifo under the tbf.
		{"rate=10mbit,loss=gemodel:1%/30%/100%/0%,down.reorder=25%,down.reorder_delay=4ms,queue=25pkt", []string{
			"tc qdisc replace dev dev root handle 1: stab overhead -14 netem delay 4000us loss gemodel 1% 30% 100% 0% reorder 75% gap 1 limit 100000",
			"tc qdisc add dev dev parent 1:1 handle 10: tbf rate 10000000bit burst 3000 limit 1500",
			"tc qdisc add dev dev parent 10:1 handle 20: pfifo limit 25",
			"tc -n ns qdisc replace dev pltlab0 root handle 1: stab overhead -14 netem delay 0us loss gemodel 1% 30% 100% 0% limit 100000",
			"tc -n ns qdisc add dev pltlab0 parent 1:1 handle 10: tbf rate 10000000bit burst 3000 limit 1500",
			"tc -n ns qdisc add dev pltlab0 parent 10:1 handle 20: pfifo limit 25",
		}},
		// loss=P%,burst=N is the simple Gilbert model; the 1-BDP queue (25000 B) is tbf's FIFO.
		{"rate=10mbit,rtt=20ms,loss=2%,burst=4", []string{
			"tc qdisc replace dev dev root handle 1: stab overhead -14 netem delay 10000us loss gemodel 0.5102040816326531% 25% 100% 0% limit 100000",
			"tc qdisc add dev dev parent 1:1 handle 10: tbf rate 10000000bit burst 3000 limit 25000",
		}},
		// Jitter keeps the order unless reorder=true; asymmetric rates and queues per direction.
		{"down=10mbit,up=1mbit,rtt=40ms,jitter=5ms", []string{
			"tc qdisc replace dev dev root handle 1: stab overhead -14 netem delay 20000us 5000us rate 100gbit limit 100000",
			"tc qdisc add dev dev parent 1:1 handle 10: tbf rate 10000000bit burst 3000 limit 50000",
			"tc -n ns qdisc replace dev pltlab0 root handle 1: stab overhead -14 netem delay 20000us 5000us rate 100gbit limit 100000",
			"tc -n ns qdisc add dev pltlab0 parent 1:1 handle 10: tbf rate 1000000bit burst 3000 limit 6000",
		}},
		{"rate=10mbit,rtt=40ms,jitter=5ms,reorder=true", []string{
			"tc qdisc replace dev dev root handle 1: stab overhead -14 netem delay 20000us 5000us limit 100000",
		}},
		// Kernel AQMs as the queue, with their parameters and ECN; drophead is pfifo_head_drop.
		{"rate=3mbit,rtt=50ms,aqm=codel,target=10ms,interval=200ms,ecn=true", []string{
			"tc qdisc add dev dev parent 10:1 handle 20: codel limit 1000 target 10000us interval 200000us ecn",
		}},
		{"rate=3mbit,rtt=50ms,aqm=fq_codel", []string{
			"tc qdisc add dev dev parent 10:1 handle 20: fq_codel limit 10240 target 5000us interval 100000us noecn",
		}},
		{"rate=3mbit,rtt=50ms,down.aqm=pie,queue=100pkt", []string{
			"tc qdisc add dev dev parent 10:1 handle 20: pie limit 100 target 15000us tupdate 15000us noecn",
			"tc -n ns qdisc add dev pltlab0 parent 10:1 handle 20: pfifo limit 100",
		}},
		{"rate=3mbit,rtt=50ms,aqm=drophead,queue=20pkt", []string{
			"tc qdisc add dev dev parent 10:1 handle 20: pfifo_head_drop limit 20",
		}},
		// CAKE is its own shaper at the rate, in place of the tbf; a jitter distribution is
		// netem's table.
		{"rate=3mbit,rtt=50ms,aqm=cake,jitter=5ms,jitter_dist=normal", []string{
			"tc qdisc replace dev dev root handle 1: stab overhead -14 netem delay 25000us 5000us distribution normal rate 100gbit limit 100000",
			"tc qdisc add dev dev parent 1:1 handle 10: cake bandwidth 3000000bit raw",
			"tc -n ns qdisc add dev pltlab0 parent 1:1 handle 10: cake bandwidth 3000000bit raw",
		}},
		{"rate=3mbit,rtt=50ms,down.aqm=cake,up.aqm=codel", []string{
			"tc qdisc add dev dev parent 1:1 handle 10: cake bandwidth 3000000bit raw",
			"tc -n ns qdisc add dev pltlab0 parent 10:1 handle 20: codel limit 1000 target 5000us interval 100000us noecn",
		}},
	} {
		got := tcOf(t, tc.spec+",shaper=netem")
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: missing\n%s\nin\n%s", tc.spec, w, strings.Join(got, "\n"))
			}
		}
	}
	s, _ := linkspec.Parse("rate=10mbit,rtt=20ms,shaper=netem")
	s.Outage = emu.Outage{On: time.Second, Off: time.Second}
	if _, err := NetemConfig(s, "ns", "dev", netip4(1), netip4(2)); !errors.Is(err, linkspec.ErrNetemCannot) {
		t.Errorf("outage on netem: %v", err)
	}
}

func netip4(last byte) netip.Addr { return netip.AddrFrom4([4]byte{100, 64, 0, last}) }
