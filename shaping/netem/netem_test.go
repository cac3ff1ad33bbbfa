package netem

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func carlucci() Config {
	d := Direction{Rate: 3e6, Delay: 25 * time.Millisecond, QueueBytes: 18750}
	return Config{Namespace: "pltlab-42-1", HostDev: "pltlab2a-1", ClientDev: "pltlab0",
		HostAddr: netip.MustParseAddr("100.64.0.5"), ClientAddr: netip.MustParseAddr("100.64.0.6"),
		MTU: 1500, Down: d, Up: d}
}

func TestPlanCarlucci(t *testing.T) {
	// The bottleneck per direction: netem for the delay (its limit only bounds the delay line),
	// under it a tbf at 3 Mbit/s whose own FIFO is the 18750-byte droptail queue; burst = 2 MTU
	// (1 ms at 3 Mbit/s is only 375 B); stab overhead -14 makes both count IP bytes.
	want := []string{
		"modprobe -a veth sch_netem sch_tbf sch_codel sch_pie sch_fq_codel",
		"ip link add pltlab2a-1 address 02:00:64:40:00:05 mtu 1500 gso_max_segs 1 type veth peer name pltlab0 address 02:00:64:40:00:06 mtu 1500 gso_max_segs 1 netns pltlab-42-1",
		"ethtool -K pltlab2a-1 tso off gso off gro off",
		"ip netns exec pltlab-42-1 ethtool -K pltlab0 tso off gso off gro off",
		// Nothing but the endpoints' own packets crosses the link: no IPv6 link-local address on
		// the host end, permanent neighbour entries both ways (no ARP).
		"ip link set pltlab2a-1 addrgenmode none",
		"ip addr add 100.64.0.5/32 peer 100.64.0.6/32 dev pltlab2a-1",
		"ip link set pltlab2a-1 up",
		"ip neigh replace 100.64.0.6 lladdr 02:00:64:40:00:06 dev pltlab2a-1 nud permanent",
		"ip -n pltlab-42-1 addr add 100.64.0.6/32 peer 100.64.0.5/32 dev pltlab0",
		"ip -n pltlab-42-1 link set pltlab0 up",
		"ip -n pltlab-42-1 neigh replace 100.64.0.5 lladdr 02:00:64:40:00:05 dev pltlab0 nud permanent",
		"tc qdisc replace dev pltlab2a-1 root handle 1: stab overhead -14 netem delay 25000us limit 100000",
		"tc qdisc add dev pltlab2a-1 parent 1:1 handle 10: tbf rate 3000000bit burst 3000 limit 18750",
		"tc -n pltlab-42-1 qdisc replace dev pltlab0 root handle 1: stab overhead -14 netem delay 25000us limit 100000",
		"tc -n pltlab-42-1 qdisc add dev pltlab0 parent 1:1 handle 10: tbf rate 3000000bit burst 3000 limit 18750",
	}
	var got []string
	for _, argv := range Build(carlucci()) {
		got = append(got, strings.Join(argv, " "))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Build:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// tcLines returns Build's tc command lines for c, joined.
func tcLines(c Config) []string {
	var out []string
	for _, argv := range Build(c) {
		if argv[0] == "tc" {
			out = append(out, strings.Join(argv, " "))
		}
	}
	return out
}

func TestPlanOptions(t *testing.T) {
	c := carlucci()
	c.Down = Direction{Rate: 10e6, Delay: 10 * time.Millisecond, Jitter: 2 * time.Millisecond, Ordered: true, Loss: 0.01, QueuePackets: 25}
	c.Up = Direction{Delay: 10 * time.Millisecond, Jitter: 2 * time.Millisecond}
	want := []string{
		// Jitter with the order kept: netem's rate reference point makes each packet leave
		// after its predecessor. A packet-counted queue: pfifo under tbf (burst: 1 ms at 10
		// Mbit/s = 1250 B < 2 MTU).
		"tc qdisc replace dev pltlab2a-1 root handle 1: stab overhead -14 netem delay 10000us 2000us loss random 1% rate 100gbit limit 100000",
		"tc qdisc add dev pltlab2a-1 parent 1:1 handle 10: tbf rate 10000000bit burst 3000 limit 1500",
		"tc qdisc add dev pltlab2a-1 parent 10:1 handle 20: pfifo limit 25",
		// Unlimited rate: no rate limiter, no queue; jitter may reorder (Ordered false).
		"tc -n pltlab-42-1 qdisc replace dev pltlab0 root handle 1: stab overhead -14 netem delay 10000us 2000us limit 100000",
	}
	if got := tcLines(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("tc lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPlanAQMAndLoss(t *testing.T) {
	c := carlucci()
	c.Down = Direction{Rate: 100e6, Delay: 20 * time.Millisecond, GE: [4]float64{0.01, 0.25, 1, 0}, QueuePackets: 1000, AQM: CoDel}
	c.Up = Direction{Rate: 100e6, Delay: 20 * time.Millisecond, QueuePackets: 1000, AQM: PIE, Target: 20 * time.Millisecond, ECN: true}
	want := []string{
		"tc qdisc replace dev pltlab2a-1 root handle 1: stab overhead -14 netem delay 20000us loss gemodel 1% 25% 100% 0% limit 100000",
		// 1 ms at 100 Mbit/s = 12500 B of burst.
		"tc qdisc add dev pltlab2a-1 parent 1:1 handle 10: tbf rate 100000000bit burst 12500 limit 1500",
		"tc qdisc add dev pltlab2a-1 parent 10:1 handle 20: codel limit 1000 target 5000us interval 100000us noecn",
		"tc -n pltlab-42-1 qdisc replace dev pltlab0 root handle 1: stab overhead -14 netem delay 20000us limit 100000",
		"tc -n pltlab-42-1 qdisc add dev pltlab0 parent 1:1 handle 10: tbf rate 100000000bit burst 12500 limit 1500",
		"tc -n pltlab-42-1 qdisc add dev pltlab0 parent 10:1 handle 20: pie limit 1000 target 20000us tupdate 15000us ecn",
	}
	if got := tcLines(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("tc lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	c.Down.AQM, c.Down.Interval = FQCoDel, 50*time.Millisecond
	c.Up = Direction{Rate: 1e6, Delay: 0, ReorderProb: 0.9, QueuePackets: 50, AQM: DropHead}
	want = []string{
		"tc qdisc add dev pltlab2a-1 parent 10:1 handle 20: fq_codel limit 1000 target 5000us interval 50000us noecn",
		"tc -n pltlab-42-1 qdisc replace dev pltlab0 root handle 1: stab overhead -14 netem delay 0us reorder 90% gap 1 limit 100000",
		"tc -n pltlab-42-1 qdisc add dev pltlab0 parent 10:1 handle 20: pfifo_head_drop limit 50",
	}
	got := tcLines(c)
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, strings.Join(got, "\n"))
		}
	}
}

func TestShow(t *testing.T) {
	want := [][]string{{"tc", "-d", "qdisc", "show", "dev", "pltlab2a-1"}, {"tc", "-d", "-n", "pltlab-42-1", "qdisc", "show", "dev", "pltlab0"}}
	if got := Show(carlucci()); !reflect.DeepEqual(got, want) {
		t.Fatalf("Show = %v", got)
	}
}

func TestTeardown(t *testing.T) {
	if got := Teardown(carlucci()); !reflect.DeepEqual(got, [][]string{{"ip", "link", "del", "pltlab2a-1"}}) {
		t.Fatalf("Teardown = %v", got)
	}
}

// recorder is a Runner that records command lines.
type recorder struct{ calls [][]string }

func (r *recorder) Run(_ context.Context, argv []string) error {
	r.calls = append(r.calls, argv)
	return nil
}

func TestRunnerSeam(t *testing.T) {
	var r recorder
	var _ Runner = &r
	for _, argv := range Build(carlucci()) {
		r.Run(context.Background(), argv)
	}
	if !reflect.DeepEqual(r.calls, Build(carlucci())) {
		t.Fatal("recorded calls differ from the plan")
	}
}

func TestAvailable(t *testing.T) {
	dir := t.TempDir()
	sys, mods := filepath.Join(dir, "sys"), filepath.Join(dir, "mods")
	os.MkdirAll(sys, 0o755)
	os.MkdirAll(filepath.Join(mods, "kernel", "net", "sched"), 0o755)
	if err := available(sys, mods); err != ErrUnavailable {
		t.Fatalf("empty: %v, want ErrUnavailable", err)
	}
	os.WriteFile(filepath.Join(mods, "modules.builtin"), []byte("kernel/net/sched/sch_netem.ko\n"), 0o644)
	if err := available(sys, mods); err != nil {
		t.Fatalf("builtin: %v", err)
	}
	os.Remove(filepath.Join(mods, "modules.builtin"))
	os.WriteFile(filepath.Join(mods, "kernel", "net", "sched", "sch_netem.ko.xz"), nil, 0o644)
	if err := available(sys, mods); err != nil {
		t.Fatalf("module file: %v", err)
	}
}

// TestParseStats decodes tc -s -j qdisc output (iproute2 6.1's format, a netem root over a
// tbf) and refuses what is not JSON, naming it.
func TestParseStats(t *testing.T) {
	out := `[{"kind":"netem","handle":"1:","root":true,"refcnt":2,"options":{"limit":100000,"delay":{"delay":0.025}},"bytes":1840,"packets":20,"drops":1,"overlimits":0,"requeues":0,"backlog":0,"qlen":0},` +
		`{"kind":"tbf","handle":"10:","parent":"1:1","options":{"rate":375000,"burst":2999,"lat":42000},"bytes":1748,"packets":19,"drops":0,"overlimits":3,"requeues":0,"backlog":1514,"qlen":1}]`
	qs, err := ParseStats([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []QdiscStats{
		{Kind: "netem", Handle: "1:", Bytes: 1840, Packets: 20, Drops: 1},
		{Kind: "tbf", Handle: "10:", Parent: "1:1", Bytes: 1748, Packets: 19, Overlimits: 3, Backlog: 1514, Qlen: 1},
	}
	if !reflect.DeepEqual(qs, want) {
		t.Fatalf("ParseStats = %+v\nwant %+v", qs, want)
	}
	if _, err := ParseStats([]byte("qdisc netem 1: root")); err == nil || !strings.Contains(err.Error(), "qdisc netem") {
		t.Fatalf("plain text: %v, want an error naming the output", err)
	}
	c := Config{Namespace: "pltlab-ns1", HostDev: "pltlab7", ClientDev: "pltlab0"}
	if got := Stats(c); !reflect.DeepEqual(got, [][]string{
		{"tc", "-s", "-j", "qdisc", "show", "dev", "pltlab7"},
		{"tc", "-s", "-j", "-n", "pltlab-ns1", "qdisc", "show", "dev", "pltlab0"},
	}) {
		t.Fatalf("Stats = %v", got)
	}
}

// TestPlanCAKEAndJitterDist: aqm=cake replaces the token bucket by cake at the rate ("raw":
// the root's size table already counts IP bytes), loads sch_cake, and has no child; a jitter
// distribution other than uniform becomes netem's "distribution NAME".
func TestPlanCAKEAndJitterDist(t *testing.T) {
	c := carlucci()
	c.Down = Direction{Rate: 3e6, Delay: 25 * time.Millisecond, Jitter: 5 * time.Millisecond, JitterDist: "pareto", Ordered: true, AQM: CAKE, QueuePackets: 1000}
	c.Up = Direction{Rate: 1e6, Delay: 25 * time.Millisecond, Jitter: 5 * time.Millisecond, JitterDist: "uniform", AQM: CAKE}
	cmds := Build(c)
	if got, want := strings.Join(cmds[0], " "), "modprobe -a veth sch_netem sch_tbf sch_codel sch_pie sch_fq_codel sch_cake"; got != want {
		t.Errorf("modules: %q, want %q", got, want)
	}
	want := []string{
		"tc qdisc replace dev pltlab2a-1 root handle 1: stab overhead -14 netem delay 25000us 5000us distribution pareto rate 100gbit limit 100000",
		"tc qdisc add dev pltlab2a-1 parent 1:1 handle 10: cake bandwidth 3000000bit raw",
		"tc -n pltlab-42-1 qdisc replace dev pltlab0 root handle 1: stab overhead -14 netem delay 25000us 5000us limit 100000",
		"tc -n pltlab-42-1 qdisc add dev pltlab0 parent 1:1 handle 10: cake bandwidth 1000000bit raw",
	}
	if got := tcLines(c); !reflect.DeepEqual(got, want) {
		t.Fatalf("tc lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := strings.Join(Build(carlucci())[0], " "); strings.Contains(got, "sch_cake") {
		t.Errorf("a link without cake loads it: %q", got)
	}
}
