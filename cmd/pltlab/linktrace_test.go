package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLinkTrace(t *testing.T) {
	code, out, _ := runCLI(t, "link", "trace", "12.032mbit")
	if code != 0 || strings.Count(out, "\n") != 1000 || !strings.HasPrefix(out, "1\n2\n") {
		t.Fatalf("exit %d, %d lines: %.40q", code, strings.Count(out, "\n"), out)
	}
	file := filepath.Join(t.TempDir(), "steps.trace")
	if code, _, errOut := runCLI(t, "link", "trace", "steps:10mbit/5s,2mbit/5s", "--out", file); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.HasSuffix(string(b), "\n10000\n") {
		t.Fatalf("trace file: %v %.40q", err, b)
	}
	if code, _, errOut := runCLI(t, "link", "trace", "2mbit", "--out", file); code != 2 || !strings.Contains(errOut, "--force") {
		t.Fatalf("overwrite without --force: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "link", "trace", "wave:1mbit"); code != 2 || !strings.Contains(errOut, "accepted") {
		t.Fatalf("bad shape: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "link", "check", "--link", "rate=1mbit,rtt=20ms,jitter=50ms"); code != 2 || !strings.Contains(errOut, "jitter 50ms exceeds the one-way delay 10ms") {
		t.Fatalf("jitter > rtt/2: exit %d, %q", code, errOut)
	}
}
