package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/pages"
)

func TestPagesCmd(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	code, out, errOut := runCLI(t, "pages", "--spec", "3x2KB,1x100KB", "--out", dir, "--seed", "9")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if want := "wrote page 3x2KB,1x100KB: 4 objects, 106000 bytes (106 KB) in " + dir + "\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
	m, err := pages.ReadManifest(dir)
	if err != nil || m.Seed != 9 || len(m.Objects) != 4 || m.TotalBytes != 106000 {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if code, _, errOut := runCLI(t, "pages", "--spec", "3x2KB,1x100KB", "--out", dir, "--seed", "9"); code != 0 {
		t.Fatalf("same command again: exit %d, %s", code, errOut)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if !bytes.Equal(before, after) {
		t.Error("same command twice gave different manifests")
	}
	if code, _, errOut := runCLI(t, "pages", "--spec", "carlucci2015", "--out", dir); code != 2 || !strings.Contains(errOut, "--force") {
		t.Errorf("other page without --force: exit %d, %q", code, errOut)
	}
	if code, out, _ := runCLI(t, "pages", "--spec", "carlucci2015", "--out", dir, "--force"); code != 0 || !strings.Contains(out, "30 objects, 300000 bytes") {
		t.Errorf("--force: exit %d, %q", code, out)
	}
}

func TestPagesCmdUsageErrors(t *testing.T) {
	base := t.TempDir()
	junk := filepath.Join(base, "junk")
	if err := os.MkdirAll(junk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(junk, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(base, "out")
	tests := []pagesUsage{
		{"empty spec", []string{"--spec", "", "--out", out}, "missing --spec"},
		{"zero count", []string{"--spec", "0x10KB", "--out", out}, `bad --spec: bad count "0" in page spec item "0x10KB"`},
		{"missing number", []string{"--spec", "3xKB", "--out", out}, `bad size "KB"`},
		{"negative size", []string{"--spec", "10x-5KB", "--out", out}, `bad size "-5KB"`},
		{"unknown unit", []string{"--spec", "1x5GB", "--out", out}, `unknown unit "GB"`},
		{"unknown preset", []string{"--spec", "nosuch", "--out", out}, `unknown page preset "nosuch"`},
		{"too many objects", []string{"--spec", "5001x1KB,5000x1KB", "--out", out}, "has 10001 objects"},
		{"over 1 GB", []string{"--spec", "21x50MB", "--out", out}, "at most 1000000000 bytes"},
		{"below minimum", []string{"--spec", "1x10B", "--out", out}, "accepted: 398B to 50MB"},
		{"missing out", []string{"--spec", "1x1KB"}, "missing --out"},
		{"dir not empty", []string{"--spec", "1x1KB", "--out", junk}, "bad --out: output directory " + junk + " is not empty"},
		{"force on non-page dir", []string{"--spec", "1x1KB", "--out", junk, "--force"}, "is not empty and holds no page"},
		{"out is a file", []string{"--spec", "1x1KB", "--out", filepath.Join(junk, "keep")}, "is not a directory"},
		{"bad seed", []string{"--spec", "1x1KB", "--out", out, "--seed", "x"}, `invalid argument "x" for "--seed"`},
		{"extra argument", []string{"--spec", "1x1KB", "--out", out, "extra"}, `unknown command "extra"`},
	}
	checkPagesUsage(t, tests, out, junk)
	if entries, _ := os.ReadDir(base); len(entries) != 1 {
		t.Errorf("leftovers in %s: %v", base, entries)
	}
}

func TestPagesCmdList(t *testing.T) {
	code, out, _ := runCLI(t, "pages", "--list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(pages.Presets())+1 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("--list printed %d lines:\n%s", len(lines), out)
	}
	if !strings.Contains(out, "carlucci2015") || !strings.Contains(out, "300 KB") || !strings.Contains(out, "kakhki-100x10MB") {
		t.Errorf("--list lacks presets:\n%s", out)
	}
}

func TestPagesCmdCancelled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cmd := newRootCmd()
	cmd.SetArgs([]string{"pages", "--spec", "10x1MB", "--out", dir})
	err := cmd.ExecuteContext(ctx)
	if !errors.Is(err, context.Canceled) || isUsage(err) {
		t.Fatalf("err = %v, want context.Canceled (exit 130 in main)", err)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

// TestPagesCmdExamples runs every line of the help's Examples (with /tmp/ mapped to a test
// directory) twice: each must succeed both times as written.
func TestPagesCmdExamples(t *testing.T) {
	tmp := t.TempDir() + "/"
	har, err := os.ReadFile(filepath.Join("..", "..", "browser", "testdata", "har", "h1.har"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp+"load.har", har, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(newPagesCmd().Example, "\n") {
		line = strings.ReplaceAll(strings.TrimSpace(line), "/tmp/", tmp)
		args, ok := strings.CutPrefix(line, "./bin/pltlab ")
		if !ok {
			t.Fatalf("example %q does not start with ./bin/pltlab", line)
		}
		for range 2 {
			if code, _, errOut := runCLI(t, strings.Fields(args)...); code != 0 {
				t.Errorf("%s: exit %d: %s", line, code, errOut)
			}
		}
	}
}

// pagesUsage is a bad 'pltlab pages' command line and the text its one-line error must hold.
type pagesUsage struct {
	name string
	args []string
	want string
}

// checkPagesUsage runs each case: exit 2, nothing on stdout, one line on stderr holding want,
// out not written and junk (a directory holding one file) left as it was.
func checkPagesUsage(t *testing.T, tests []pagesUsage, out, junk string) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, errOut := runCLI(t, append([]string{"pages"}, tt.args...)...)
			if code != 2 || stdout != "" || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line containing %q", code, stdout, errOut, tt.want)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was written", out)
			}
			if entries, _ := os.ReadDir(junk); len(entries) != 1 {
				t.Errorf("junk dir changed: %v", entries)
			}
		})
	}
}
