package studies

import (
	"errors"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestLowRateLossIntervals: "largest at low rate and with loss" is reproduced only when both
// differences' intervals lie above 0, contradicted when one lies below, and inconclusive when
// the advantage is the same everywhere (the old judge compared two bare means and could only
// reproduce).
func TestLowRateLossIntervals(t *testing.T) {
	st := kakhki()
	plan := st.Plan(Quick)
	obj, lnk := plan.Parts[0].Config, plan.Parts[1].Config
	lowRate := func(l string) bool { return strings.HasPrefix(l, "rate=5mbit") }
	lossy := func(l string) bool { return strings.Contains(l, "loss") }
	for _, tc := range []struct {
		name string
		tcp  func(p, l string) float64
		want Verdict
	}{
		{"largest at low rate and with loss", func(p, l string) float64 {
			switch {
			case lossy(l):
				return 3000
			case lowRate(l):
				return 2000
			}
			return 1200
		}, Reproduced},
		{"smallest at low rate", func(p, l string) float64 {
			switch {
			case lossy(l):
				return 3000
			case lowRate(l):
				return 1050
			}
			return 2000
		}, Contradicted},
		{"the same everywhere", func(p, l string) float64 { return 1300 }, Inconclusive},
	} {
		recs := gridRecords("objects", obj.Pages, obj.Links, func(p, l string) float64 { return 1300 },
			func(p, l string) float64 { return 1000 }, func(p, l string) float64 { return 950 })
		recs = append(recs, gridRecords("links", lnk.Pages, lnk.Links, tc.tcp,
			func(p, l string) float64 { return 1000 }, func(p, l string) float64 { return 950 })...)
		got := verdicts(st, Quick, recs)["low-rate-loss"]
		if got.Verdict != tc.want || !strings.Contains(got.Evidence, "99.5 % interval") {
			t.Errorf("%s: %s (%s), want %s with the intervals", tc.name, got.Verdict, got.Evidence, tc.want)
		}
	}
}

// TestRatioMargin: a ratio of medians matches the paper's when its CI lies within +-10 % of it;
// one whose CI holds the margin's edge is inconclusive, not reproduced.
func TestRatioMargin(t *testing.T) {
	for _, tc := range []struct {
		name string
		h2   float64 // h2's median against h1's 2030 ms (paper 1450: ratio 0.714, margin 0.643..0.786)
		want Verdict
	}{
		{"as published", 1450, Reproduced},
		{"on the margin's edge", 2030 * 0.714 * 1.1, Inconclusive},
		{"20 % off", 2030 * 0.714 * 1.2, Contradicted},
	} {
		got := verdicts(carlucci(), Quick, carlucciRecords(2030, tc.h2, 1140, 1140, 3000, 2500))["lossless-ratios"]
		if got.Verdict != tc.want {
			t.Errorf("%s: %s (%s), want %s", tc.name, got.Verdict, got.Evidence, tc.want)
		}
	}
}

// TestBBRInQUIC judges muthuraj2024's bbr-in-quic from synthetic QUICv1 loads of the two
// ngtcp2 parts on the quick plan's 112J50 link: BBR faster on both large objects reproduces,
// slower on one contradicts, alike is inconclusive with what would decide it, and a machine
// without gtlsserver makes it not testable.
func TestBBRInQUIC(t *testing.T) {
	st, err := Lookup(Muthuraj2024)
	if err != nil {
		t.Fatal(err)
	}
	links, _ := muthurajQUICCCLinks(Quick)
	if len(links) != 1 {
		t.Fatalf("quick 112J50 links %v: the test needs one", links)
	}
	mk := func(cubic, bbr [2]float64) []*result.Record {
		var recs []*result.Record
		for i, pg := range muthurajQUICCCPages {
			recs = append(recs, synth(Muthuraj2024, "quic-cubic", pg, links[0], "h3", result.Cold, cubic[i], 6, uint64(10+i))...)
			recs = append(recs, synth(Muthuraj2024, "quic-bbr", pg, links[0], "h3", result.Cold, bbr[i], 6, uint64(20+i))...)
		}
		return recs
	}
	for _, c := range []struct {
		name        string
		cubic, bbr  [2]float64
		want        Verdict
		evidenceHas string
	}{
		{"BBR faster on both", [2]float64{3000, 20000}, [2]float64{2000, 12000}, Reproduced, "PLT reduction with BBR +33.1 %"},
		{"BBR slower on 10 MB", [2]float64{3000, 12000}, [2]float64{2000, 20000}, Contradicted, "1x10MB"},
		{"alike", [2]float64{3000, 12000}, [2]float64{3010, 11990}, Inconclusive, "decided by"},
	} {
		j := verdicts(st, Quick, mk(c.cubic, c.bbr))["bbr-in-quic"]
		if j.Verdict != c.want || !strings.Contains(j.Evidence, c.evidenceHas) || !strings.Contains(j.Evidence, "gQUIC half is not testable") {
			t.Errorf("%s: %s (%s), want %s with %q", c.name, j.Verdict, j.Evidence, c.want, c.evidenceHas)
		}
	}
	// A cell left out for too few loads holds the reproduction of the other at inconclusive
	// (unsure): neither not run nor a contradiction.
	pg := muthurajQUICCCPages
	left := append(append(synth(Muthuraj2024, "quic-cubic", pg[0], links[0], "h3", result.Cold, 3000, 6, 10),
		synth(Muthuraj2024, "quic-bbr", pg[0], links[0], "h3", result.Cold, 2000, 6, 20)...),
		append(synth(Muthuraj2024, "quic-cubic", pg[1], links[0], "h3", result.Cold, 20000, 6, 11),
			synth(Muthuraj2024, "quic-bbr", pg[1], links[0], "h3", result.Cold, 12000, MinLoads-1, 21)...)...)
	if j := verdicts(st, Quick, left)["bbr-in-quic"]; j.Verdict != Inconclusive || !strings.Contains(j.Evidence, "left out, too few valid loads") {
		t.Errorf("a cell left out: %s (%s), want inconclusive", j.Verdict, j.Evidence)
	}
	if j := verdicts(st, Quick, nil)["bbr-in-quic"]; j.Verdict != NotRun {
		t.Errorf("no loads: %s, want not run", j.Verdict)
	}
	if j := verdictsOn(st, Quick, Host{Ngtcp2: errors.New("the ngtcp2 HTTP/3 stack needs gtlsserver")}, nil)["bbr-in-quic"]; j.Verdict != NotTestable {
		t.Errorf("without gtlsserver: %s, want not testable", j.Verdict)
	}
}
