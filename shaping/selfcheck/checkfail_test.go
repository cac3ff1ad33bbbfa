package selfcheck

import (
	"errors"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestCheckFailure checks that a failed self-check names only its failed lines and wraps
// ErrFailed, and that a passing one is no error.
func TestCheckFailure(t *testing.T) {
	if err := Failure(result.LinkCheck{Pass: true}); err != nil {
		t.Fatal(err)
	}
	c := result.LinkCheck{Lines: []result.CheckLine{
		{Name: "idle RTT median", Measured: "80.00 ms", Configured: "50.00 ms", Tolerance: "+-1 ms"},
		{Name: "down goodput", Pass: true},
	}}
	err := Failure(c)
	want := "link self-check failed: idle RTT median: measured 80.00 ms, configured 50.00 ms (+-1 ms)"
	if !errors.Is(err, ErrFailed) || err.Error() != want {
		t.Fatalf("Failure = %v, want %q", err, want)
	}
}
