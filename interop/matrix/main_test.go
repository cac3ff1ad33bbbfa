package matrix

import (
	"os"
	"testing"

	"github.com/pltlab/pltlab/internal/testenv"
	"github.com/pltlab/pltlab/shaping"
)

// TestMain runs the test binary as a link's emulator process when a test's link started it so
// (shaping.Child), and otherwise runs the tests with a P for each link thread.
func TestMain(m *testing.M) {
	if code, ok := shaping.Child(); ok {
		os.Exit(code)
	}
	os.Exit(testenv.RunWithLinkProcs(m))
}
