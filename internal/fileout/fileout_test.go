package fileout

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCreateWritesWhole(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "a.txt")
	if err := Create(path, func(w io.Writer) error { _, err := io.WriteString(w, "hello\n"); return err }); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "hello\n" {
		t.Fatalf("read %q, %v", b, err)
	}
}

// TestCreateLeavesNothingHalfWritten: a writer that fails half-way leaves no file, and the
// error names the file and the cause.
func TestCreateLeavesNothingHalfWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.txt")
	boom := errors.New("disk full")
	err := Create(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "write "+path+": disk full") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the partial file is still there: %v", err)
	}
}

func TestFillNamesTheFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "c.txt"))
	if err != nil {
		t.Fatal(err)
	}
	err = Fill(f.Name(), f, func(io.Writer) error { return errors.New("bad") })
	if err == nil || err.Error() != "write "+f.Name()+": bad" {
		t.Fatalf("err = %v", err)
	}
	if f.Close() == nil {
		t.Fatal("Fill left the file open")
	}
}
