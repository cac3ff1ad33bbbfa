package shaping

import (
	"errors"
	"sync"
)

// EnvEmuProcess is the environment variable with which Child leaves the forwarders in the
// program's own process when it is "shared" (side-by-side measurements; result.Emulator.Process
// records where they ran).
const EnvEmuProcess = "PLTLAB_EMU_PROCESS"

// Where an emu link's forwarders run, as result.Emulator.Process records it.
const (
	// ProcessOwn: in the link's emulator process, every thread of it real-time.
	ProcessOwn = "own"
	// ProcessShared: in the program's own process, beside its other goroutines.
	ProcessShared = "shared"
)

// child records what Child found: whether the program asked (its executable can run as an
// emulator process) and whether links run their forwarders in one by default.
var child struct {
	sync.Mutex
	asked, own bool
}

// errNoChild is Open's error for WithEmulatorProcess(true) in a program that never called Child.
var errNoChild = errors.New("open link: this program cannot run an emulator process (its main, or a test binary's TestMain, must call shaping.Child first)")

// childAsked reports whether the program called Child.
func childAsked() bool {
	child.Lock()
	defer child.Unlock()
	return child.asked
}

// wantOwnProcess reports whether links open their forwarders in an emulator process by default:
// the program called Child, and EnvEmuProcess was not "shared" then.
func wantOwnProcess() bool {
	child.Lock()
	defer child.Unlock()
	return child.own
}

// markAsked records that the program called Child; own is whether it asked for emulator
// processes.
func markAsked(own bool) {
	child.Lock()
	defer child.Unlock()
	child.asked, child.own = true, own
}
