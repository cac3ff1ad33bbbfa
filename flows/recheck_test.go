package flows

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/selfcheck"
)

// checkedLink is a shaped link that is never opened: the runner asks only its namespace and
// spec, and its self-check is replaced (any other method would panic on the nil Link).
type checkedLink struct{ shaping.Link }

func (checkedLink) Namespace() string   { return "pltlab-fake" }
func (checkedLink) Spec() linkspec.Spec { s, _ := linkspec.Parse("carlucci2015"); return s }

// TestFlowsLinkRecheck checks that the flows runner checks its link by the one retry rule of
// the page-load runner (selfcheck.Retry): a failed check is repeated once, each check is a
// link_check line numbered by its attempt, and two failures refuse the link with
// selfcheck.ErrFailed; a pass needs one check.
func TestFlowsLinkRecheck(t *testing.T) {
	bad := result.LinkCheck{Lines: []result.CheckLine{{Name: "idle RTT min..max", Measured: "50.7..80.1 ms", Pass: false}}}
	good := result.LinkCheck{Pass: true}
	for _, tc := range []struct {
		name    string
		checks  []result.LinkCheck
		wantErr bool
	}{
		{"pass", []result.LinkCheck{good}, false},
		{"fail then pass", []result.LinkCheck{bad, good}, false},
		{"fail then fail", []result.LinkCheck{bad, bad}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			var lines []*result.Record
			p := MixExperiment{Link: "carlucci2015", Experiment: "f", Logger: slog.New(slog.DiscardHandler), seams: seams{
				check: func(context.Context, shaping.Link, selfcheck.Options) (result.LinkCheck, error) {
					calls++
					return tc.checks[calls-1], nil
				},
				busy: func(context.Context, time.Duration) (float64, float64) { return 0, 0 }, // a quiet machine
			}}
			err := p.checkLink(context.Background(), checkedLink{}, &result.Env{}, func(r *result.Record) error {
				lines = append(lines, r)
				return nil
			})
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, selfcheck.ErrFailed)) {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if calls != len(tc.checks) || len(lines) != len(tc.checks) {
				t.Fatalf("%d checks, %d lines; want %d", calls, len(lines), len(tc.checks))
			}
			for i, r := range lines {
				if r.Kind != result.KindLinkCheck || r.Check.Attempt != i+1 || r.Link.Spec != "carlucci2015" {
					t.Errorf("line %d: kind %s attempt %d link %q", i, r.Kind, r.Check.Attempt, r.Link.Spec)
				}
			}
			if got := result.RecheckedLinks(lines); (len(tc.checks) == 2) != (len(got) == 1) {
				t.Errorf("RecheckedLinks %q", got)
			}
		})
	}
}
