package experiment

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/selfcheck"
)

// fakeLink is a shaped link that is never opened: only its self-check (replaced) is run.
type fakeLink struct{}

func (fakeLink) Namespace() string              { return "pltlab-fake" }
func (fakeLink) HostAddr() netip.Addr           { return netip.MustParseAddr("10.0.0.1") }
func (fakeLink) ClientAddr() netip.Addr         { return netip.MustParseAddr("10.0.0.2") }
func (fakeLink) Spec() linkspec.Spec            { s, _ := linkspec.Parse("carlucci2015"); return s }
func (fakeLink) TakeCounters() *result.Emulator { return nil }
func (fakeLink) Close() error                   { return nil }

var _ shaping.Link = fakeLink{}

// TestLinkRecheck checks the retry rule of the link self-check (result.Retry): a link
// that fails and then passes is used, and the summary names it; a link that fails twice is
// refused; each check leaves a link_check line with its attempt number; the analysis report
// warns about the link that needed a second check. Before the rule was recorded, the retry
// had no test and no report said which link needed it.
func TestLinkRecheck(t *testing.T) {
	bad := result.LinkCheck{Pass: false, Lines: []result.CheckLine{{Name: "idle RTT min..max", Measured: "50.7..80.1 ms", Configured: "50.49 ms", Tolerance: "max <= +5 ms", Pass: false}}}
	good := result.LinkCheck{Pass: true, Lines: []result.CheckLine{{Name: "idle RTT median", Pass: true}}}
	for _, tc := range []struct {
		name     string
		checks   []result.LinkCheck
		wantErr  bool
		wantNote string
	}{
		{"pass", []result.LinkCheck{good}, false, ""},
		{"fail then pass", []result.LinkCheck{bad, good}, false, "passed on its second check"},
		{"fail then fail", []result.LinkCheck{bad, bad}, true, "failed both checks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			var out bytes.Buffer
			c := Config{Name: "e", Links: []string{"carlucci2015"}, Logger: slog.New(slog.DiscardHandler)}
			r := &runner{c: c, w: result.NewWriter(&out), links: []linkspec.Spec{fakeLink{}.Spec()}, env: &result.Env{}, plts: map[Arm][]float64{},
				selfCheck: func(context.Context, shaping.Link, selfcheck.Options) (result.LinkCheck, error) {
					c := tc.checks[calls]
					calls++
					return c, nil
				},
				settleBusy: func(context.Context, time.Duration) (float64, float64) { return 0, 0 }, // a quiet machine
			}
			err := r.checkLink(context.Background(), 0, fakeLink{})
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrLinkCheck)) {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if calls != len(tc.checks) {
				t.Errorf("%d checks, want %d", calls, len(tc.checks))
			}
			var recs []*result.Record
			rd := result.NewReader(bytes.NewReader(out.Bytes()), "out")
			for {
				rec, err := rd.Next()
				if err != nil {
					break
				}
				recs = append(recs, rec)
			}
			lines := strings.Count(out.String(), `"kind":"link_check"`)
			if lines != len(tc.checks) {
				t.Errorf("%d link_check lines, want %d", lines, len(tc.checks))
			}
			if len(tc.checks) == 2 && !strings.Contains(out.String(), `"attempt":2`) {
				t.Errorf("second check not numbered: %s", out.String())
			}
			note := strings.Join(r.sum.Rechecked, "\n")
			if tc.wantNote == "" && note != "" || !strings.Contains(note, tc.wantNote) {
				t.Errorf("summary note %q, want %q", note, tc.wantNote)
			}
			if tc.wantNote != "" && !strings.Contains(note, "idle RTT min..max: measured 50.7..80.1 ms") {
				t.Errorf("summary note %q does not say why the first check failed", note)
			}
			warn := strings.Join(result.RecheckedLinks(recs), "\n")
			if !strings.Contains(warn, tc.wantNote) || (tc.wantNote == "") != (warn == "") {
				t.Errorf("report warning %q, want %q", warn, tc.wantNote)
			}
		})
	}
}
