// Package linktest holds what the link integration tests of shaping and its subpackages share: the root guard and the check that a closed link left nothing behind.
package linktest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// netnsDir is where ip-netns(8) and package shaping bind named network namespaces.
const netnsDir = "/var/run/netns"

// NeedRoot skips an integration test under -short or without root (uid 0).
func NeedRoot(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test (needs root, TUN and namespaces); skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
}

// AssertGone fails t if the network namespace ns (under /var/run/netns) or the host-side
// network device dev still exists.
func AssertGone(t testing.TB, ns, dev string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(netnsDir, ns)); err == nil {
		t.Errorf("namespace %s left behind", ns)
	}
	if out, _ := exec.Command("ip", "-o", "link", "show", "dev", dev).CombinedOutput(); strings.Contains(string(out), dev+":") {
		t.Errorf("device %s left behind: %s", dev, out)
	}
}

// Link is what CloseAtEnd needs of an open link.
type Link interface {
	// Namespace is the link's client network namespace.
	Namespace() string
	// HostDev is the link's host-side device (TUN or veth).
	HostDev() string
	// Close tears the link down.
	Close() error
}

// CloseAtEnd closes l when t ends and then checks (AssertGone) that its namespace and host
// device are gone.
func CloseAtEnd(t testing.TB, l Link) {
	t.Helper()
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		AssertGone(t, l.Namespace(), l.HostDev())
	})
}
