package selfcheck

import (
	"os"
	"testing"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/shaping"
)

// TestMain leaves the emulated links' forwarders and probes the Ps they hold while they wait
// (testenv.LinkProcs), as pltlab's main does.
func TestMain(m *testing.M) {
	if code, ok := shaping.Child(); ok { // the links' emulator processes
		os.Exit(code)
	}
	os.Exit(testenv.RunWithLinkProcs(m))
}
