// Package testenv decides whether a test that needs an outside tool runs: without the tool it
// is skipped on a developer's machine and fails when the environment variable CI is set, where
// every tool must be installed (docs/design.md, "Tests").
package testenv

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// InCI reports whether the tests run under continuous integration (CI set and not "false").
func InCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// Require skips t unless every tool is found (exec.LookPath; for "chromium" $PLTLAB_CHROME
// first), and fails it instead of skipping when InCI.
func Require(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if Have(tool) {
			continue
		}
		if InCI() {
			t.Fatalf("%s not found and CI is set: install it (make setup); a test that needs it must run in CI", tool)
		}
		t.Skipf("%s not found (on PATH): skipped; under CI this fails", tool)
	}
}

// Have reports whether tool can be run: "chromium" is $PLTLAB_CHROME when set, else any
// name on PATH.
func Have(tool string) bool {
	if tool == "chromium" {
		if c := os.Getenv("PLTLAB_CHROME"); c != "" {
			_, err := exec.LookPath(c)
			return err == nil
		}
	}
	_, err := exec.LookPath(tool)
	return err == nil
}

// LinkProcs is how many Go Ps a test binary that opens emulated links adds, as pltlab's main
// does (shaping.ProcsPerLink for the forwarders plus selfcheck.ProbeProcs for a link check's
// probes; a test of package shaping keeps the two equal): each of those threads holds a P while
// it waits, and without spare Ps they wait through the Go scheduler and may stall.
const LinkProcs = 4

// RunWithLinkProcs raises GOMAXPROCS by LinkProcs and runs m: the TestMain of a package whose
// tests open emulated links in-process.
func RunWithLinkProcs(m *testing.M) int {
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + LinkProcs)
	return m.Run()
}
