package browser

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMain fails the run when a Chromium process or a temporary profile of ours that was not
// there before the tests is left after them.
func TestMain(m *testing.M) {
	before := leftovers()
	code := m.Run()
	var left []string
	for range 20 { // Close waits for the process; give late children a moment anyway
		if left = newItems(leftovers(), before); len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: left after the tests:\n  %s\n", strings.Join(left, "\n  "))
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// leftovers lists our temporary profiles and the processes that use one.
func leftovers() []string {
	prefix := filepath.Join(os.TempDir(), TempDirPrefix)
	dirs, _ := filepath.Glob(prefix + "*")
	items := append([]string(nil), dirs...)
	entries, _ := os.ReadDir("/proc")
	want := []byte("--user-data-dir=" + prefix)
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		for arg := range bytes.SplitSeq(cmdline, []byte{0}) {
			if bytes.HasPrefix(arg, want) {
				items = append(items, fmt.Sprintf("process %s %s", e.Name(), arg))
				break
			}
		}
	}
	return items
}

// newItems returns the items of now that are not in before.
func newItems(now, before []string) []string {
	var out []string
	for _, it := range now {
		if !slices.Contains(before, it) {
			out = append(out, it)
		}
	}
	return out
}

// needChromium skips t in -short mode, and when Chromium is absent unless $CI is set (in CI
// the browser tests must run).
func needChromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("real Chromium test: skipped with -short")
	}
	path, err := FindChromium("")
	if err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("no Chromium: %v", err)
		}
		t.Fatalf("CI is set and %v", err)
	}
	return path
}
