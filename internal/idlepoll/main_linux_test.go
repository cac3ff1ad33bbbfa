package idlepoll

import (
	"errors"
	"os"
	"testing"
)

// TestMain runs the test binary as a spinner or watcher when a test's Start started it so.
func TestMain(m *testing.M) {
	if code, ok := Child(); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestChildAsked: Child in a program Start did not start returns at once (ok false) and never
// exits; Start in a program that never asked Child refuses with errNoChild and starts nothing
// (its executable would run the program again, not a spinner).
func TestChildAsked(t *testing.T) {
	if code, ok := Child(); ok || code != 0 {
		t.Fatalf("Child() = %d, %v in a plain process", code, ok)
	}
	childAsked.Store(false)
	defer childAsked.Store(true)
	k, err := Start()
	if !errors.Is(err, errNoChild) || k != nil {
		t.Fatalf("Start without Child: %v, %v; want errNoChild", k, err)
	}
}
