package studies

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/matrix"
	"github.com/pltlab/pltlab/result"
)

// evoLine is a synthetic interop line: server's case with outcome; a version-negotiation line
// lists versions, an amplification-limit line sends 1200 bytes and receives recv.
func evoLine(server, c string, rep int, o interop.Outcome, recv int, versions ...string) *result.Record {
	rec := interop.Record{V: 1, Kind: interop.RecordKind, Case: c, Server: server, Outcome: o,
		Versions: map[string]string{"server": server}, Reason: "synthetic"}
	if c == "version-negotiation" {
		rec.Evidence.VersionsListed = versions
	}
	if c == "amplification-limit" {
		rec.Evidence.BytesSent, rec.Evidence.BytesReceived, rec.Evidence.Ratio = 1200, recv, float64(recv)/1200
	}
	if v, ok := matrix.Release(server); ok {
		rec.Build = &interop.Build{Release: v, Era: "era", Toolchain: "go1.26.8", Sum: "h1:x", BinarySHA256: "ab"}
	}
	b, _ := json.Marshal(rec)
	return &result.Record{Kind: result.KindInterop, Experiment: PartExperiment(Evolution, EvolutionPart), Run: rep, Valid: o != interop.Error, Interop: b}
}

// evoRelease is every case of one release: version negotiation listing versions (plus a
// greased one), the others with the given outcomes (initial-under-1200, amplification-limit,
// stateless-reset).
func evoRelease(v string, rep int, versions []string, under, amp, reset interop.Outcome) []*result.Record {
	s := matrix.ReleaseName(v)
	return []*result.Record{
		evoLine(s, "version-negotiation", rep, interop.Pass, 0, append([]string{"0x1a2a3a4a"}, versions...)...),
		evoLine(s, "initial-under-1200", rep, under, 0),
		evoLine(s, "amplification-limit", rep, amp, 3879),
		evoLine(s, "stateless-reset", rep, reset, 0),
	}
}

const (
	v1, v2, d29 = "0x00000001", "0x6b3343cf", "0xff00001d"
)

func judgeEvo(recs []*result.Record) (arrivalJ, regressionJ, differJ Judgement) {
	d := evolutionData(recs)
	return judgeArrival(d), judgeRegression(d), judgeDiffer(d)
}

func join(rs ...[]*result.Record) []*result.Record {
	var out []*result.Record
	for _, r := range rs {
		out = append(out, r...)
	}
	return out
}

// TestEvolutionArrival: QUIC v2 listed from v0.40.1 on (not at v0.33.0) is an arrival whose
// evidence names the release; releases given out of order are sorted by their numbers.
func TestEvolutionArrival(t *testing.T) {
	P, F, U := interop.Pass, interop.Fail, interop.Unsupported
	recs := join(evoRelease("v0.66.0", 0, []string{v1, v2}, P, F, U), evoRelease("v0.33.0", 0, []string{v1, d29}, P, F, U),
		evoRelease("v0.40.1", 0, []string{v1, v2, d29}, P, F, U))
	a, r, _ := judgeEvo(recs)
	if a.Verdict != Reproduced || !strings.Contains(a.Evidence, "arrive: lists 0x6b3343cf (QUIC v2 (RFC 9369)) in Version Negotiation from v0.40.1 on (not at v0.33.0)") ||
		!strings.Contains(a.Evidence, "change otherwise: lists 0xff00001d (draft-29) in Version Negotiation up to v0.40.1, not from v0.66.0 on") {
		t.Errorf("arrival: %s: %s", a.Verdict, a.Evidence)
	}
	// draft-29 leaves (the data of 2026-12-06: listed up to v0.35.0): a change, no arrival,
	// so inconclusive.
	recs = join(evoRelease("v0.33.0", 0, []string{v1, v2, d29}, P, F, U), evoRelease("v0.35.0", 0, []string{v1, v2, d29}, P, F, U),
		evoRelease("v0.37.0", 0, []string{v1, v2}, P, F, U), evoRelease("v0.66.0", 0, []string{v1, v2}, P, F, U))
	if a, _, _ := judgeEvo(recs); a.Verdict != Inconclusive || a.Evidence != "over 4 releases (v0.33.0 to v0.66.0): no feature arrives; "+
		"change otherwise: lists 0xff00001d (draft-29) in Version Negotiation up to v0.35.0, not from v0.37.0 on; "+
		"present from the oldest release on (an arrival before the range cannot be seen): lists 0x00000001 (QUIC v1) in Version Negotiation; "+
		"lists 0x6b3343cf (QUIC v2 (RFC 9369)) in Version Negotiation; passes initial-under-1200; passes version-negotiation" {
		t.Errorf("departure only: %s: %s", a.Verdict, a.Evidence)
	}
	if r.Verdict != Contradicted || !strings.Contains(r.Evidence, "every case is monotone over 3 releases (v0.33.0 to v0.66.0)") {
		t.Errorf("regression: %s: %s", r.Verdict, r.Evidence)
	}
}

// TestEvolutionNothingArrives: the same features at every release contradict arrival.
func TestEvolutionNothingArrives(t *testing.T) {
	P, F, U := interop.Pass, interop.Fail, interop.Unsupported
	recs := join(evoRelease("v0.40.1", 0, []string{v1, v2}, P, F, U), evoRelease("v0.48.2", 0, []string{v1, v2}, P, F, U),
		evoRelease("v0.66.0", 0, []string{v1, v2}, P, F, U))
	if a, _, _ := judgeEvo(recs); a.Verdict != Contradicted || !strings.Contains(a.Evidence, "no feature arrives") {
		t.Errorf("arrival: %s: %s", a.Verdict, a.Evidence)
	}
}

// TestEvolutionRegression: a case passing at v0.40.1 and failing at v0.48.2 is a regression,
// named with both releases.
func TestEvolutionRegression(t *testing.T) {
	P, F, U := interop.Pass, interop.Fail, interop.Unsupported
	recs := join(evoRelease("v0.40.1", 0, []string{v1}, P, P, U), evoRelease("v0.48.2", 0, []string{v1}, P, F, U),
		evoRelease("v0.66.0", 0, []string{v1}, P, F, U))
	if _, r, _ := judgeEvo(recs); r.Verdict != Reproduced || r.Evidence != "amplification-limit passes at v0.40.1 and fails at v0.48.2" {
		t.Errorf("regression: %s: %s", r.Verdict, r.Evidence)
	}
	// A fail that later passes is monotone (an arrival), not a regression.
	recs = join(evoRelease("v0.40.1", 0, []string{v1}, P, F, U), evoRelease("v0.48.2", 0, []string{v1}, P, P, U),
		evoRelease("v0.66.0", 0, []string{v1}, P, P, U))
	a, r, _ := judgeEvo(recs)
	if r.Verdict != Contradicted || a.Verdict != Reproduced || !strings.Contains(a.Evidence, "passes amplification-limit from v0.48.2 on (not at v0.40.1)") {
		t.Errorf("fail then pass: regression %s (%s), arrival %s (%s)", r.Verdict, r.Evidence, a.Verdict, a.Evidence)
	}
}

// TestEvolutionTooFew: two releases decide neither finding over releases.
func TestEvolutionTooFew(t *testing.T) {
	P, F, U := interop.Pass, interop.Fail, interop.Unsupported
	recs := join(evoRelease("v0.40.1", 0, []string{v1}, P, P, U), evoRelease("v0.66.0", 0, []string{v1, v2}, P, F, U))
	a, r, _ := judgeEvo(recs)
	for _, j := range []Judgement{a, r} {
		if j.Verdict != Inconclusive || !strings.Contains(j.Evidence, "2 quic-go release(s) with judged cases (v0.40.1, v0.66.0); the finding needs 3") {
			t.Errorf("%s: %s", j.Verdict, j.Evidence)
		}
	}
}

// TestEvolutionErrorsIgnored: errors are evidence of nothing: a release whose cases all ended
// in error does not count, and an error between a pass and a fail neither makes nor hides a
// regression; repetitions that disagree give no state.
func TestEvolutionErrorsIgnored(t *testing.T) {
	P, F, U, E := interop.Pass, interop.Fail, interop.Unsupported, interop.Error
	errRel := func(v string) []*result.Record { return evoRelease(v, 0, nil, E, E, E) }
	for _, r := range errRel("v0.52.0") {
		var rec interop.Record
		json.Unmarshal(r.Interop, &rec)
		rec.Outcome = E
		r.Interop, _ = json.Marshal(rec)
	}
	// Only errors at v0.52.0: with two judged releases the findings are undecided.
	recs := join(evoRelease("v0.40.1", 0, []string{v1}, P, E, U), errRel("v0.52.0"), evoRelease("v0.66.0", 0, []string{v1}, P, E, U))
	for _, r := range recs {
		var rec interop.Record
		json.Unmarshal(r.Interop, &rec)
		if rec.Server == "quic-go@v0.52.0" {
			rec.Outcome = E
			r.Interop, _ = json.Marshal(rec)
		}
	}
	if a, r, _ := judgeEvo(recs); a.Verdict != Inconclusive || r.Verdict != Inconclusive {
		t.Errorf("errors counted as a release: arrival %s (%s), regression %s (%s)", a.Verdict, a.Evidence, r.Verdict, r.Evidence)
	}
	// amplification-limit: pass at v0.40.1, error at v0.48.2, pass at v0.66.0; a flaky pass/fail at
	// v0.52.0 (two repetitions) is no state: monotone, contradicted.
	recs = join(evoRelease("v0.40.1", 0, []string{v1}, P, P, U), evoRelease("v0.48.2", 0, []string{v1}, P, E, U),
		evoRelease("v0.52.0", 0, []string{v1}, P, F, U), evoRelease("v0.52.0", 1, []string{v1}, P, P, U),
		evoRelease("v0.66.0", 0, []string{v1}, P, P, U))
	if _, r, _ := judgeEvo(recs); r.Verdict != Contradicted {
		t.Errorf("error or flaky repetitions made a regression: %s: %s", r.Verdict, r.Evidence)
	}
}

// TestEvolutionDiffer: the newest release against ngtcp2: amplification-limit fails at quic-go
// (3879 bytes, 3.23x) and passes at ngtcp2 (2400, 2.00x): they differ; the same outcomes
// everywhere contradict; no ngtcp2 lines are not testable without gtlsserver.
func TestEvolutionDiffer(t *testing.T) {
	defer func(f func() error) { ngtcp2Missing = f }(ngtcp2Missing)
	ngtcp2Missing = func() error { return nil }
	P, F, U := interop.Pass, interop.Fail, interop.Unsupported
	ng := func(amp interop.Outcome) []*result.Record {
		return []*result.Record{evoLine(matrix.Ngtcp2, "version-negotiation", 0, P, 0, v1), evoLine(matrix.Ngtcp2, "initial-under-1200", 0, P, 0),
			evoLine(matrix.Ngtcp2, "amplification-limit", 0, amp, 2400), evoLine(matrix.Ngtcp2, "stateless-reset", 0, U, 0)}
	}
	recs := join(evoRelease("v0.40.1", 0, []string{v1}, P, P, U), evoRelease("v0.66.0", 0, []string{v1, v2}, P, F, U), ng(P))
	if _, _, d := judgeEvo(recs); d.Verdict != Reproduced ||
		!strings.Contains(d.Evidence, "1 of 4 cases differ: amplification-limit: quic-go@v0.66.0 fail (3879 bytes for 1200, 3.23x), ngtcp2 pass (2400 bytes, 2.00x)") {
		t.Errorf("differ: %s: %s", d.Verdict, d.Evidence)
	}
	recs = join(evoRelease("v0.66.0", 0, []string{v1, v2}, P, F, U), ng(F))
	if _, _, d := judgeEvo(recs); d.Verdict != Contradicted || !strings.HasPrefix(d.Evidence, "0 of 4 cases differ") {
		t.Errorf("same: %s: %s", d.Verdict, d.Evidence)
	}
	ngtcp2Missing = func() error { return errors.New("gtlsserver not found") }
	if _, _, d := judgeEvo(evoRelease("v0.66.0", 0, nil, P, F, U)); d.Verdict != NotTestable || !strings.Contains(d.Evidence, "gtlsserver not found") {
		t.Errorf("no ngtcp2: %s: %s", d.Verdict, d.Evidence)
	}
}

// TestEvolutionPlan: smoke runs three releases once, quick twelve over v0.33-v0.66 twice; ngtcp2
// joins when installed and is named as not run when not; the schedule's keys are what KeyOf
// reads back from the lines.
func TestEvolutionPlan(t *testing.T) {
	defer func(f func() error) { ngtcp2Missing = f }(ngtcp2Missing)
	ngtcp2Missing = func() error { return nil }
	q := evolutionPlan(Quick)
	if q.Custom.Reps != 2 || q.Custom.Arms != 13*len(interop.Cases) || len(evolutionAll) < 8 || evolutionAll[0] != "v0.33.0" || evolutionAll[len(evolutionAll)-1] != "v0.66.0" {
		t.Errorf("quick: %d reps, %d arms", q.Custom.Reps, q.Custom.Arms)
	}
	ngtcp2Missing = func() error { return errors.New("gtlsserver not found") }
	s := evolutionPlan(Smoke)
	if s.Custom.Reps != 1 || s.Custom.Arms != 3*len(interop.Cases) || len(s.NotRun) != 1 || !strings.Contains(s.NotRun[0], "gtlsserver not found") {
		t.Errorf("smoke: %d reps, %d arms, not run %v", s.Custom.Reps, s.Custom.Arms, s.NotRun)
	}
	if est, err := s.Estimate(); err != nil || est > 2*60e9 {
		t.Errorf("smoke estimate %v (%v)", est, err)
	}
	keys := s.Custom.Keys(1)
	l := evoLine("quic-go@v0.40.1", "stateless-reset", 0, interop.Unsupported, 0)
	if keys[3] != "quic-go@v0.40.1|stateless-reset|0" || s.Custom.KeyOf(l) != keys[3] {
		t.Errorf("keys %v, KeyOf %q", keys[:4], s.Custom.KeyOf(l))
	}
}

// evolutionScheduled are the lines of a complete run of plan: every case against every server,
// every repetition, with the outcomes measured on 2026-12-06 (amplification-limit failing at
// quic-go, passing at ngtcp2) and QUIC v2 listed from v0.40.1 on.
func evolutionScheduled(p Plan) []*result.Record {
	var out []*result.Record
	P, F, U := interop.Pass, interop.Fail, interop.Unsupported
	for _, k := range p.Custom.Keys(p.Custom.Reps) {
		f := strings.Split(k, "|")
		var rep int
		if f[2] != "0" {
			rep = int(f[2][0] - '0')
		}
		o, recv, versions := P, 0, []string{v1}
		if v, ok := matrix.Release(f[0]); ok {
			if compareRelease(v, "v0.40.1") >= 0 {
				versions = append(versions, v2)
			}
			if f[1] == "amplification-limit" {
				o, recv = F, 3879
			}
		} else if f[1] == "amplification-limit" {
			recv = 2400
		}
		if f[1] == "stateless-reset" {
			o = U
		}
		out = append(out, evoLine(f[0], f[1], rep, o, recv, versions...))
	}
	return out
}

// TestEvolutionIdentify: the lines of a smoke run made with --runs 2 (quick's repetitions) are
// known as smoke by their servers, and re-judged with two repetitions.
func TestEvolutionIdentify(t *testing.T) {
	defer func(f func() error) { ngtcp2Missing = f }(ngtcp2Missing)
	ngtcp2Missing = func() error { return nil }
	p := evolutionPlan(Smoke).Apply(RunOptions{Runs: 2})
	recs := evolutionScheduled(p)
	for _, r := range recs {
		r.Scheduled = p.Custom.Runs()
	}
	st, got, _, ok := Identify(recs)
	if !ok || st.Name != Evolution || got.Scale != Smoke {
		t.Fatalf("identified %v scale %s", ok, got.Scale)
	}
	if d := FromRecords(got, recs); d.Custom.Reps != 2 {
		t.Errorf("re-judged with %d repetitions, want 2", d.Custom.Reps)
	}
}
