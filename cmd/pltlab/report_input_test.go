package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportBadInputExit2: report on an empty file or one of another schema version, and
// serve --pages on a directory that is not a page, are usage errors: exit 2 and one line naming
// the bad input and what is accepted (on 3e73eb5 all three exited 1, and /etc's message named
// nothing accepted).
func TestReportBadInputExit2(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty, v2 := write("empty.jsonl", ""), write("v2.jsonl", `{"v":2,"experiment":"x"}`+"\n")
	notPage := filepath.Join(dir, "etc")
	if err := os.Mkdir(notPage, 0o755); err != nil {
		t.Fatal(err)
	}
	write("etc/passwd", "root:x:0:0::/root:/bin/sh\n")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"empty", []string{"report", empty}, []string{empty, "no page-load records", "accepted: result files"}},
		{"schema v2", []string{"report", v2}, []string{v2, "version 2", "reads v1"}},
		{"serve not a page", []string{"serve", "--pages", notPage, "--addr", "127.0.0.1:0"}, []string{`bad --pages "` + notPage + `"`, "accepted: a page directory written by 'pltlab pages'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tc.args...)
			if code != 2 || strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}
