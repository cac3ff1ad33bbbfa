package selfcheck

import (
	"context"
	"testing"

	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/internal/linktest"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// openLink opens spec (on the userspace emulator) and closes it at the end of the test,
// checking nothing is left behind.
func openLink(t *testing.T, spec string) shaping.Link {
	t.Helper()
	s, err := linkspec.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	l, err := shaping.Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	linktest.CloseAtEnd(t, l.(*shaping.EmuLink))
	return l
}
