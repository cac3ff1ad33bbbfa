package shaping

import (
	"testing"

	"github.com/pltlab/pltlab/shaping/emu"
)

// TestStallLatenessIsTheBound: the emulator counts a release in a stall above exactly the
// lateness bound a measurement accepts (emu imports nothing of ours, so the two constants are
// kept equal here).
func TestStallLatenessIsTheBound(t *testing.T) {
	if emu.StallLateness != LatenessBound {
		t.Errorf("emu.StallLateness = %v, LatenessBound = %v: they must be equal", emu.StallLateness, LatenessBound)
	}
}
