package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pltlab/pltlab/shaping"
)

// TestMain runs the test binary as an idle-poll spinner or watcher when a command run in
// process started them (startIdlePoll), as pltlab's main does, and removes the binary
// buildPltlab built.
func TestMain(m *testing.M) {
	if code, ok := shaping.Child(); ok {
		os.Exit(code)
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// built is the pltlab binary buildPltlab builds once per test process.
var built struct {
	once     sync.Once
	dir, bin string
	out      []byte
	err      error
}

// buildPltlab builds this command once per test process, into a directory of its own that
// every user may read (the rootless tests run it as nobody), and returns its path; the tests
// that run pltlab as a process of its own (signals, other users, exit codes) share it (six
// links of a 65 MB binary were 30-50 s of make test). A build failure fails the test (a test
// that skips when the code does not build would hide the breakage).
func buildPltlab(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "pltlab-test-bin-"); built.err != nil {
			return
		}
		if built.err = os.Chmod(built.dir, 0o755); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "pltlab")
		built.out, built.err = exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("build pltlab: %v\n%s", built.err, built.out)
	}
	return built.bin
}
