package server

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckH3Stack: every stack and controller pair is accepted or refused in one line that
// names the bad value and what is accepted.
func TestCheckH3Stack(t *testing.T) {
	for _, tc := range []struct {
		stack, cc string
		want      string // "" accepted, else a part of the error
	}{
		{"", "", ""},
		{StackQUICGo, "", ""},
		{StackQUICGo, QUICGoCC, ""},
		{StackNgtcp2, "", ""},
		{StackNgtcp2, "cubic", ""},
		{StackNgtcp2, "reno", ""},
		{StackNgtcp2, "bbr", ""},
		{StackNgtcp2, "bbr2", ""},
		{StackQUICGo, "bbr", `"bbr": quic-go runs newreno only`},
		{"", "cubic", `"cubic": quic-go runs newreno only`},
		{StackNgtcp2, "vegas", `"vegas" for ngtcp2: accepted: cubic, reno, bbr, bbr2`},
		{StackNgtcp2, "newreno", `"newreno" for ngtcp2`},
		{"msquic", "", `HTTP/3 stack "msquic": accepted: quic-go, ngtcp2`},
	} {
		err := CheckH3Stack(tc.stack, tc.cc)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q/%q refused: %v", tc.stack, tc.cc, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q/%q: %v, want an error with %q", tc.stack, tc.cc, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%q/%q: error of more than one line: %q", tc.stack, tc.cc, err)
		}
	}
	// New applies the same rule, as ErrBadOption, before opening anything; ngtcp2's qlogs are
	// read for the records, so a qlog directory (artifacts) is refused with it.
	dir, _ := writeTestPage(t, 1, 8)
	if _, err := New(dir, WithH3Stack(StackQUICGo, "bbr")); !errors.Is(err, ErrBadOption) {
		t.Errorf("quic-go with bbr: %v", err)
	}
	if _, err := New(dir, WithH3Stack(StackNgtcp2, "bbr"), WithQlogDir(func() string { return t.TempDir() })); !errors.Is(err, ErrBadOption) ||
		!strings.Contains(err.Error(), "qlog") {
		t.Errorf("ngtcp2 with a qlog directory: %v", err)
	}
	s, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	if i := s.Info(); i.H3Stack != StackQUICGo || !strings.HasPrefix(i.QUICStack, "quic-go ") {
		t.Errorf("default stack: %q %q", i.H3Stack, i.QUICStack)
	}
}
