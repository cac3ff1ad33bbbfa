package experiment

import (
	"os"
	"testing"

	"github.com/pltlab/pltlab/internal/testenv"
)

// TestMain leaves the emulated links' forwarders and probes the Ps they hold while they wait
// (testenv.LinkProcs), as pltlab's main does.
func TestMain(m *testing.M) { os.Exit(testenv.RunWithLinkProcs(m)) }
