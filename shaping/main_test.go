package shaping

import (
	"os"
	"testing"

	"github.com/pltlab/pltlab/internal/testenv"
)

// TestMain runs the test binary as an idle-poll spinner or watcher when the benchmarks' Start
// started it so, and otherwise leaves the emulated links' forwarders and probes the Ps they
// hold while they wait (testenv.LinkProcs), as pltlab's main does.
func TestMain(m *testing.M) {
	if code, ok := Child(); ok {
		os.Exit(code)
	}
	os.Exit(testenv.RunWithLinkProcs(m))
}
