package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

// linkLeftovers lists the namespaces and TUN devices of process pid still present.
func linkLeftovers(t *testing.T, pid int) []string {
	t.Helper()
	found := pltlabNamespaces(t, pid)
	out, _ := exec.Command("ip", "-o", "link").CombinedOutput()
	if prefix := fmt.Sprintf("pltlab%x-", pid); strings.Contains(string(out), prefix) {
		found = append(found, prefix+"*")
	}
	return found
}

// TestIntegrationShellInterrupt runs `pltlab shell -- ... sleep 30`, interrupts it once the
// command runs behind the link, and checks the exit status and that the link is gone; then checks
// that exit codes pass through, that a bad link is a usage error, and that `pltlab link check
// --json` gives one object and leaves nothing behind.
func TestIntegrationShellInterrupt(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root for network namespaces and TUN devices; skipped with -short")
	}
	bin := buildPltlab(t)
	mark := filepath.Join(t.TempDir(), "started")
	cmd := exec.Command(bin, "shell", "--link", "rate=3mbit,rtt=50ms", "--", "sh", "-c", "touch "+mark+"; exec sleep 30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("the command did not start behind the link within 20 s")
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) // like Ctrl-C: the whole process group
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit after SIGINT: %v, want status 130", err)
	}
	if left := linkLeftovers(t, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("left behind after SIGINT: %v", left)
	}
	code := exec.Command(bin, "shell", "--link", "rtt=1ms", "--", "sh", "-c", "exit 7").Run()
	if !errors.As(code, &ee) || ee.ExitCode() != 7 {
		t.Errorf("exit status of 'sh -c exit 7' through shell: %v, want 7", code)
	}
	usage := exec.Command(bin, "shell", "--link", "rate=0mbit", "--", "true").Run()
	if !errors.As(usage, &ee) || ee.ExitCode() != 2 {
		t.Errorf("bad --link: %v, want status 2", usage)
	}
	check := exec.Command(bin, "link", "check", "--link", "carlucci2015", "--quick", "--json")
	out, err := check.Output()
	var res result.LinkCheck
	if jerr := json.Unmarshal(out, &res); jerr != nil || len(res.Lines) == 0 {
		t.Fatalf("link check --json: %v %v: %s", err, jerr, out)
	}
	t.Logf("link check: pass=%v rtt median %.2f ms, down %.3f up %.3f Mbit/s (exit %v)", res.Pass, res.RTTMedianMs, res.DownBps/1e6, res.UpBps/1e6, err)
	if left := linkLeftovers(t, check.Process.Pid); len(left) > 0 {
		t.Errorf("left behind after link check: %v", left)
	}
}
