package main

import (
	"os"
	"testing"

	"github.com/pltlab/pltlab/internal/idlepoll"
)

// TestMain runs the test binary as an idle-poll spinner or watcher when a command run in
// process started them (startIdlePoll), as pltlab's main does.
func TestMain(m *testing.M) {
	if code, ok := idlepoll.Child(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
