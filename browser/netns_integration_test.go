//go:build linux

package browser

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/pltlab/pltlab/server"
)

// TestIntegrationNetNS launches Chromium inside a network namespace that has only its loopback
// device (no interface is added to the root namespace), with the test server's listener made
// inside that namespace, and checks that Chromium runs there and loads the page.
func TestIntegrationNetNS(t *testing.T) {
	chrome := needChromium(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces")
	}
	ns := isolatedNet(t)
	ln := listenIn(t, ns)
	dir, m := genPage(t, "3x10KB")
	srv := startStallServerOn(t, dir, false, ln)
	b, err := Launch(context.Background(), WithChrome(chrome), WithNetNS(ns), WithProtocol("h2"),
		WithSPKI(srv.SPKI), WithPort(srv.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, want := nsInode(t, "/proc/"+strconv.Itoa(b.proc.cdp.Process().Pid)+"/ns/net"), nsInode(t, "/run/netns/"+ns); got != want {
		t.Errorf("chromium's network namespace inode %d, want %d (%s)", got, want, ns)
	}
	rec := mustLoad(t, b, Target{URL: srv.URL(), Manifest: m, Timeout: 20 * time.Second})
	checkValid(t, rec, "h2", m.Objects)
}

// isolatedNet returns a new network namespace with only loopback up, removed after the test,
// when running as root; "" otherwise. Chromium in it does not see the interfaces other
// processes add to or remove from the root namespace, which make it fail loads in flight with
// net::ERR_NETWORK_CHANGED.
func isolatedNet(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return ""
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return ""
	}
	ns := fmt.Sprintf("pltlab-bt-%d-%d", os.Getpid(), nsCounter.Add(1))
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", ns).Run() })
	if out, err := exec.Command("ip", "-n", ns, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
	return ns
}

var nsCounter atomic.Int64

// listenIn opens a TCP listener on 127.0.0.1:0 inside namespace ns ("" = here).
func listenIn(t *testing.T, ns string) net.Listener {
	t.Helper()
	var ln net.Listener
	inNetNS(t, ns, func() {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	})
	return ln
}

// inNetNS runs f on a thread inside namespace ns ("" = here): sockets f opens stay in ns.
func inNetNS(t *testing.T, ns string, f func()) {
	t.Helper()
	if ns == "" {
		f()
		return
	}
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	target, err := netns.GetFromName(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		t.Fatal(err)
	}
	f()
	if err := netns.Set(orig); err != nil {
		t.Fatalf("back to the original namespace: %v", err) // the thread stays locked and dies
	}
	runtime.UnlockOSThread()
}

// nsInode returns the inode of a namespace file.
func nsInode(t *testing.T, path string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return st.Ino
}

// startServer starts the real server on the page in dir inside an isolated network namespace
// of its own (the server's sockets and, launched WithNetNS(ns), Chromium), closed when t ends.
func startServer(t *testing.T, dir string) (*server.Server, string) {
	t.Helper()
	srv, err := server.New(dir, server.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ns := isolatedNet(t)
	inNetNS(t, ns, func() {
		if err := srv.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
	t.Cleanup(func() { srv.Close() })
	return srv, ns
}
