package shaping

import (
	"context"
	"errors"
	"fmt"
	"github.com/pltlab/pltlab/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"
)

// needRoot skips integration tests under -short or without root.
func needRoot(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test (needs root, TUN and namespaces); skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
}

// openLink opens spec and closes it at the end of the test, checking nothing is left behind.
func openLink(t *testing.T, spec string) Link {
	t.Helper()
	s, err := ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		assertGone(t, l.Namespace(), l.(*EmuLink).dev)
	})
	return l
}

// assertGone fails if the namespace ns or the host device dev still exists.
func assertGone(t *testing.T, ns, dev string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(netnsDir, ns)); err == nil {
		t.Errorf("namespace %s left behind", ns)
	}
	if out, _ := exec.Command("ip", "-o", "link", "show", "dev", dev).CombinedOutput(); strings.Contains(string(out), dev+":") {
		t.Errorf("device %s left behind: %s", dev, out)
	}
}

func TestIntegrationPing(t *testing.T) {
	needRoot(t)
	testenv.Require(t, "ping") // a skip outside CI only: under CI a missing ping fails
	l := openLink(t, "rate=3mbit,rtt=50ms")
	out, err := Command(context.Background(), l, "ping", "-c", "5", "-i", "0.2", l.HostAddr().String()).CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatal(err)
	}
	c := l.TakeCounters()
	if c.Up.PacketsOut != 5 || c.Down.PacketsOut != 5 {
		t.Errorf("counters: %+v, want 5 packets each way", c)
	}
	t.Logf("timing error p50/p99/max down %.3f/%.3f/%.3f ms", c.Down.TimingErrP50Ms, c.Down.TimingErrP99Ms, c.Down.TimingErrMaxMs)
}

func TestIntegrationCommandEnv(t *testing.T) {
	needRoot(t)
	l := openLink(t, "rtt=2ms")
	out, err := Command(context.Background(), l, "sh", "-c", "echo $"+EnvHostAddr+"; ip -o -4 addr show dev "+clientDev).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), l.HostAddr().String()) || !strings.Contains(string(out), l.ClientAddr().String()) {
		t.Fatalf("output %q lacks %s / %s", out, l.HostAddr(), l.ClientAddr())
	}
}

// TestIntegrationCheck runs the quick check on carlucci2015 and logs the figures (no timed
// assertions: the machine may be loaded); it asserts the harness works and that nothing was
// dropped outside the model.
func TestIntegrationCheck(t *testing.T) {
	needRoot(t)
	l := openLink(t, "carlucci2015")
	res, err := Check(context.Background(), l, CheckOptions{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range res.Lines {
		t.Logf("%-45s %-28s %-20s %-35s %v", line.Name, line.Configured, line.Measured, line.Tolerance, line.Pass)
		if strings.HasPrefix(line.Name, "emulator faults") || strings.HasPrefix(line.Name, "random-loss") {
			if !line.Pass {
				t.Errorf("%s: %s", line.Name, line.Measured)
			}
		}
	}
	if res.DownBps <= 0 || res.UpBps <= 0 || res.RTTMedianMs <= 0 {
		t.Fatalf("missing measurements: %+v", res)
	}
}

// TestIntegrationQueueBound fills the down queue with a TCP bulk transfer and checks the model
// bound on the emulator's own counters: no packet waited longer than queue/rate.
func TestIntegrationQueueBound(t *testing.T) {
	needRoot(t)
	l := openLink(t, "rate=10mbit,rtt=20ms,queue=25000B")
	c := &checker{l: l, spec: l.Spec(), quick: true}
	s, r, err := c.tcpPair(context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	go sendUntilError(s)
	go drain(r)
	l.TakeCounters()
	bps := goodput(context.Background(), s, time.Second, 0)
	s.Close()
	r.Close()
	e := l.TakeCounters()
	bound := ms(c.qDelay(true))
	t.Logf("goodput %.3f Mbit/s; down queue delay p50/p99/max %.2f/%.2f/%.2f ms (bound %.2f); drops queue %d other %d",
		bps/1e6, e.Down.QueueDelayP50Ms, e.Down.QueueDelayP99Ms, e.Down.QueueDelayMaxMs, bound, e.Down.DropsQueue, e.Down.DropsOther)
	if e.Down.QueueDelayMaxMs > bound {
		t.Errorf("queue delay max %.3f ms > queue/rate %.3f ms", e.Down.QueueDelayMaxMs, bound)
	}
	if e.Down.DropsLoss+e.Up.DropsLoss+e.Down.DropsOther+e.Up.DropsOther != 0 {
		t.Errorf("unintended drops: %+v", e)
	}
}

func TestIntegrationParallelLinks(t *testing.T) {
	needRoot(t)
	a, b := openLink(t, "rtt=10ms"), openLink(t, "rtt=30ms")
	if a.HostAddr() == b.HostAddr() || a.Namespace() == b.Namespace() {
		t.Fatalf("links share addresses or namespace: %v %v", a.HostAddr(), b.HostAddr())
	}
	for _, l := range []Link{a, b} {
		c := &checker{l: l, spec: l.Spec()}
		rtts, err := c.probeRTT(context.Background(), 5, 0, nil)
		if err != nil || len(rtts) != 5 {
			t.Fatalf("%s: %v %v", l.Spec().Input, rtts, err)
		}
		t.Logf("%s: RTTs %v", l.Spec().Input, rtts)
	}
}

func TestIntegrationStaleCleanup(t *testing.T) {
	needRoot(t)
	// A pid that is surely dead: a child that has exited.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	name := fmt.Sprintf("%s%d-7", nsPrefix, dead)
	if err := onThread(func(orig netns.NsHandle) error {
		ns, err := netns.NewNamed(name)
		if err == nil {
			ns.Close()
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	openLink(t, "rtt=1ms")
	if _, err := os.Stat(filepath.Join(netnsDir, name)); !errors.Is(err, os.ErrNotExist) {
		netns.DeleteNamed(name)
		t.Fatalf("stale namespace %s not deleted by Open", name)
	}
}

func TestIntegrationCloseOnCancel(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, _ := ParseSpec("rtt=1ms")
	l, err := Open(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-l.(*EmuLink).closed:
	case <-time.After(5 * time.Second):
		t.Fatal("link not closed 5 s after cancel")
	}
	assertGone(t, l.Namespace(), l.(*EmuLink).dev)
}
