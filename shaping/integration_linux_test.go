package shaping

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/shaping/internal/linktest"
	"github.com/pltlab/pltlab/shaping/linkspec"

	"github.com/vishvananda/netns"
)

// needRoot skips integration tests under -short or without root.
func needRoot(t *testing.T) { linktest.NeedRoot(t) }

// assertGone fails if the namespace ns or the host device dev still exists.
func assertGone(t *testing.T, ns, dev string) { linktest.AssertGone(t, ns, dev) }

// openLink opens spec and closes it at the end of the test, checking nothing is left behind.
func openLink(t *testing.T, spec string) Link {
	t.Helper()
	s, err := linkspec.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	linktest.CloseAtEnd(t, l.(*EmuLink))
	return l
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
	s, _ := linkspec.Parse("rtt=1ms")
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
