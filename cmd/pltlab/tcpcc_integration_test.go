package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIntegrationRefusesForbiddenTCPCC: the unprivileged user nobody asks for a congestion
// control outside net.ipv4.tcp_allowed_congestion_control with an unshaped link (no user
// namespace): run and flows refuse up front, exit 2, in one line naming the value and the
// accepted list, leaving no --out file. Takes about the time of one build.
func TestIntegrationRefusesForbiddenTCPCC(t *testing.T) {
	needRootAndChromium(t) // root only to become nobody
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
	if err != nil {
		t.Fatal(err)
	}
	allowed := strings.Fields(string(b))
	avail, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		t.Fatal(err)
	}
	var forbidden string
	for _, cc := range strings.Fields(string(avail)) {
		if !slices.Contains(allowed, cc) && (cc == "cubic" || cc == "bbr" || cc == "reno") {
			forbidden = cc
			break
		}
	}
	if forbidden == "" {
		t.Skipf("every available controller is allowed to users (%v): none to refuse", allowed)
	}
	dir, err := os.MkdirTemp("", "pltlab-tcpcc-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := buildPltlab(t)
	out := filepath.Join(dir, "r.jsonl")
	for _, args := range [][]string{
		{"run", "--page", "3x10KB", "--link", "none", "--runs", "1", "--tcp-cc", forbidden, "--out", out},
		{"flows", "--link", "none", "--flow", "h1:" + forbidden, "--duration", "2s", "--out", out},
	} {
		cmd := asNobody(exec.Command(bin, args...))
		cmd.Dir = dir
		msg, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		text := strings.TrimSpace(string(msg))
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("%s as nobody with %s: %v, want exit 2\n%s", args[0], forbidden, err, text)
		}
		if strings.Count(text, "\n") != 0 || !strings.Contains(text, "tcp_cc "+forbidden+": this user may not set it") ||
			!strings.Contains(text, strings.Join(allowed, " ")) {
			t.Fatalf("%s as nobody: message %q, want one line naming %s and the allowed %v", args[0], text, forbidden, allowed)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Fatalf("%s as nobody left %s behind (err %v)", args[0], out, err)
		}
	}
}
