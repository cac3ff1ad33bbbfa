package shaping

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/netem"
)

// TestNetemUnavailable: on a kernel without sch_netem, shaper=netem fails at once with
// ErrNetemUnavailable naming shaper=emu, before creating anything (no root needed), while a
// kernel with it, or a recording runner, passes the check. Both kernels are given to the check
// (needNetem's availability), so both halves run on any kernel; then this kernel's own answer
// is checked end to end: Open refuses where sch_netem is missing, Available passes where it is
// present (without opening a link).
func TestNetemUnavailable(t *testing.T) {
	s, _ := linkspec.Parse("carlucci2015,shaper=netem")
	without := func() error { return netem.ErrUnavailable }
	with := func() error { return nil }
	for _, tc := range []struct {
		name      string
		runner    netem.Runner
		available func() error
		refused   bool
	}{
		{"without sch_netem", nil, without, true},
		{"with sch_netem", nil, with, false},
		{"recording runner", &recorder{}, without, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := needNetem(s, tc.runner, tc.available)
			if tc.refused != (err != nil) || (tc.refused && (!errors.Is(err, ErrNetemUnavailable) || !strings.Contains(err.Error(), "shaper=emu"))) {
				t.Errorf("needNetem: %v, want refused %v (ErrNetemUnavailable naming shaper=emu)", err, tc.refused)
			}
		})
	}
	if netem.Available() == nil {
		if err := Available(s); err != nil {
			t.Errorf("this kernel has sch_netem: Available: %v, want nil", err)
		}
		return
	}
	start := time.Now()
	_, err := Open(context.Background(), s)
	if !errors.Is(err, ErrNetemUnavailable) || !strings.Contains(err.Error(), "shaper=emu") {
		t.Fatalf("Open: %v, want ErrNetemUnavailable naming shaper=emu", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("failing took %v", d)
	}
}

// recorder is a netem.Runner that records command lines.
type recorder struct{ calls [][]string }

func (r *recorder) Run(_ context.Context, argv []string) error {
	r.calls = append(r.calls, argv)
	return nil
}

// TestIntegrationNetemRecorded opens a netem link with a recording runner: the commands run are
// exactly netem.Build of the spec, Close runs netem.Teardown and removes the namespace.
func TestIntegrationNetemRecorded(t *testing.T) {
	needRoot(t)
	var r recorder
	s, _ := linkspec.Parse("carlucci2015,shaper=netem")
	l, err := Open(context.Background(), s, WithNetemRunner(&r))
	if err != nil {
		t.Fatal(err)
	}
	nl := l.(*NetemLink)
	cfg, err := NetemConfig(s, l.Namespace(), nl.cfg.HostDev, l.HostAddr(), l.ClientAddr())
	if err != nil {
		t.Fatal(err)
	}
	want := netem.Build(cfg)
	if !reflect.DeepEqual(r.calls, want) {
		t.Fatalf("ran %v\nwant %v", r.calls, want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := r.calls[len(want):]; !reflect.DeepEqual(got, netem.Teardown(nl.cfg)) {
		t.Fatalf("teardown ran %v", got)
	}
	assertGone(t, l.Namespace(), nl.cfg.HostDev)
	if got := strings.Join(want[len(want)-1], " "); !strings.HasSuffix(got, "tbf rate 3000000bit burst 3000 limit 18750") {
		t.Errorf("carlucci up queue: %v, want a tbf whose FIFO is the 18750-byte queue", got)
	}
}
