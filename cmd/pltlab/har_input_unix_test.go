//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHARInputNotRegular: a FIFO or a device given as a HAR to pages --from-har, run --page
// har:FILE --dry-run and serve --har is refused at once with exit 2 and one line saying it is
// not a regular file (on 3e73eb5 the FIFO hung each of them and har:/dev/zero was read without
// limit).
func TestHARInputNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.har")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for name, args := range map[string][]string{
		"pages fifo":   {"pages", "--from-har", fifo},
		"run fifo":     {"run", "--page", "har:" + fifo, "--link", "none", "--dry-run"},
		"run dev zero": {"run", "--page", "har:/dev/zero", "--link", "none", "--dry-run"},
		"serve fifo":   {"serve", "--har", fifo, "--addr", "127.0.0.1:0"},
	} {
		t.Run(name, func(t *testing.T) {
			type res struct {
				code   int
				errOut string
			}
			done := make(chan res, 1)
			go func() { code, _, errOut := runCLI(t, args...); done <- res{code, errOut} }()
			select {
			case r := <-done:
				if r.code != 2 || !strings.Contains(r.errOut, "is not a regular file") || strings.Count(r.errOut, "\n") != 1 {
					t.Errorf("exit %d, stderr %q; want exit 2 and one line saying it is not a regular file", r.code, r.errOut)
				}
			case <-time.After(time.Minute): // a guard against the hang, not a timing assertion
				t.Fatal("hung on the HAR input")
			}
		})
	}
}
