package studies

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/matrix"
	"github.com/pltlab/pltlab/result"
)

// goodputRuns are synthetic goodput lines of server, one per figure (Mbit/s), valid.
func goodputRuns(server string, mbps ...float64) []*result.Record {
	var out []*result.Record
	for i, m := range mbps {
		out = append(out, evoGoodputLine(server, i, m, ""))
	}
	return out
}

// TestEvolutionGoodputFinding judges "quic-go releases differ in goodput" from synthetic runs:
// a 10 % slower release among steady ones differs (Welch on ln goodput, Holm over the pairs);
// three releases within 0.3 % of each other are shown equivalent within ±10 %; a wide spread
// with no difference, or one run a release, is inconclusive; late and failed runs, errors and
// ngtcp2 stay out of the comparison; without the exchange cases' link it is not testable.
func TestEvolutionGoodputFinding(t *testing.T) {
	v40, v52, v66 := matrix.ReleaseName("v0.40.1"), matrix.ReleaseName("v0.52.0"), matrix.ReleaseName("v0.66.0")
	steady := func(s string, base float64) []*result.Record {
		return goodputRuns(s, base, base+0.02, base-0.01, base+0.01, base-0.02)
	}
	late := evoGoodputLine(v66, 7, 3.0, "emulator late: a packet left 15.59 ms after its time (down), bound 5.00 ms")
	failed := evoExLine(EvolutionFixed, v66, GoodputCase, 8, interop.Fail)
	errored := evoExLine(EvolutionFixed, v40, GoodputCase, 9, interop.Error)
	for _, tc := range []struct {
		name     string
		recs     []*result.Record
		host     Host
		want     Verdict
		evidence []string
	}{
		{"a slower release differs", join(steady(v40, 9.42), steady(v52, 9.40), steady(v66, 8.48)), Host{}, Reproduced,
			[]string{"3 releases, 3 pair(s)", "2 pair(s) differ", "v0.40.1/v0.66.0 1.111 [", "v0.52.0/v0.66.0 1.108 ["}},
		{"steady releases are equivalent", join(steady(v40, 9.42), steady(v52, 9.40), steady(v66, 9.41), []*result.Record{late, failed, errored}), Host{}, Contradicted,
			[]string{"no pair differs and every pair's interval lies within ±10 %", "the widest: "}},
		{"ngtcp2 is not a release", join(steady(v40, 9.42), steady(v66, 9.41), steady(matrix.Ngtcp2, 7.0)), Host{}, Contradicted,
			[]string{"2 releases, 1 pair(s)"}},
		{"a wide spread decides nothing", join(goodputRuns(v40, 6.0, 9.0, 7.5, 9.5, 6.5), goodputRuns(v66, 9.0, 6.2, 8.0, 7.0, 9.3)), Host{}, Inconclusive,
			[]string{"no pair differs, and not every pair is shown within ±10 %", "v0.40.1/v0.66.0 0.97"}},
		{"a release with too few runs holds equivalence", join(steady(v40, 9.42), steady(v52, 9.40), goodputRuns(v66, 9.41)), Host{}, Inconclusive,
			[]string{"every compared pair's interval lies within ±10 %, but not every release has 2 valid runs", "too few valid runs (under 2) to compare: quic-go@v0.66.0 1"}},
		{"one run a release is too few", join(goodputRuns(v40, 9.4), goodputRuns(v66, 8.4)), Host{}, Inconclusive,
			[]string{"too few runs: 0 release(s) with at least 2 valid goodput runs, 2 needed (valid runs: quic-go@v0.40.1 1, quic-go@v0.66.0 1)"}},
		{"late runs are no measurement", join(goodputRuns(v40, 9.4, 9.41), []*result.Record{late, late}), Host{}, Inconclusive,
			[]string{"too few runs: 1 release(s)", "quic-go@v0.66.0 0"}},
		{"no link here", nil, Host{Exchange: errors.New("need root")}, NotTestable, []string{"need root"}},
		{"no runs", nil, Host{}, NotRun, []string{"no goodput run"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := judgeGoodputDiffer(goodputSamples(tc.recs), tc.host)
			t.Logf("%s: %s", j.Verdict, j.Evidence)
			if j.Verdict != tc.want {
				t.Errorf("verdict %s, want %s: %s", j.Verdict, tc.want, j.Evidence)
			}
			for _, e := range tc.evidence {
				if !strings.Contains(j.Evidence, e) {
					t.Errorf("evidence %q lacks %q", j.Evidence, e)
				}
			}
		})
	}
}

// TestEvolutionGoodputSamples: valid figures are kept per server, releases oldest first, and
// the runs left out carry their reasons; errors are evidence of nothing.
func TestEvolutionGoodputSamples(t *testing.T) {
	v40, v66 := matrix.ReleaseName("v0.40.1"), matrix.ReleaseName("v0.66.0")
	recs := join(goodputRuns(matrix.Ngtcp2, 9.1), goodputRuns(v66, 9.4, 9.5), goodputRuns(v40, 9.3),
		[]*result.Record{evoGoodputLine(v66, 3, 2.0, "emulator late"), evoExLine(EvolutionFixed, v40, GoodputCase, 4, interop.Error),
			evoExLine(EvolutionFixed, v40, GoodputCase, 5, interop.Fail)})
	ss := goodputSamples(recs)
	if len(ss) != 3 || ss[0].server != v40 || ss[1].server != v66 || ss[2].server != matrix.Ngtcp2 {
		t.Fatalf("samples %+v", ss)
	}
	if len(ss[1].mbps) != 2 || ss[1].mbps[1] != 9.5 || len(ss[1].left) != 1 || ss[1].left[0] != "emulator late" {
		t.Errorf("v0.66.0: %+v", ss[1])
	}
	if len(ss[0].mbps) != 1 || len(ss[0].left) != 1 || !strings.HasPrefix(ss[0].left[0], "fail, no figure") {
		t.Errorf("v0.40.1: %+v", ss[0])
	}
	if ms := ss[1].ms[0]; math.Abs(ms-8*float64(matrix.GoodputFile)/9.4e3) > 1e-9 {
		t.Errorf("transfer time %v ms", ms)
	}
}

// TestEvolutionGoodputSection: the release -> goodput table gives each server's mean with its
// 95 % Student's t interval (9.40, 9.42: t(0.975, 1) = 12.706, half-width 0.127), its valid
// runs, mean time and the runs left out.
func TestEvolutionGoodputSection(t *testing.T) {
	v40 := matrix.ReleaseName("v0.40.1")
	recs := join(goodputRuns(v40, 9.40, 9.42), goodputRuns(matrix.Ngtcp2, 9.3), []*result.Record{evoGoodputLine(v40, 5, 1, "emulator late: a packet left 9 ms")})
	sec := goodputSection(recs)
	if sec == nil || len(sec.Tables) != 1 || len(sec.Tables[0].Rows) != 2 {
		t.Fatalf("section %+v", sec)
	}
	r := sec.Tables[0].Rows
	if r[0][0] != v40 || r[0][1] != "9.410 [9.283, 9.537]" || r[0][2] != "2" || r[0][3] != "8915" || r[0][4] != "1: emulator late: a packet left 9 ms" {
		t.Errorf("row %q", r[0])
	}
	if r[1][0] != matrix.Ngtcp2 || r[1][1] != "9.300 (no interval)" || r[1][2] != "1" || r[1][4] != "-" {
		t.Errorf("row %q", r[1])
	}
	if goodputSection(goodputRuns(v40)) != nil {
		t.Error("a section without goodput runs")
	}
}
