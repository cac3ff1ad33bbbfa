package main

import (
	"bufio"
	"bytes"
	"errors"
	"github.com/pltlab/pltlab/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

// needChromium skips a test that needs a real browser (but no root: --link none).
func needChromium(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	testenv.Require(t, "chromium")
}

// TestIntegrationRunBrokenPipe (issue 11 item 3): when the reader of --out - goes away, run
// stops in order (exit 141, a message) and leaves no temporary directory behind.
func TestIntegrationRunBrokenPipe(t *testing.T) {
	needChromium(t)
	dir := t.TempDir()
	bin := buildPltlab(t)
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o755)
	cmd := exec.Command(bin, "run", "--page", "2x10KB", "--link", "none", "--runs", "50", "--out", "-")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	stdout.Close() // the reader goes away, like head -c 100
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 141 {
			t.Errorf("exit %v, want code 141; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("run went on after its reader left; stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "broken pipe") {
		t.Errorf("stderr does not say why it stopped:\n%s", stderr.String())
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestIntegrationRunResume (issue 11 item 7): a run cut short is continued with --resume: the
// loads already made are kept and not redone, and the file ends complete.
func TestIntegrationRunResume(t *testing.T) {
	needChromium(t)
	dir := t.TempDir()
	bin := buildPltlab(t)
	out := filepath.Join(dir, "r.jsonl")
	args := []string{"run", "--page", "2x10KB", "--link", "none", "--protocols", "h1,h2", "--runs", "2", "--warmup", "0", "--out", out}
	if b, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, b)
	}
	full := readAll(t, out)
	// Keep the first two loads and half of the third line, as a kill would.
	b, _ := os.ReadFile(out)
	lines := strings.SplitAfter(string(b), "\n")
	os.WriteFile(out, []byte(lines[0]+lines[1]+lines[2][:len(lines[2])/2]), 0o644)
	rep, err := exec.Command(bin, "report", out).CombinedOutput()
	if err != nil || !strings.Contains(string(rep), "PARTIAL") {
		t.Errorf("report of a partial run does not say so (err %v):\n%s", err, rep)
	}
	if b, err := exec.Command(bin, append(args, "--resume")...).CombinedOutput(); err != nil {
		t.Fatalf("resume: %v\n%s", err, b)
	}
	var loads []*result.Record
	f, _ := os.Open(out)
	defer f.Close()
	rd := result.NewReader(f, out)
	for {
		r, err := rd.Next()
		if err != nil {
			var le *result.LineError
			if errors.As(err, &le) {
				continue // the cut line
			}
			break
		}
		if r.IsLoad() {
			loads = append(loads, r)
		}
	}
	if len(loads) != len(full) {
		t.Fatalf("%d loads after resume, want %d", len(loads), len(full))
	}
	seen := map[int]bool{}
	for _, r := range loads {
		if seen[r.Run] || r.Experiment != full[0].Experiment {
			t.Errorf("load %d of %q made twice or in another experiment", r.Run, r.Experiment)
		}
		seen[r.Run] = true
	}
	if rep, _ := exec.Command(bin, "report", out).CombinedOutput(); strings.Contains(string(rep), "PARTIAL") {
		t.Errorf("report after resume still says partial:\n%s", rep)
	}
}
