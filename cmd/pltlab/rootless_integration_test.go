package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

// asNobody returns cmd set to run as the unprivileged user nobody (uid and gid 65534).
func asNobody(cmd *exec.Cmd) *exec.Cmd {
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Env = append(os.Environ(), "HOME="+os.TempDir())
	return cmd
}

// TestIntegrationRootless runs shaped links as the unprivileged user nobody: pltlab re-runs
// itself inside user namespaces where it may create network namespaces and TUN devices. shell's
// exit status passes through, and a run with Chromium behind the link gives valid records of
// h2 and h3, written with the user's own ownership.
func TestIntegrationRootless(t *testing.T) {
	needRootAndChromium(t) // root only to become nobody
	dir, err := os.MkdirTemp("", "pltlab-rootless-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	bin := buildPltlab(t)
	shell := asNobody(exec.Command(bin, "shell", "--link", "rate=3mbit,rtt=50ms", "--", "sh", "-c", "ping -c 2 -i 0.2 -q $PLTLAB_HOST_ADDR >/dev/null && exit 3"))
	shell.Dir = dir
	err = shell.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("rootless shell (ping through the link, then exit 3): %v, want exit status 3", err)
	}
	out := filepath.Join(dir, "r.jsonl")
	run := asNobody(exec.Command(bin, "run", "--page", "3x10KB", "--link", "rate=10mbit,rtt=20ms", "--protocols", "h2,h3",
		"--runs", "1", "--warmup", "0", "--no-link-check", "--out", out))
	run.Dir = dir
	start := time.Now()
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("rootless run: %v\n%s", err, b)
	}
	t.Logf("rootless run took %v", time.Since(start).Round(time.Millisecond))
	recs := readAll(t, out)
	loads := 0
	for _, r := range recs {
		if r.Kind != "" && r.Kind != "load" {
			continue
		}
		loads++
		if r.Env == nil || !r.Env.UserNS {
			t.Errorf("load %d: env does not record the user namespace: %+v", r.Run, r.Env)
		}
		if r.ObservedProtocol != r.Protocol {
			t.Errorf("load %d (%s): observed %q", r.Run, r.Protocol, r.ObservedProtocol)
		}
		switch {
		case r.Valid:
		case result.Classify(r) == result.OutcomeEmulatorLate && r.Attempt == 2 && strings.Contains(r.InvalidReason, "machine: CPU"):
			// Without CAP_SYS_NICE the forwarders run at SCHED_OTHER nice -10, not SCHED_FIFO:
			// with Chromium keeping both CPUs over 90 % busy, a wake-up 5.56 ms late was
			// measured here (2026-12-03). The load is then refused as the emulator's, made
			// again, and its reason names the machine's load: the records stay right.
			t.Logf("load %d (%s): emulator late on both attempts: %s", r.Run, r.Protocol, r.InvalidReason)
		default:
			t.Errorf("load %d (%s): valid=%v attempt %d: %s", r.Run, r.Protocol, r.Valid, r.Attempt, r.InvalidReason)
		}
	}
	if loads != 2 {
		t.Errorf("%d loads, want 2", loads)
	}
	if fi, err := os.Stat(out); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 65534 {
		t.Errorf("result file %v: want it owned by nobody (65534)", err)
	}
}
