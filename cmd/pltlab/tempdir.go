package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// tempRootPrefix starts the name of a process's temporary root: pltlab-PID-RANDOM.
const tempRootPrefix = "pltlab-"

// makeTempRoot makes a fresh directory of this process (pltlab-PID-*) under os.TempDir(), for
// every temporary file of a run (generated pages, Chromium's profiles and, through Chromium's own
// TMPDIR, its files), passed explicitly to the packages that write there. The root is removed
// by the returned func, on a second interrupt, or, after a kill -9, by the next start, which
// first removes the roots of processes that are gone.
func makeTempRoot() (dir string, cleanup func(), err error) {
	base := os.TempDir()
	removeStaleTempRoots(base)
	dir, err = os.MkdirTemp(base, tempRootPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", nil, fmt.Errorf("make temporary directory: %w", err)
	}
	onForcedExit(func() { os.RemoveAll(dir) })
	return dir, func() { os.RemoveAll(dir) }, nil
}

// removeStaleTempRoots removes base/pltlab-PID-* directories whose process no longer exists.
func removeStaleTempRoots(base string) {
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		pid, ok := tempRootOwner(e.Name())
		if !ok || !e.IsDir() || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
			os.RemoveAll(filepath.Join(base, e.Name()))
		}
	}
}

// tempRootOwner parses the pid of a temporary root's name "pltlab-PID-RANDOM".
func tempRootOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, tempRootPrefix)
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}
