package studies

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/matrix"
	"github.com/pltlab/pltlab/interop/quicgo"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// evoLine is a synthetic interop line: server's case with outcome; a version-negotiation line
// lists versions, an amplification-limit line sends 1200 bytes and receives recv.
func evoLine(server, c string, rep int, o interop.Outcome, recv int, versions ...string) *result.Record {
	rec := interop.Record{V: 1, Kind: interop.RecordKind, Case: c, Client: interop.ProbeClient, Server: server, Outcome: o,
		Versions: map[string]string{"server": server}, Reason: "synthetic"}
	if c == "version-negotiation" {
		rec.Observed.VersionsListed = versions
	}
	if c == "amplification-limit" {
		rec.Observed.BytesSent, rec.Observed.BytesReceived, rec.Observed.Ratio = 1200, recv, float64(recv)/1200
	}
	if v, ok := matrix.Release(server); ok {
		rec.Build = &interop.Build{Release: v, Era: "era", Toolchain: "go1.26.8", Sum: "h1:x", BinarySHA256: "ab"}
	}
	b, _ := json.Marshal(rec)
	return &result.Record{Kind: result.KindInterop, Experiment: PartExperiment(Evolution, EvolutionPart), Run: rep, Valid: o != interop.Error, Interop: b}
}

// evoExLine is a synthetic exchange line: client fetching from server in exchange case c, with
// outcome o; a release's endpoint has its build.
func evoExLine(client, server, c string, rep int, o interop.Outcome) *result.Record {
	rec := interop.Record{V: 1, Kind: interop.RecordKind, Case: c, Client: client, Server: server, Outcome: o, Link: matrix.LinkPlain,
		Versions: map[string]string{"client": client, "server": server}, Reason: "synthetic " + string(o)}
	if v, ok := matrix.Release(client); ok {
		rec.ClientBuild = &interop.Build{Release: v, Era: "era", Toolchain: "go1.26.8", Sum: "h1:x", BinarySHA256: "ab"}
	}
	if v, ok := matrix.Release(server); ok {
		rec.Build = &interop.Build{Release: v, Era: "era", Toolchain: "go1.26.8", Sum: "h1:x", BinarySHA256: "ab"}
	}
	b, _ := json.Marshal(rec)
	return &result.Record{Kind: result.KindInterop, Experiment: PartExperiment(Evolution, EvolutionPart), Run: rep, Valid: o != interop.Error, Interop: b}
}

// evoGoodputLine is a synthetic goodput line: server (EvolutionFixed the client) fetched the
// 10 MiB file in run at mbps Mbit/s, a valid figure unless invalid gives its reason.
func evoGoodputLine(server string, run int, mbps float64, invalid string) *result.Record {
	r := evoExLine(EvolutionFixed, server, GoodputCase, run, interop.Pass)
	rec, _ := interopOf(r)
	rec.Link = matrix.LinkGoodput
	ms := 8 * float64(matrix.GoodputFile) / (mbps * 1e3)
	rec.Observed.Goodput = &interop.Goodput{Bytes: matrix.GoodputFile, TimeMS: ms, Mbps: mbps, Valid: invalid == "", InvalidReason: invalid, LateBoundMS: 5}
	r.Interop, _ = json.Marshal(rec)
	return r
}

// evoAsClient is release v as the client of EvolutionFixed in case c; evoAsServer as its server.
func evoAsClient(v, c string, rep int, o interop.Outcome) *result.Record {
	return evoExLine(matrix.ReleaseName(v), EvolutionFixed, c, rep, o)
}

func evoAsServer(v, c string, rep int, o interop.Outcome) *result.Record {
	return evoExLine(EvolutionFixed, matrix.ReleaseName(v), c, rep, o)
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
		evoRelease("v0.48.2", 1, []string{v1}, P, F, U), evoRelease("v0.66.0", 0, []string{v1}, P, F, U))
	if _, r, _ := judgeEvo(recs); r.Verdict != Reproduced || r.Evidence != "confirmed by a re-run: amplification-limit passes at v0.40.1 (1 run(s)) and fails at v0.48.2 (2 run(s))" {
		t.Errorf("regression: %s: %s", r.Verdict, r.Evidence)
	}
	// The same fail seen once: not confirmed by a re-run, inconclusive.
	recs = join(evoRelease("v0.40.1", 0, []string{v1}, P, P, U), evoRelease("v0.48.2", 0, []string{v1}, P, F, U),
		evoRelease("v0.66.0", 0, []string{v1}, P, P, U))
	if _, r, _ := judgeEvo(recs); r.Verdict != Inconclusive || !strings.Contains(r.Evidence, "not confirmed by a re-run: amplification-limit passes at v0.40.1 (1 run(s)) and fails at v0.48.2 (1 run(s))") {
		t.Errorf("one run: %s: %s", r.Verdict, r.Evidence)
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
	d := evolutionData(evoRelease("v0.66.0", 0, nil, P, F, U))
	if j := judgeDiffer(d); j.Verdict != NotRun {
		t.Errorf("no ngtcp2 lines on a host that had it: %s: %s", j.Verdict, j.Evidence)
	}
	d.host = Host{Ngtcp2: errors.New("gtlsserver not found")}
	if j := judgeDiffer(d); j.Verdict != NotTestable || !strings.Contains(j.Evidence, "gtlsserver not found") {
		t.Errorf("no ngtcp2: %s: %s", j.Verdict, j.Evidence)
	}
}

// TestEvolutionPlan: smoke runs three releases once, quick twelve over v0.33-v0.66 twice; ngtcp2
// joins when installed and is named as not run when not; the schedule's keys are what KeyOf
// reads back from the lines.
func TestEvolutionPlan(t *testing.T) {
	q := evolutionPlan(Quick, Host{})
	// 13 servers probed; 4 releases and ngtcp2 in 5 exchange cases, each as client and as server.
	// And 3 goodput runs a repetition with each of those 4 releases and ngtcp2 as the server.
	if q.Custom.Reps != 2 || q.Custom.Arms != 13*len(evolutionProbes())+5*5*2+5*3 || len(evolutionAll) < 8 || evolutionAll[0] != "v0.33.0" || evolutionAll[len(evolutionAll)-1] != "v0.66.0" {
		t.Errorf("quick: %d reps, %d arms", q.Custom.Reps, q.Custom.Arms)
	}
	// The probes' 2.8 min (104 x 1.6 s), the exchanges' 5.4 min (100 cells: zerortt 2.64 s, v2
	// 2.57 s, keyupdate 4.16 s, connectionmigration 4.24 s, ecn 2.64 s, exchangeCellCost) and the
	// goodput runs' 10.9 min (30 x 21.9 s: both attempts).
	if est, err := q.Estimate(); err != nil || est < 19*60e9 || est > 19*60e9+15e9 {
		t.Errorf("quick estimate %v (%v), want 19 min 7 s", est, err)
	}
	// The newer cases run against the quic-go releases, as client and as server.
	for _, c := range []string{"connectionmigration", "ecn"} {
		for _, k := range []string{"quic-go@v0.33.0>quic-go|" + c + "|1", "quic-go>quic-go@v0.52.0|" + c + "|0"} {
			if !slices.Contains(q.Custom.Keys(2), k) {
				t.Errorf("quick keys lack %q", k)
			}
		}
	}
	noNgtcp2 := Host{Ngtcp2: errors.New("gtlsserver not found")}
	s := evolutionPlan(Smoke, noNgtcp2)
	if s.Custom.Reps != 1 || s.Custom.Arms != 3*len(evolutionProbes())+2*2+1 || len(s.NotRun) != 1 || !strings.Contains(s.NotRun[0], "gtlsserver not found") {
		t.Errorf("smoke: %d reps, %d arms, not run %v", s.Custom.Reps, s.Custom.Arms, s.NotRun)
	}
	// 12 probe cases (19.2 s), 4 v2 cells (10.3 s), 1 goodput run (21.9 s: both attempts).
	if est, err := s.Estimate(); err != nil || est < 51e9 || est > 52e9 {
		t.Errorf("smoke estimate %v (%v), want 51.6 s", est, err)
	}
	keys := s.Custom.Keys(1)
	l := evoLine("quic-go@v0.40.1", "stateless-reset", 0, interop.Unsupported, 0)
	if keys[3] != "quic-go@v0.40.1|stateless-reset|0" || s.Custom.KeyOf(l) != keys[3] {
		t.Errorf("keys %v, KeyOf %q", keys[:4], s.Custom.KeyOf(l))
	}
	x := evoGoodputLine("quic-go@v0.66.0", 0, 9.4, "")
	if k := keys[len(keys)-1]; k != "quic-go>quic-go@v0.66.0|goodput|0" || s.Custom.KeyOf(x) != k {
		t.Errorf("last key %q, KeyOf %q", k, s.Custom.KeyOf(x))
	}
	// Quick's goodput runs: 3 a repetition, numbered over both repetitions.
	qk := q.Custom.Keys(2)
	for _, want := range []string{"quic-go>ngtcp2|goodput|0", "quic-go>ngtcp2|goodput|2", "quic-go>ngtcp2|goodput|3", "quic-go>ngtcp2|goodput|5"} {
		if !slices.Contains(qk, want) {
			t.Errorf("quick keys lack %q", want)
		}
	}
	if slices.Contains(qk, "quic-go>ngtcp2|goodput|6") || len(qk) != 2*117 {
		t.Errorf("quick: %d keys, want %d, goodput runs 0-5", len(qk), 2*117)
	}
	// Full: ten exchange cases, the rebind cases among them, with every release.
	f := evolutionPlan(Full, Host{})
	for _, k := range []string{"quic-go@v0.33.0>quic-go|rebind-port|4", "quic-go>quic-go@v0.40.1|rebind-addr|0", "quic-go>quic-go@v0.66.0|connectionmigration|2", "ngtcp2>quic-go|ecn|0"} {
		if !slices.Contains(f.Custom.Keys(5), k) {
			t.Errorf("full keys lack %q", k)
		}
	}
	// Not root: the exchange cells are not scheduled, and the plan says why.
	noNgtcp2.Exchange = errors.New("the exchange cases' emulated links need root")
	s = evolutionPlan(Smoke, noNgtcp2)
	if s.Custom.Arms != 3*len(evolutionProbes()) || len(s.NotRun) != 2 || !strings.Contains(s.NotRun[1], "exchange cells (v2, each of v0.40.1, v0.66.0 and ngtcp2") ||
		!strings.Contains(s.NotRun[1], "need root") {
		t.Errorf("not root: %d arms, not run %q", s.Custom.Arms, s.NotRun)
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
		if client, server, ok := strings.Cut(f[0], ">"); ok && f[1] == GoodputCase {
			out = append(out, evoGoodputLine(server, rep, 9.40+0.01*float64(rep), ""))
			continue
		} else if ok {
			o, reason := evoScheduledExchange(client, server, f[1])
			l := evoExLine(client, server, f[1], rep, o)
			if reason != "" {
				rec, _ := interopOf(l)
				rec.Reason = reason
				l.Interop, _ = json.Marshal(rec)
			}
			out = append(out, l)
			continue
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

// evoScheduledExchange is the synthetic outcome of an exchange cell and its reason ("": the
// synthetic one): ngtcp2 lacks RFC 9369's v2; a release before v0.43.0 as a client lacks 0-RTT
// (unsupported, then passes: an arrival); a release before v0.51 lacks connection migration,
// as a client by its API (no Conn.AddPath), as a server by its transport parameters (as
// measured with v0.48.2: matrix.NoMigrateServer, matrix.NoRebindServer); everything else
// passes.
func evoScheduledExchange(client, server, c string) (interop.Outcome, string) {
	vc, relc := matrix.Release(client)
	vs, rels := matrix.Release(server)
	migrating := c == "connectionmigration" || c == "rebind-port" || c == "rebind-addr"
	switch {
	case c == "v2" && (client == matrix.Ngtcp2 || server == matrix.Ngtcp2):
		return interop.Unsupported, ""
	case c == "zerortt" && relc && compareRelease(vc, "v0.43.0") < 0:
		return interop.Unsupported, ""
	case c == "connectionmigration" && relc && compareRelease(vc, "v0.51.0") < 0:
		return interop.Unsupported, "the " + client + " client does not support migrate (its API era " + func() string { e, _ := quicgo.EraOf(vc); return e.Name }() + ")"
	case migrating && rels && compareRelease(vs, "v0.51.0") < 0 && c == "connectionmigration":
		return interop.Unsupported, matrix.NoMigrateServer
	case migrating && rels && compareRelease(vs, "v0.51.0") < 0:
		return interop.Unsupported, matrix.NoRebindServer + " (it did: the server sent to 1 client ports, [100.64.0.6:4000], after the NAT rebound 2 times)"
	}
	return interop.Pass, ""
}

// TestEvolutionIdentify: the lines of a smoke run made with --runs 2 (quick's repetitions) are
// known as smoke by their servers, and re-judged with two repetitions.
func TestEvolutionIdentify(t *testing.T) {
	p := evolutionPlan(Smoke, Host{}).Apply(RunOptions{Runs: 2})
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

// TestEvolutionIdentifyOnItsHost: the lines of smoke runs made where the exchange cells could
// not run (not root), and where ngtcp2 could not either, are known as smoke, exactly, by the
// plan of the host they show they ran on (recordedHost), which names what it left out; they
// were taken for quick, with a note that they were made with --runs or --seed.
func TestEvolutionIdentifyOnItsHost(t *testing.T) {
	noRoot := errors.New("the exchange cases' emulated links need root")
	for _, h := range []Host{{Exchange: noRoot}, {Ngtcp2: errors.New("gtlsserver not found"), Exchange: noRoot}} {
		p := evolutionPlan(Smoke, h)
		recs := evolutionScheduled(p)
		for _, r := range recs {
			r.Scheduled = p.Custom.Runs()
		}
		st, got, exact, ok := Identify(recs)
		if !ok || st.Name != Evolution || got.Scale != Smoke || !exact {
			t.Fatalf("host %+v: identified %v scale %s exact %v; want smoke exactly", h, ok, got.Scale, exact)
		}
		if got.Custom.Arms != p.Custom.Arms || len(got.NotRun) != len(p.NotRun) || !strings.Contains(strings.Join(got.NotRun, "; "), "exchange cells") {
			t.Errorf("host %+v: plan of %d arms, not run %q; want the run's %d arms, naming the exchange cells", h, got.Custom.Arms, got.NotRun, p.Custom.Arms)
		}
		if !Complete(got, recs) {
			t.Errorf("host %+v: the run's lines are not complete against the plan identified", h)
		}
	}
}

// TestEvolutionExchangeCells: the exchange cells are columns of their own, per role. A release
// that regresses zerortt as a client, confirmed by a second run, is a regression named with the
// role; 0-RTT arriving as a client (unsupported by the oldest release's API, then passing) is
// an arrival; v2 passing at quic-go and unsupported at ngtcp2 makes the implementations differ;
// cells the machine could not run (no root) are no state at all.
func TestEvolutionExchangeCells(t *testing.T) {
	P, F, U := interop.Pass, interop.Fail, interop.Unsupported
	var recs []*result.Record
	for _, v := range []string{"v0.33.0", "v0.43.0", "v0.52.0", "v0.66.0"} {
		recs = append(recs, evoRelease(v, 0, []string{v1, v2}, P, F, U)...)
		for rep := range 2 {
			zc := P
			switch v {
			case "v0.33.0":
				zc = U
			case "v0.52.0":
				zc = F // the regression, in both runs
			}
			recs = append(recs, evoAsClient(v, "zerortt", rep, zc), evoAsServer(v, "zerortt", rep, P),
				evoAsClient(v, "v2", rep, P), evoAsServer(v, "v2", rep, P))
		}
	}
	recs = append(recs, evoExLine(matrix.Ngtcp2, EvolutionFixed, "v2", 0, U), evoExLine(EvolutionFixed, matrix.Ngtcp2, "v2", 0, U),
		evoLine(matrix.Ngtcp2, "version-negotiation", 0, P, 0, v1), evoLine(matrix.Ngtcp2, "amplification-limit", 0, F, 2400))
	a, r, d := judgeEvo(recs)
	if r.Verdict != Reproduced || r.Evidence != "confirmed by a re-run: zerortt as client passes at v0.43.0 (2 run(s)) and fails at v0.52.0 (2 run(s))" {
		t.Errorf("regression: %s: %s", r.Verdict, r.Evidence)
	}
	if a.Verdict != Inconclusive || !strings.Contains(a.Evidence, "no feature arrives; change otherwise: passes zerortt as client back and forth") ||
		!strings.Contains(a.Evidence, "passes v2 as client; passes v2 as server") {
		t.Errorf("arrival: %s: %s", a.Verdict, a.Evidence)
	}
	if d.Verdict != Reproduced || !strings.Contains(d.Evidence, "v2 as client: quic-go@v0.66.0 pass, ngtcp2 unsupported; v2 as server: quic-go@v0.66.0 pass, ngtcp2 unsupported") {
		t.Errorf("differ: %s: %s", d.Verdict, d.Evidence)
	}
	// 0-RTT arrives as a client when v0.52.0 passes too.
	fixed := slices.DeleteFunc(slices.Clone(recs), func(r *result.Record) bool {
		rec, _ := interopOf(r)
		return rec.Client == "quic-go@v0.52.0" && rec.Case == "zerortt"
	})
	fixed = append(fixed, evoAsClient("v0.52.0", "zerortt", 0, P), evoAsClient("v0.52.0", "zerortt", 1, P))
	if a, r, _ := judgeEvo(fixed); a.Verdict != Reproduced || !strings.Contains(a.Evidence, "passes zerortt as client from v0.43.0 on (not at v0.33.0)") || r.Verdict != Contradicted {
		t.Errorf("arrival as client: %s (%s), regression %s (%s)", a.Verdict, a.Evidence, r.Verdict, r.Evidence)
	}
	// Not root: every exchange cell unsupported for the machine's sake is left out, not read as
	// a release lacking the feature.
	noLink := func(r *result.Record) *result.Record {
		rec, _ := interopOf(r)
		rec.Outcome, rec.Reason = U, "the case's emulated link cannot open here (exchange cases need root on Linux): not root"
		r.Interop, _ = json.Marshal(rec)
		return r
	}
	recs = nil
	for _, v := range []string{"v0.33.0", "v0.43.0", "v0.52.0"} {
		recs = append(recs, evoRelease(v, 0, []string{v1}, P, P, U)...)
		recs = append(recs, noLink(evoAsClient(v, "zerortt", 0, P)), noLink(evoAsServer(v, "zerortt", 0, P)))
	}
	dd := evolutionData(recs)
	if names, _ := dd.features(); dd.notRun != 6 || slices.Contains(names, "passes zerortt as client") {
		t.Errorf("not-run cells judged: %d left out", dd.notRun)
	}
	if a, r, _ := judgeEvo(recs); a.Verdict != Contradicted || r.Verdict != Contradicted || strings.Contains(r.Evidence, "zerortt") {
		t.Errorf("not root: arrival %s (%s), regression %s (%s)", a.Verdict, a.Evidence, r.Verdict, r.Evidence)
	}
}

// TestEvolutionExchangeTable: the grid has a column per role of each exchange case run, the
// release's row reads its build from the role it played, and a non-pass cell gives its reason.
func TestEvolutionExchangeTable(t *testing.T) {
	recs := join(evoRelease("v0.40.1", 0, []string{v1}, interop.Pass, interop.Fail, interop.Unsupported),
		[]*result.Record{evoAsClient("v0.40.1", "zerortt", 0, interop.Fail), evoAsServer("v0.40.1", "zerortt", 0, interop.Pass)})
	secs := evolutionSections(&Support{Records: recs})
	tab := secs[0].Tables[0]
	if h := strings.Join(tab.Header, ","); !strings.HasSuffix(h, "stateless-reset,zerortt as client,zerortt as server") {
		t.Errorf("header %s", h)
	}
	if row := tab.Rows[0]; row[0] != "quic-go@v0.40.1" || row[5] != "fail: synthetic fail" || row[6] != "pass" {
		t.Errorf("row %q", row)
	}
	if prov := secs[1].Tables[0].Rows; len(prov) != 1 || prov[0][2] != "era" {
		t.Errorf("provenance %q", prov)
	}
}

// TestEvolutionShardsByEndpoint: evolution's schedule is cut by endpoint, one unit per quic-go
// release or ngtcp2 (its probe cases and its exchange cells in both roles), so `--shard`,
// `slurm --study` and `k8s --study` split it: three shards of quick hold every endpoint once;
// the merge of the shards' lines is complete and judged as the unsharded run is; a shard that
// lost a line is named short, with its endpoint.
func TestEvolutionShardsByEndpoint(t *testing.T) {
	st, _ := Lookup(Evolution)
	p := st.Plan(Quick)
	if err := p.Shardable(); err != nil {
		t.Fatal(err)
	}
	if len(p.Custom.Units) != 13 || p.Custom.Units[0].Name != "quic-go@v0.33.0" || p.Custom.Units[12].Name != matrix.Ngtcp2 ||
		p.Custom.Units[0].Arms != len(evolutionProbes())+5*2+3 || p.Custom.Units[1].Arms != len(evolutionProbes()) {
		t.Fatalf("units %+v", p.Custom.Units)
	}
	whole := evolutionScheduled(p)
	const n = 3
	var srcs []plan.Source
	seen := map[int]int{}
	for k := range n {
		pr, err := p.Prepare(RunOptions{Shard: plan.Shard{Index: k, Count: n}})
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, i := range pr.customUnits() {
			seen[i]++
			names[p.Custom.Units[i].Name] = true
		}
		recs := []*result.Record{pr.StudyPlanLine()}
		for _, r := range whole {
			if names[p.Custom.UnitOf(r)] {
				c := *r
				c.Shard, c.ShardUnits = pr.Slice.Shard.String(), plan.Digest(pr.Slice.Units)
				recs = append(recs, &c)
			}
		}
		if want := pr.FlowRuns(); len(recs)-1 != want {
			t.Errorf("shard %d/%d: %d lines, it schedules %d", k, n, len(recs)-1, want)
		}
		srcs = append(srcs, plan.Source{Name: fmt.Sprintf("shard-%d.jsonl", k), Records: recs})
	}
	if len(seen) != len(p.Custom.Units) {
		t.Fatalf("the shards hold %d of %d endpoints: %v", len(seen), len(p.Custom.Units), seen)
	}
	for i, c := range seen {
		if c != 1 {
			t.Errorf("endpoint %s is in %d shards", p.Custom.Units[i].Name, c)
		}
	}
	merged, check, err := MergeShards(p, RunOptions{}, srcs, plan.MergeOptions{})
	if err != nil || !check.Complete() {
		t.Fatalf("merge: %+v, %v", check, err)
	}
	a, b := Evaluate(st, p, whole).Judge(), Evaluate(st, p, merged).Judge()
	for i := range a {
		if a[i].Verdict != b[i].Verdict || a[i].Evidence != b[i].Evidence {
			t.Errorf("finding %d: unsharded %s (%s), merged %s (%s)", i+1, a[i].Verdict, a[i].Evidence, b[i].Verdict, b[i].Evidence)
		}
	}
	last := srcs[n-1].Records
	srcs[n-1].Records = last[:len(last)-1]
	_, check, err = MergeShards(p, RunOptions{}, srcs, plan.MergeOptions{})
	if err != nil || check.Complete() || len(check.Short) != 1 || !strings.Contains(check.Short[0], matrix.Ngtcp2+": ") {
		t.Errorf("a shard one line short: %+v, %v", check, err)
	}
}

// TestExchangeCellCost: a cell costs, per attempt, exchangeSetup and each client run's two
// round trips and files at the link's rate; a goodput cell both attempts of the retry rule,
// which is what such a run measured (21.3 s, made twice, 2026-12-07) within 10 %.
func TestExchangeCellCost(t *testing.T) {
	mib10 := time.Duration(float64(matrix.GoodputFile) * 8 / 10e6 * float64(time.Second)) // 8.389 s at 10 Mbit/s
	for _, tc := range []struct {
		name string
		want time.Duration
	}{
		{GoodputCase, 2 * (exchangeSetup + 60*time.Millisecond + mib10)},
		{"rebind-port", exchangeSetup + 60*time.Millisecond + mib10},
		{"v2", exchangeSetup + 60*time.Millisecond + 8*time.Millisecond},
		{"handshakeloss", exchangeSetup + 5*(60*time.Millisecond+800*time.Microsecond)},
		{"no-such-case", exchangeSetup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := exchangeCellCost(tc.name); got != tc.want {
				t.Errorf("%v, want %v", got, tc.want)
			}
		})
	}
	if g := exchangeCellCost(GoodputCase); g < 19170*time.Millisecond || g > 23430*time.Millisecond {
		t.Errorf("goodput %v, measured 21.3 s", g)
	}
	if c := cellsCost([]exCell{{c: GoodputCase}, {c: "v2"}}); c != exchangeCellCost(GoodputCase)+exchangeCellCost("v2") {
		t.Errorf("cost of a goodput and a v2 cell %v", c)
	}
}

// TestEvolutionNewerCases: the plan runs the newer cases the matrix has against the quic-go
// releases, each release as client and as server (quick: connectionmigration and ecn with its
// four releases; full: those and rebind-port and rebind-addr with all twelve). A release whose
// API era or transport parameters lack the feature gives a cell that is unsupported with the
// reason, a state of the release (never a failure, never the machine's "not run"): the grid
// shows it grey with its reason and connection migration arrives at v0.52.0, the first release
// of the quick range that has it.
func TestEvolutionNewerCases(t *testing.T) {
	for _, tc := range []struct {
		sc       Scale
		reps     int
		releases []string
		cases    []string
	}{
		{Quick, 2, []string{"v0.33.0", "v0.43.0", "v0.52.0", "v0.66.0"}, []string{"connectionmigration", "ecn"}},
		{Full, 5, evolutionAll, []string{"connectionmigration", "ecn", "rebind-port", "rebind-addr"}},
	} {
		keys := evolutionPlan(tc.sc, Host{}).Custom.Keys(tc.reps)
		for _, v := range tc.releases {
			for _, c := range tc.cases {
				for _, k := range []string{exchangeKey(matrix.ReleaseName(v), EvolutionFixed, c, tc.reps-1), exchangeKey(EvolutionFixed, matrix.ReleaseName(v), c, 0)} {
					if !slices.Contains(keys, k) {
						t.Errorf("%s lacks %s", tc.sc, k)
					}
				}
			}
		}
	}
	recs := evolutionScheduled(evolutionPlan(Full, Host{}))
	d := evolutionData(recs)
	for _, v := range []string{"v0.33.0", "v0.48.2"} {
		for _, col := range []string{"connectionmigration as client", "connectionmigration as server", "rebind-port as server", "rebind-addr as server"} {
			rs := d.byServer[matrix.ReleaseName(v)][col]
			if len(rs) != 5 || d.outcome(matrix.ReleaseName(v), col) != interop.Unsupported || environmental(rs[0]) || rs[0].Reason == "" {
				t.Errorf("%s %s: %d runs, %q: %q", v, col, len(rs), d.outcome(matrix.ReleaseName(v), col), rs[0].Reason)
			}
			if c := evoClass(rs); c.Class != string(interop.Unsupported) {
				t.Errorf("%s %s: grid %+v", v, col, c)
			}
		}
	}
	a, r, _ := judgeEvo(recs)
	if !strings.Contains(a.Evidence, "passes connectionmigration as server from v0.52.0 on (not at v0.48.2)") ||
		!strings.Contains(a.Evidence, "passes rebind-port as server from v0.52.0 on (not at v0.48.2)") || r.Verdict != Contradicted {
		t.Errorf("arrival %s: %s; regression %s: %s", a.Verdict, a.Evidence, r.Verdict, r.Evidence)
	}
}
