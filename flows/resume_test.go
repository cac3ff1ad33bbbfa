package flows

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
)

// TestSettings: a run's records carry the h3 stack and its QUIC controller when the mix has a
// QUIC flow served by ngtcp2, and none set (but settings, unlike a line older than them) for
// quic-go (the default) or a TCP-only mix.
func TestSettings(t *testing.T) {
	h3 := []Spec{{Protocol: "h3", CC: "bbr"}, {Protocol: "h1", CC: "cubic"}}
	for _, tc := range []struct {
		name          string
		stack, quicCC string
		mix           []Spec
		want          *result.Settings
	}{
		{"quic-go", "", "", h3, &result.Settings{}},
		{"quic-go named", "quic-go", "", h3, &result.Settings{}},
		{"ngtcp2 default cc", StackNgtcp2, "", h3, &result.Settings{H3Stack: StackNgtcp2, QUICCC: "cubic"}},
		{"ngtcp2 bbr", StackNgtcp2, "bbr", h3, &result.Settings{H3Stack: StackNgtcp2, QUICCC: "bbr"}},
		{"ngtcp2, tcp only", StackNgtcp2, "bbr", h3[1:], &result.Settings{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MixExperiment{H3Stack: tc.stack, QUICCC: tc.quicCC}.settings(tc.mix)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("settings = %+v; want %+v", got, tc.want)
			}
		})
	}
}

// TestResumeRefusesOtherSettings: Execute refuses, before setting anything up, a resume file of
// its experiment made with another h3 stack or another flow duration, naming the first
// difference; records of the same settings, an old line without settings (older than them, as
// experiment's resume takes it) and records of another experiment are accepted.
func TestResumeRefusesOtherSettings(t *testing.T) {
	mix := []Spec{{Protocol: "h3", CC: "newreno"}}
	line := func(exp string, s *result.Settings, durationS float64) *result.Record {
		return &result.Record{Kind: result.KindFlow, Experiment: exp, Run: 0, Valid: true, Settings: s,
			Flow: &result.Flow{FlowIndex: 0, Flows: 1, Mix: "h3:newreno", DurationS: durationS, BinMs: 100}}
	}
	ngtcp2 := &result.Settings{H3Stack: StackNgtcp2, QUICCC: "cubic"}
	for _, tc := range []struct {
		name  string
		stack string
		rec   *result.Record
		want  string // "" accepted, else a part of the refusal
	}{
		{"same settings", StackNgtcp2, line("ex", ngtcp2, 1), ""},
		{"same settings, quic-go", "", line("ex", &result.Settings{}, 1), ""},
		{"old line without settings", StackNgtcp2, line("ex", nil, 1), ""},
		{"old line of another duration", "", line("ex", nil, 3), "(duration_s: 3 in the file, 1 from these flags)"},
		{"another experiment", "", line("other", ngtcp2, 9), ""},
		{"other h3 stack", "", line("ex", ngtcp2, 1), `run 0 of mix h3:newreno was made with other settings (settings.h3_stack: "ngtcp2" in the file, - from these flags)`},
		{"quic-go in the file", StackNgtcp2, line("ex", &result.Settings{}, 1), `(settings.h3_stack: - in the file, "ngtcp2" from these flags)`},
		{"other duration", "", line("ex", &result.Settings{}, 2), "(duration_s: 2 in the file, 1 from these flags)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(context.Context, shaping.Link, *server.Server, Config) ([]*result.Record, error) {
				t.Error("a run made despite the refusal")
				return nil, nil
			}
			p := MixExperiment{Link: "none", Mixes: [][]Spec{mix}, Runs: 1, Duration: time.Second, Experiment: "ex", H3Stack: tc.stack,
				Resume: []*result.Record{tc.rec}, Logger: slog.New(slog.DiscardHandler), seams: seams{run: run}}
			err := p.withDefaults().checkResume()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v; want one containing %q", err, tc.want)
			}
			if tc.stack != "" {
				return // Execute would refuse ngtcp2 without gtlsserver, or h3:newreno on it, first
			}
			if _, err := Execute(context.Background(), p, func(*result.Record) error { t.Error("a record emitted"); return nil }); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Execute: %v; want the refusal", err)
			}
		})
	}
}
