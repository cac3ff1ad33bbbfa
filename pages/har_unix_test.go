//go:build unix

package pages

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadHARNotRegular: a FIFO (on 3e73eb5 ReadArchive blocked on it until a writer came) and
// a device (/dev/zero, read without limit) are refused before a byte is read, with ErrNotHAR.
func TestReadHARNotRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.har")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for name, tc := range map[string]struct{ file, want string }{
		"fifo":     {fifo, "is not a regular file but a named pipe (FIFO)"},
		"dev zero": {"/dev/zero", "is not a regular file but a device"},
		"dir":      {t.TempDir(), "is not a regular file but a directory"},
	} {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := ReadArchive(tc.file); done <- err }()
			err := <-done
			if !errors.Is(err, ErrNotHAR) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadArchive(%s): %v, want ErrNotHAR saying %q", tc.file, err, tc.want)
			}
		})
	}
}
