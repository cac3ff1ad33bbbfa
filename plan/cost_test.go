package plan

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// costRuns are the validation runs whose records (trimmed to the fields the fit reads) are in
// ../testdata/costfit: every page-load study's smoke and quick scale (testdata/costfit/walls.tsv
// has their measured wall times).
var costRuns = []string{"carlucci2015-smoke", "carlucci2015-quick", "carlucci2015-calibrate-smoke",
	"kakhki2017-smoke", "kakhki2017-quick", "muthuraj2024-smoke", "muthuraj2024-quick"}

// readRecords reads a JSON Lines file of records.
func readRecords(t *testing.T, path string) []*result.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []*result.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		r := &result.Record{}
		if err := json.Unmarshal(sc.Bytes(), r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestCostFittedFromRecords re-derives the cost model's constants from the records they were
// fitted to (FitCost pooled over costRuns): each constant must be the fit rounded to its
// stated precision.
func TestCostFittedFromRecords(t *testing.T) {
	var runs [][]*result.Record
	for _, name := range costRuns {
		runs = append(runs, readRecords(t, "../testdata/costfit/"+name+".jsonl"))
	}
	fit, err := FitCost(runs...)
	if err != nil {
		t.Fatal(err)
	}
	near := func(name string, got, want, tol time.Duration) {
		t.Helper()
		if d := got - want; d < -tol || d > tol {
			t.Errorf("%s: fitted %v, constant %v (tolerance %v)", name, got, want, tol)
		}
	}
	near("LoadOverhead", fit.LoadOverhead, LoadOverhead, 10*time.Millisecond)
	near("WarmPriming", fit.WarmPriming, WarmPriming, 10*time.Millisecond)
	near("BrowserLaunchCost", fit.BrowserLaunch, BrowserLaunchCost, 50*time.Millisecond)
	near("BrowserCloseCost", fit.BrowserClose, BrowserCloseCost, 50*time.Millisecond)
	near("LinkCheckBase", fit.LinkCheckBase, LinkCheckBase, 100*time.Millisecond)
	near("FlowOverhead", fit.FlowOverhead, FlowOverhead, 50*time.Millisecond)
	near("PLTFloor", fit.PLTFloor, PLTFloor, 10*time.Millisecond)
	if fit.Cold < 600 || fit.Warm < 100 || fit.Links < 10 || fit.Flows != 3 {
		t.Errorf("samples: %d cold, %d warm, %d link changes, %d flow gaps", fit.Cold, fit.Warm, fit.Links, fit.Flows)
	}
	t.Logf("fit: %+v", fit)
	// The robust line of the link changes: four samples on it fix it, a fifth far off does not
	// move it.
	ys := []time.Duration{time.Second, 1500 * time.Millisecond, 2 * time.Second, 2500 * time.Millisecond, 10 * time.Second}
	if a, b := theilSen([]int{2, 4, 6, 8, 10}, ys); a != 500*time.Millisecond || b != 250*time.Millisecond {
		t.Errorf("theilSen: %v + %v x n, want 0.5 s + 0.25 s x n", a, b)
	}
	// Without wall times there is nothing to fit.
	if _, err := FitCost([]*result.Record{{Kind: result.KindLinkCheck}}); err == nil {
		t.Error("FitCost of no load: no error")
	}
}

// TestCheckProbeTime checks the self-check's probe time against selfcheck.Run's rules on links
// whose every term is known: 10 idle probes of one RTT, two bulk transfers of 25 RTTs (at least
// 1 s), and for each lossy direction a stream of 20 / loss packets at 1 ms and its drain; 61
// idle RTTs on a netem link.
func TestCheckProbeTime(t *testing.T) {
	for _, tc := range []struct {
		link string
		want time.Duration
	}{
		{"none", 0},
		{"carlucci2015", 500*time.Millisecond + 2*1250*time.Millisecond},
		{"rate=100mbit,rtt=36ms", 360*time.Millisecond + 2*time.Second},
		{"carlucci2015,loss=1%", 3*time.Second + 2*(2*time.Second+25*time.Millisecond+300*time.Millisecond)},
		{"rate=1gbit,rtt=20ms", 200*time.Millisecond + 2*3*time.Second},
		// A netem link's idle RTT: 20 plain reference probes, a warm-up pair and 40 pairs.
		{"carlucci2015,shaper=netem", 61*50*time.Millisecond + 2*1250*time.Millisecond},
	} {
		l, err := linkspec.Parse(tc.link)
		if err != nil {
			t.Fatal(err)
		}
		if got := CheckProbeTime(l); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.link, got, tc.want)
		}
	}
}

// TestEstimateLoadShapes checks the load formula's two shapes.
func TestEstimateLoadShapes(t *testing.T) {
	if got := EstimateLoad(time.Second, result.Cold); got != time.Second+LoadOverhead {
		t.Errorf("cold: %v", got)
	}
	if got := EstimateLoad(time.Second, result.Warm); got != 2*time.Second+LoadOverhead+WarmPriming {
		t.Errorf("warm: %v", got)
	}
	none, _ := EstimateFlows(0, time.Minute, "carlucci2015")
	two, err := EstimateFlows(2, 20*time.Second, "carlucci2015")
	l, _ := linkspec.Parse("carlucci2015")
	if none != 0 || err != nil || two != LinkCheckTime(l)+2*(20*time.Second+FlowOverhead) {
		t.Errorf("EstimateFlows: %v, %v, %v", none, two, err)
	}
	if _, err := EstimateFlows(1, time.Second, "rate=fast"); err == nil {
		t.Error("EstimateFlows of a bad link: no error")
	}
}

// TestSlowStart checks the slow-start delivery term against hand-computed rounds: a page that
// fits the initial window costs its serialization, one over a link whose BDP the window covers
// (carlucci2015: 18750 B) one round trip more; 1 MB
// over 50 Mbit/s at 136 ms (BDP 850 KB) from TCP's 14480 B needs 6 windows (14.5 KB doubling to
// 463 KB, 912 KB in all) before the rest goes at the rate.
func TestSlowStart(t *testing.T) {
	ser := func(b int64, rate int64) time.Duration {
		return time.Duration(float64(b*8) / float64(rate) * float64(time.Second))
	}
	if got := slowStart(10_000, 50e6, 136*time.Millisecond, tcpInitialWindow); got != ser(10_000, 50e6) {
		t.Errorf("within the first window: %v", got)
	}
	if got := slowStart(300_000, 3e6, 50*time.Millisecond, tcpInitialWindow); got != 50*time.Millisecond+ser(300_000-tcpInitialWindow, 3e6) {
		t.Errorf("BDP 18750 B: %v", got)
	}
	sent := int64(tcpInitialWindow * (1 + 2 + 4 + 8 + 16 + 32))
	if got, want := slowStart(1_000_000, 50e6, 136*time.Millisecond, tcpInitialWindow), 6*136*time.Millisecond+ser(1_000_000-sent, 50e6); got != want {
		t.Errorf("1 MB at 50 Mbit/s, 136 ms: %v, want %v", got, want)
	}
	if got := slowStart(1_000_000, 0, 136*time.Millisecond, tcpInitialWindow); got != 0 {
		t.Errorf("unshaped: %v", got)
	}
}

// TestNgtcp2Wait: the idle-out waits a load of the ngtcp2 stack adds (cold one, warm two) with
// the server's 2 s idle timeout.
func TestNgtcp2Wait(t *testing.T) {
	if c, w := Ngtcp2Wait(result.Cold, 2*time.Second), Ngtcp2Wait(result.Warm, 2*time.Second); c != 2100*time.Millisecond || w != 4200*time.Millisecond {
		t.Fatalf("cold %v warm %v, want 2.1 s and 4.2 s", c, w)
	}
}

func TestIdealPLT(t *testing.T) {
	// 300 000 B at 3 Mbit/s = 0.8 s; plus 4 RTTs of 50 ms = 1.0 s (TLS 1.2 with False Start).
	got := IdealPLT(300000, 3_000_000, 50*time.Millisecond, MinRoundTrips("h1", result.Cold, "1.2"))
	if got != 1000*time.Millisecond {
		t.Fatalf("IdealPLT = %v, want 1s", got)
	}
	tests := []struct {
		proto string
		mode  result.Mode
		tls   string
		want  int
	}{
		{"h1", result.Cold, "1.2", 4}, // TLS False Start: the request goes with the client's Finished
		{"h2", result.Cold, "1.3", 4},
		{"h2", result.Warm, "1.2", 4},
		{"h3", result.Cold, "1.2", 3},
		{"h3", result.Warm, "1.3", 2},
	}
	for _, tt := range tests {
		if got := MinRoundTrips(tt.proto, tt.mode, tt.tls); got != tt.want {
			t.Errorf("MinRoundTrips(%s, %s, %s) = %d, want %d", tt.proto, tt.mode, tt.tls, got, tt.want)
		}
	}
}
