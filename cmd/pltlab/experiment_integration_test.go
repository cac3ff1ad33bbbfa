package main

import (
	"bytes"
	"errors"
	"github.com/pltlab/pltlab/internal/testenv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/result"
)

// needRootAndChromium skips an end-to-end test unless it can run: root for the emulated links,
// and Chromium (which CI must have: there the test fails instead of skipping).
func needRootAndChromium(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("end-to-end test: needs root for network namespaces and TUN devices")
	}
	testenv.Require(t, "chromium")
}

// readAll decodes every line of a JSON Lines file, failing the test on any bad line.
func readAll(t *testing.T, name string) []*result.Record {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []*result.Record
	rd := result.NewReader(f, name)
	for {
		r, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return recs
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		recs = append(recs, r)
	}
}

// pltlabNamespaces lists the network namespaces whose name starts with pltlab-PID-.
func pltlabNamespaces(t *testing.T, pid int) []string {
	t.Helper()
	entries, _ := os.ReadDir("/var/run/netns")
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "pltlab-"+strconv.Itoa(pid)+"-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestIntegrationRunMatrix runs a 2 page x 2 link x 2 protocol matrix, one load per cell (the
// repetition of runs is tested by the resume and study tests; one run keeps the 8 loads within
// make test's budget, and the links are not self-checked: the check, 11 s a link, is run by
// TestIntegrationRunInterrupt and the studies' tests): every cell has its load, in the schedule's order,
// the links one after another and the cells interleaved within each block (seed 3 puts an h1
// load of a page right after the h3 load of the same page). Two protocols, h1 and h3 (the
// TCP and the QUIC path), are what interleaving needs: a third browser per link added 11 s.
func TestIntegrationRunMatrix(t *testing.T) {
	needRootAndChromium(t)
	out := filepath.Join(t.TempDir(), "m.jsonl")
	links := []string{"rate=20mbit,rtt=10ms", "rate=10mbit,rtt=20ms,queue=30pkt"}
	code, stdout, errOut := runCLI(t, "run", "--page", "3x10KB", "--page", "1x40KB", "--link", links[0], "--link", links[1],
		"--protocols", "h1,h3", "--runs", "1", "--warmup", "0", "--seed", "3", "--no-link-check", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, errOut)
	}
	recs := readAll(t, out)
	type cell struct{ page, link, proto string }
	counts := map[cell]int{}
	var order []*result.Record
	var lost testenv.Lost
	for _, r := range recs {
		if !r.IsLoad() {
			continue
		}
		if !r.Valid && !lost.Excused(t, r) {
			t.Errorf("run %d invalid: %s", r.Run, r.InvalidReason)
		}
		counts[cell{r.Page.Spec, r.Link.Spec, r.Protocol}]++
		order = append(order, r)
	}
	lost.Check(t, len(order))
	if len(counts) != 2*2*2 {
		t.Fatalf("%d cells, want 8: %v", len(counts), counts)
	}
	for c, n := range counts {
		if n != 1 {
			t.Errorf("cell %+v has %d loads, want 1", c, n)
		}
	}
	// Same order as the schedule: links one after another, cells shuffled within each block.
	jobs := experiment.Order(experiment.Config{Pages: []string{"3x10KB", "1x40KB"}, Links: links,
		Arms: experiment.CrossArms([]string{"h1", "h3"}, []result.Mode{result.Cold}), Runs: 1, Seed: 3})
	if len(jobs) != len(order) {
		t.Fatalf("%d loads, schedule has %d", len(order), len(jobs))
	}
	pageSpecs := []string{"3x10KB", "1x40KB"}
	blocked := true
	for i, j := range jobs {
		r := order[i]
		if r.Protocol != j.Arm.Protocol || r.Page.Spec != pageSpecs[j.Page] || r.Link.Spec != links[j.Link] {
			t.Fatalf("load %d is %s/%s/%s, schedule says %+v", i, r.Page.Spec, r.Link.Spec, r.Protocol, j)
		}
		if i > 0 && i%4 != 0 && order[i-1].Protocol != r.Protocol && order[i-1].Page.Spec == r.Page.Spec {
			blocked = false
		}
	}
	if blocked {
		t.Error("loads are blocked by protocol within pages, not interleaved")
	}
}

func TestIntegrationRunInterrupt(t *testing.T) {
	needRootAndChromium(t)
	dir := t.TempDir()
	bin := buildPltlab(t)
	out := filepath.Join(dir, "r.jsonl")
	before := chromiums()
	cmd := exec.Command(bin, "run", "--page", "5x20KB", "--link", "rate=10mbit,rtt=20ms", "--runs", "100", "--out", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(out)
		if bytes.Count(b, []byte("\n")) >= 4 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("exit: %v, want code 130; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("pltlab run did not exit within 30 s of SIGINT; stderr:\n%s", stderr.String())
	}
	recs := readAll(t, out)
	if len(recs) < 4 {
		t.Errorf("only %d records kept", len(recs))
	}
	if ns := pltlabNamespaces(t, cmd.Process.Pid); len(ns) > 0 {
		t.Errorf("namespaces left behind: %v", ns)
	}
	// Chromium dies with its parent (Pdeathsig), asynchronously: allow it a few seconds. Only
	// browsers started after this test began count (another pltlab may run on the machine).
	var left []string
	for range 50 {
		left = newChromiums(before)
		if len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("chromium processes left behind: %v", left)
	}
}

// chromiums returns the pids of running pltlab browsers (by their user-data-dir).
func chromiums() map[string]bool {
	b, _ := exec.Command("pgrep", "-f", "pltlab-chromium-").Output()
	out := map[string]bool{}
	for _, f := range strings.Fields(string(b)) {
		out[f] = true
	}
	return out
}

// newChromiums returns the pltlab browsers running now that were not in before.
func newChromiums(before map[string]bool) []string {
	var out []string
	for pid := range chromiums() {
		if !before[pid] {
			out = append(out, pid)
		}
	}
	return out
}
