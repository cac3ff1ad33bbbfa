package emu

import "testing"

// fullSize makes the size-dependent tests run at full size even with -short; set by
// TestIntegrationEmulatorFullSize.
var fullSize bool

// short reports whether a size-dependent test runs at its small size: with -short, unless
// fullSize.
func short() bool { return testing.Short() && !fullSize }

// TestIntegrationEmulatorFullSize runs the emulator's statistical and property tests at full
// size in `make test` (its integration target runs TestIntegration* without -short; the unit
// target's -short runs them small): the Gilbert model over 10^6 packets, lanes against the heap
// over 5000 packets per configuration, 300 random configurations. About 1.5 s on 2 cores.
// Before, nothing in `make test` ran them at full size.
func TestIntegrationEmulatorFullSize(t *testing.T) {
	fullSize = true
	defer func() { fullSize = false }()
	t.Run("GilbertSimpleMeanAndBurst", TestGilbertSimpleMeanAndBurst)
	t.Run("LanesMatchHeap", TestLanesMatchHeap)
	t.Run("PropertiesRandomConfigs", TestPropertiesRandomConfigs)
}
