package main

import (
	"strings"
	"testing"
)

// TestViewUsageErrors: a bad path or address is one line and exit code 2, before anything
// listens; --view needs a results file.
func TestViewUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing path", []string{"view", "/no/such/results"}, `bad path "/no/such/results"`},
		{"bad addr", []string{"view", "--addr", "8080", t.TempDir()}, `bad --addr "8080"`},
		{"view to stdout", []string{"run", "--page", "5x10KB", "--link", "none", "--view", "--out", "-"}, "--view serves the results file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q: want 2 and one line with %q", code, stderr, tc.want)
			}
		})
	}
}
