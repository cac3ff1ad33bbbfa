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

// useTempRoot points TMPDIR at a fresh directory of this process (pltlab-PID-*), so that every
// temporary file of a run (generated pages, Chromium's profiles and its own files) lives under
// one root that is removed on return, on a second interrupt, or, after a kill -9, by the next
// start. It first removes the roots of processes that are gone. The returned func removes the
// root and restores TMPDIR.
func useTempRoot() (func(), error) {
	base := os.TempDir()
	removeStaleTempRoots(base)
	dir, err := os.MkdirTemp(base, tempRootPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, fmt.Errorf("make temporary directory: %w", err)
	}
	old, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", dir)
	onForcedExit(func() { os.RemoveAll(dir) })
	return func() {
		if had {
			os.Setenv("TMPDIR", old)
		} else {
			os.Unsetenv("TMPDIR")
		}
		os.RemoveAll(dir)
	}, nil
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
