package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// writeResults writes n valid h1 and h2 loads to a new file in dir and returns its name.
func writeResults(t *testing.T, dir string, n int) string {
	t.Helper()
	var b bytes.Buffer
	w := result.NewWriter(&b)
	for i := range n {
		for _, p := range []string{"h1", "h2"} {
			r := &result.Record{Experiment: "e", Run: len(p) * i, Time: time.Unix(int64(i), 0), Protocol: p, Mode: result.Cold,
				Valid: true, PLTMs: 100 + float64(i), DeadlineMs: 60000, Page: result.Page{Spec: "1x1KB"}, Link: result.Link{Spec: "none"}}
			r.Run = 2*i + len(r.Protocol) - 2
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	name := filepath.Join(dir, "r.jsonl")
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestReportProtectsFiles (issue 11 item 1): report never replaces one of its inputs, however
// it is named, and replaces another existing file only with --force.
func TestReportProtectsFiles(t *testing.T) {
	dir := t.TempDir()
	in := writeResults(t, dir, 3)
	orig, _ := os.ReadFile(in)
	link := filepath.Join(dir, "alias.jsonl")
	if err := os.Link(in, link); err != nil {
		t.Fatal(err)
	}
	svgIn := filepath.Join(dir, "results.svg") // an input named like a plot
	if err := os.WriteFile(svgIn, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "old.txt")
	os.WriteFile(existing, []byte("keep"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"same name", []string{"report", in, "--out", in}, "is the input"},
		{"same with force", []string{"report", in, "--out", in, "--force"}, "is the input"},
		{"other path", []string{"report", in, "--out", filepath.Join(dir, ".", "..", filepath.Base(dir), "r.jsonl"), "--force"}, "is the input"},
		{"hard link", []string{"report", in, "--out", link, "--force"}, "is the input"},
		{"plot onto input", []string{"report", in, svgIn, "--plot", svgIn, "--force"}, "is the input"},
		{"existing", []string{"report", in, "--out", existing}, "exists: remove it or add --force"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
			if now, _ := os.ReadFile(in); !bytes.Equal(now, orig) {
				t.Fatal("the input was changed")
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep" {
		t.Error("an existing file was replaced without --force")
	}
	stdin, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if _, err := openReportOutputs([]string{"-"}, stdin, reportFlags{out: in, force: true}); err == nil || !strings.Contains(err.Error(), "is the input -") {
		t.Errorf("report - --out F < F: err %v, want refused", err)
	}
	if code, _, errOut := runCLI(t, "report", in, "--out", existing, "--force"); code != 0 {
		t.Fatalf("with --force: exit %d, %s", code, errOut)
	}
	if b, _ := os.ReadFile(existing); !strings.Contains(string(b), "pltlab report") {
		t.Errorf("--force did not write the report: %q", b)
	}
}

// TestOutputLocked (issue 11 item 2): a result or report file held by another pltlab process
// is refused, whatever the flags, before any work.
func TestOutputLocked(t *testing.T) {
	dir := t.TempDir()
	in := writeResults(t, dir, 2)
	busy := filepath.Join(dir, "busy.jsonl")
	holder, err := openOut("--out", busy, outNew)
	if err != nil {
		t.Fatal(err)
	}
	holder.Write([]byte("{}\n"))
	defer holder.Close()
	self, _ := os.Executable() // stands in for Chromium: nothing is launched
	for _, args := range [][]string{
		{"run", "--page", "1x1KB", "--link", "none", "--out", busy, "--force", "--chrome", self},
		{"run", "--page", "1x1KB", "--link", "none", "--out", busy, "--resume", "--chrome", self},
		{"report", in, "--out", busy, "--force"},
	} {
		code, _, errOut := runCLI(t, args...)
		if code != 2 || !strings.Contains(errOut, "in use by another pltlab process") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and the lock named", args, code, errOut)
		}
	}
	if b, _ := os.ReadFile(busy); string(b) != "{}\n" {
		t.Errorf("the locked file was changed: %q", b)
	}
}

// TestOutputChecksUpFront (issue 11 item 4 and the smaller things): a FIFO, an unwritable
// directory or a missing one are refused before anything runs.
func TestOutputChecksUpFront(t *testing.T) {
	dir := t.TempDir()
	in := writeResults(t, dir, 2)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable() // stands in for Chromium: nothing is launched
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, args := range [][]string{
			{"run", "--page", "1x1KB", "--link", "none", "--out", fifo, "--chrome", self},
			{"run", "--page", "1x1KB", "--link", "none", "--out", fifo, "--force", "--chrome", self},
			{"report", in, "--out", fifo, "--force"},
			{"report", in, "--plot", filepath.Join(dir, "no", "p.png")},
		} {
			code, _, errOut := runCLI(t, args...)
			if code != 2 || !strings.Contains(errOut, "bad --") {
				t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errOut)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("an output check blocked on a FIFO")
	}
}

// TestInterruptAlwaysEnough (issue 11 item 4): when the clean-up after one interrupt does not
// finish within the grace period, pltlab exits anyway with code 130.
func TestInterruptAlwaysEnough(t *testing.T) {
	exited := make(chan int, 1)
	ctx, stop := interruptContext(50*time.Millisecond, func(code int) { exited <- code })
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	select {
	case code := <-exited:
		if code != 130 {
			t.Errorf("exit code %d, want 130", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("one interrupt did not end the process")
	}
}

// TestInterruptStopTwice: the stop func may be called twice (main calls it before re-running
// rootless, and again deferred).
func TestInterruptStopTwice(t *testing.T) {
	_, stop := interruptContext(time.Second, func(int) {})
	stop()
	stop()
}

// TestMatrixFlagsOverride (issue 11 item 5): flags given with --matrix override the file's
// values and the records say so; a matrix's default warm-up is the flag's.
func TestMatrixFlagsOverride(t *testing.T) {
	dir := t.TempDir()
	matrix := filepath.Join(dir, "m.yaml")
	os.WriteFile(matrix, []byte("pages: [1x1KB]\nlinks: [none]\nruns: 20\ntls: \"1.3\"\n"), 0o644)
	self, _ := os.Executable()
	parse := func(args ...string) experiment.Config {
		t.Helper()
		f := &runFlags{}
		cmd := newRunCmdWith(f, nil)
		if err := cmd.ParseFlags(append(args, "--matrix", matrix, "--chrome", self, "--out", filepath.Join(dir, "o.jsonl"))); err != nil {
			t.Fatal(err)
		}
		plan, err := f.config(cmd)
		if err != nil {
			t.Fatal(err)
		}
		return plan.Config
	}
	c := parse("--runs", "3", "--protocols", "h1", "--tcp-cc", "bbr", "--timeout", "5s", "--tls", "1.2", "--seed", "5")
	if c.Runs != 3 || len(c.Arms) != 1 || c.TCPCC != "bbr" || c.Timeout != 5*time.Second || c.TLS != "1.2" || c.Seed != 5 {
		t.Errorf("config %+v: the flags were not applied", c)
	}
	s := strings.Join(c.Settings().Overrides, "; ")
	for _, want := range []string{"runs=3 (matrix: 20)", "tls=1.2 (matrix: 1.3)", "tcp_cc=bbr", "seed=5", "timeout=5s"} {
		if !strings.Contains(s, want) {
			t.Errorf("overrides %q lack %q", s, want)
		}
	}
	if c := parse(); c.Warmup != experiment.DefaultWarmup || len(c.Overrides) != 0 || c.Runs != 20 {
		t.Errorf("without flags: warmup %d, overrides %v, runs %d", c.Warmup, c.Overrides, c.Runs)
	}
}

// TestPlainProgress: without a terminal, progress is plain lines (first, every 10 s, last, link checks).
func TestPlainProgress(t *testing.T) {
	var b bytes.Buffer
	now := time.Unix(0, 0)
	obs := plainProgress(3, &b, func() time.Time { return now })
	obs(experiment.Progress{Checking: "rate=1mbit"})
	for i := 1; i <= 3; i++ {
		now = now.Add(time.Second)
		obs(experiment.Progress{Done: i, Total: 3, Record: &result.Record{}})
	}
	out := b.String()
	for _, want := range []string{"checking link rate=1mbit", "1/3 loads", "3/3 loads"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress %q lacks %q", out, want)
		}
	}
	if strings.Contains(out, "2/3") || strings.Contains(out, "\r") {
		t.Errorf("progress %q: want no line for load 2 (within 10 s) and no control codes", out)
	}
}

// TestStaleTempRootsRemoved (issue 11 item 3): a start removes the temporary roots of pltlab
// processes that are gone (killed by SIGPIPE or SIGKILL), never those of live ones.
func TestStaleTempRootsRemoved(t *testing.T) {
	base := t.TempDir()
	dead := filepath.Join(base, tempRootPrefix+"4194304-1") // above the default pid_max
	live := filepath.Join(base, tempRootPrefix+strconv.Itoa(os.Getppid())+"-2")
	for _, d := range []string{dead, live} {
		if err := os.MkdirAll(filepath.Join(d, "pltlab-pages-1"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleTempRoots(base)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("stale root %s kept (err %v)", dead, err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's root was removed: %v", err)
	}
}

// TestETAIncludesLinkChecks (smaller things): the ETA counts the link checks still to come.
func TestETAIncludesLinkChecks(t *testing.T) {
	var e eta
	t0 := time.Unix(0, 0)
	e.note(experiment.Progress{Checking: "a", ChecksLeft: 1}, t0)
	e.note(experiment.Progress{Record: &result.Record{Kind: result.KindLinkCheck}, ChecksLeft: 1}, t0.Add(8*time.Second))
	p := experiment.Progress{Done: 2, Total: 4, ChecksLeft: 1, Record: &result.Record{}}
	e.note(p, t0.Add(10*time.Second))
	// 2 loads in 2 s (the 8 s check excluded): 2 s for the 2 loads left, plus one 8 s check.
	if got := e.left(p, t0.Add(10*time.Second)); got != 10*time.Second {
		t.Errorf("ETA %v, want 10s", got)
	}
}

// TestBrokenPipeExitCode: a command whose stdout reader went away exits 141 without a message.
func TestBrokenPipeExitCode(t *testing.T) {
	err := fmt.Errorf("write report -: %w", &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE})
	if code, msg := exitCode(context.Background(), err); code != 141 || msg != "" {
		t.Errorf("exitCode = %d, %q; want 141 and no message", code, msg)
	}
}
