package selfcheck

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/internal/linktest"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/netem"
)

// guestEnv marks a run inside the qemu guest of make test-netem (scripts/test-netem.sh), whose
// kernel has sch_netem, tbf and the AQM qdiscs.
const guestEnv = "PLTLAB_NETEM_GUEST"

// needNetemGuest skips unless the test runs in make test-netem's guest; there, a kernel
// without sch_netem fails the test.
func needNetemGuest(t *testing.T) {
	t.Helper()
	linktest.NeedRoot(t)
	if os.Getenv(guestEnv) == "" {
		t.Skip("runs in the qemu guest of make test-netem (" + guestEnv + " unset)")
	}
	if err := netem.Available(); err != nil {
		t.Fatalf("%s set but: %v", guestEnv, err)
	}
}

// checkNetem opens spec (shaper=netem), runs the link check (quick or full), once more when it fails
// (as experiments do: one late probe on a busy machine is not a broken link), logs every line
// of both and returns the last result.
func checkNetem(t *testing.T, spec string, quick bool) (*shaping.NetemLink, result.LinkCheck) {
	t.Helper()
	s, err := linkspec.Parse(spec + ",shaper=netem")
	if err != nil {
		t.Fatal(err)
	}
	l, err := shaping.Open(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		nl := l.(*shaping.NetemLink)
		if err := l.Close(); err != nil {
			t.Error(err)
		}
		linktest.AssertGone(t, l.Namespace(), nl.HostDev())
	})
	var res result.LinkCheck
	for try := 1; try <= 2; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err = Run(ctx, l, Options{Quick: quick})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range res.Lines {
			t.Logf("%s check %d: %-5v %s | %s | %s | %s", spec, try, line.Pass, line.Name, line.Configured, line.Measured, line.Tolerance)
		}
		if res.Pass {
			break
		}
	}
	return l.(*shaping.NetemLink), res
}

// TestIntegrationNetemGuestCheck: in a kernel with netem, the netem backend passes every line
// of the link check for carlucci2015 (3 Mbit/s, 50 ms, 18750 B droptail), a lossy link,
// CoDel, FQ-CoDel and CAKE queues and Pareto jitter; the record holds the qdisc tree, the host
// overhead and the paired idle probes, and the check judges the kernel's qdisc counters instead
// of emulator counters.
func TestIntegrationNetemGuestCheck(t *testing.T) {
	needNetemGuest(t)
	for _, spec := range []string{"carlucci2015", "rate=10mbit,rtt=40ms,loss=2%",
		"rate=3mbit,rtt=50ms,aqm=codel", "rate=3mbit,rtt=50ms,aqm=fq_codel", "rate=3mbit,rtt=50ms,aqm=cake",
		"rate=3mbit,rtt=50ms,jitter=5ms,jitter_dist=pareto"} {
		t.Run(spec, func(t *testing.T) {
			// An AQM needs more than the quick check's 1.25 s transfer to settle (the
			// emulator's CoDel fails the quick check too): the full check for those.
			_, res := checkNetem(t, spec, !strings.Contains(spec, "aqm="))
			if !res.Pass {
				t.Errorf("link check of %s,shaper=netem failed (lines above)", spec)
			}
			if res.HostOverheadMs <= 0 && res.HostPlainRTTMs <= 0 {
				t.Errorf("host overhead not recorded: %+v", res)
			}
			if res.Pairs < 8 || res.RefRTTMedianMs <= 0 || res.PairedCoverage < 0.99 {
				t.Errorf("paired idle probes not recorded: pairs %d, reference median %v ms, coverage %v", res.Pairs, res.RefRTTMedianMs, res.PairedCoverage)
			}
			var names []string
			for _, line := range res.Lines {
				names = append(names, line.Name)
			}
			for _, want := range []string{"qdisc counters during the idle probes (tc -s)", "netem drops outside the spec (tc -s, whole check)"} {
				if !slices.Contains(names, want) {
					t.Errorf("no line %q in %q", want, names)
				}
			}
			if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "emulator ") }) {
				t.Errorf("a netem link's check has emulator lines (which its counters cannot fail): %q", names)
			}
			tree := strings.Join(res.Qdisc, "\n")
			limiter := "qdisc tbf 10: parent 1:1"
			if strings.Contains(spec, "aqm=cake") {
				limiter = "qdisc cake 10: parent 1:1"
			}
			for _, want := range []string{"host pltlab", "client pltlab0 (up): qdisc netem 1: root", limiter} {
				if !strings.Contains(tree, want) {
					t.Errorf("qdisc tree lacks %q:\n%s", want, tree)
				}
			}
		})
	}
}

// TestIntegrationNetemGuestTree: the kernel's own view of carlucci2015's tree is a netem with
// the 25 ms delay and IP-byte size table over a tbf at 3 Mbit/s whose FIFO holds exactly the
// spec's 18750 bytes, on both ends; an AQM link has the AQM under the tbf (the kernel keeps
// PIE's update interval in jiffies: 15 ms is 16 ms at HZ=250); CAKE replaces the tbf, at the
// rate, counting the size table's IP bytes (raw); jitter appears after the delay (the kernel
// keeps a distribution's table, not its name, so the tree cannot show which).
func TestIntegrationNetemGuestTree(t *testing.T) {
	needNetemGuest(t)
	for spec, wants := range map[string][]string{
		// tc prints a tbf's byte limit as its latency, (limit - burst) x 8 / rate:
		// (18750 - 2999) x 8 / 3 Mbit/s = 42 ms.
		"carlucci2015":                                      {"netem 1: root", "delay 25ms", "overhead -14", "tbf 10: parent 1:1 rate 3Mbit burst 2999b", "lat 42ms"},
		"rate=3mbit,rtt=50ms,aqm=pie":                       {"pie 20: parent 10:1 limit 1000p target 15ms tupdate 16ms", "tbf 10: parent 1:1 rate 3Mbit"},
		"rate=3mbit,rtt=50ms,aqm=codel":                     {"codel 20: parent 10:1 limit 1000p target 5ms interval 100ms"},
		"rate=3mbit,rtt=50ms,aqm=cake":                      {"cake 10: parent 1:1 bandwidth 3Mbit", " raw"},
		"rate=3mbit,rtt=50ms,jitter=5ms,jitter_dist=normal": {"delay 25ms  5ms"},
	} {
		s, _ := linkspec.Parse(spec + ",shaper=netem")
		l, err := shaping.Open(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		nl := l.(*shaping.NetemLink)
		tree := strings.Join(nl.Qdiscs(), "\n")
		t.Logf("%s:\n%s", spec, tree)
		for _, end := range []string{"host ", "client "} {
			var lines []string
			for _, q := range nl.Qdiscs() {
				if strings.HasPrefix(q, end) {
					lines = append(lines, q)
				}
			}
			for _, w := range wants {
				if !strings.Contains(strings.Join(lines, "\n"), w) {
					t.Errorf("%s %send: no %q in\n%s", spec, end, w, strings.Join(lines, "\n"))
				}
			}
		}
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestIntegrationNetemGuestWrongLink: the link check fails a netem link that is not its spec,
// on the guest's real timers: carlucci2015 with one end's netem delay 2 ms long (27 ms) or
// 2 ms short (23 ms) fails the idle RTT median (the paired differences' interval lies 2 ms
// off), and with 20 % random loss on a loss-free spec fails the qdisc counters line (netem
// dropped what the spec does not drop). One check each, no repeat.
func TestIntegrationNetemGuestWrongLink(t *testing.T) {
	needNetemGuest(t)
	for _, tc := range []struct {
		name, end, netem, line string
	}{
		{"delay 2 ms long (down)", "host", "delay 27000us", "idle RTT median"},
		{"delay 2 ms short (up)", "client", "delay 23000us", "idle RTT median"},
		{"loss on a loss-free link", "host", "delay 25000us loss random 20%", "qdisc counters during the idle probes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := linkspec.Parse("carlucci2015,shaper=netem")
			l, err := shaping.Open(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			nl := l.(*shaping.NetemLink)
			defer func() {
				if err := l.Close(); err != nil {
					t.Error(err)
				}
			}()
			argv := []string{"tc", "qdisc", "change", "dev", nl.HostDev()}
			if tc.end == "client" {
				argv = []string{"tc", "-n", nl.Namespace(), "qdisc", "change", "dev", nl.ClientDev()}
			}
			argv = append(append(argv, "root", "handle", "1:", "stab", "overhead", "-14", "netem"), strings.Fields(tc.netem)...)
			if err := (netem.ExecRunner{}).Run(context.Background(), append(argv, "limit", "100000")); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := Run(ctx, l, Options{Quick: true})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, line := range res.Lines {
				t.Logf("%-5v %s | %s | %s | %s", line.Pass, line.Name, line.Configured, line.Measured, line.Tolerance)
				if strings.HasPrefix(line.Name, tc.line) {
					found = true
					if line.Pass {
						t.Errorf("%s: the %q line passed", tc.name, line.Name)
					}
				}
			}
			if !found || res.Pass {
				t.Errorf("%s: line %q found %v, check pass %v: want a failed line and check", tc.name, tc.line, found, res.Pass)
			}
		})
	}
}
