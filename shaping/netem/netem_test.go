package netem

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
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
	// Limit: 18750 B queue = 13 MTU packets, delay line 3e6/8 x 25 ms / 64 B = 146.5 -> 147,
	// plus 1: 161.
	want := []string{
		"ip link add pltlab2a-1 mtu 1500 type veth peer name pltlab0 mtu 1500 netns pltlab-42-1",
		"ethtool -K pltlab2a-1 tso off gso off gro off",
		"ip netns exec pltlab-42-1 ethtool -K pltlab0 tso off gso off gro off",
		"ip addr add 100.64.0.5/32 peer 100.64.0.6/32 dev pltlab2a-1",
		"ip link set pltlab2a-1 up",
		"ip -n pltlab-42-1 addr add 100.64.0.6/32 peer 100.64.0.5/32 dev pltlab0",
		"ip -n pltlab-42-1 link set pltlab0 up",
		"tc qdisc replace dev pltlab2a-1 root netem delay 25000us rate 3000000bit limit 161",
		"tc -n pltlab-42-1 qdisc replace dev pltlab0 root netem delay 25000us rate 3000000bit limit 161",
	}
	var got []string
	for _, argv := range Plan(carlucci()) {
		got = append(got, strings.Join(argv, " "))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Plan:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestPlanOptions(t *testing.T) {
	c := carlucci()
	c.Down = Direction{Rate: 10e6, Delay: 10 * time.Millisecond, Jitter: 2 * time.Millisecond, Loss: 0.01, QueuePackets: 25}
	c.Up = Direction{Delay: 10 * time.Millisecond}
	plan := Plan(c)
	down := strings.Join(plan[len(plan)-2], " ")
	up := strings.Join(plan[len(plan)-1], " ")
	// 25 + ceil(10e6/8 x 12 ms / 64 = 234.375) + 1 = 261.
	if want := "tc qdisc replace dev pltlab2a-1 root netem delay 10000us 2000us loss random 1% rate 10000000bit limit 261"; down != want {
		t.Errorf("down qdisc\n%s\nwant\n%s", down, want)
	}
	if want := "tc -n pltlab-42-1 qdisc replace dev pltlab0 root netem delay 10000us limit 100000"; up != want {
		t.Errorf("up qdisc\n%s\nwant\n%s", up, want)
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
	for _, argv := range Plan(carlucci()) {
		r.Run(context.Background(), argv)
	}
	if !reflect.DeepEqual(r.calls, Plan(carlucci())) {
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
