package flows

import (
	"math"
	"testing"
	"time"
)

func TestJain(t *testing.T) {
	cases := []struct {
		name string
		xs   []float64
		want float64
	}{
		{"equal", []float64{5, 5, 5, 5}, 1},
		{"one of two gets all", []float64{10, 0}, 0.5},
		{"one of four gets all", []float64{0, 0, 7, 0}, 0.25},
		// (1+2+3)^2 / (3 * (1+4+9)) = 36/42
		{"1 2 3", []float64{1, 2, 3}, 36.0 / 42.0},
		// (2+1)^2 / (2 * 5) = 0.9
		{"2 to 1", []float64{2e6, 1e6}, 0.9},
		{"single", []float64{3}, 1},
		{"all zero", []float64{0, 0}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Jain(c.xs); math.Abs(got-c.want) > 1e-12 {
				t.Fatalf("Jain(%v) = %v, want %v", c.xs, got, c.want)
			}
		})
	}
	if !math.IsNaN(Jain(nil)) {
		t.Fatal("Jain(nil) is not NaN")
	}
}

func TestSkipAndSteadyWindow(t *testing.T) {
	ms := time.Millisecond
	cases := []struct {
		name            string
		start, end, rtt time.Duration
		wantSkip        time.Duration
		want            Window
	}{
		{"short RTT: 2 s", 0, 60 * time.Second, 50 * ms, 2 * time.Second, Window{20, 600}},
		{"long RTT: 10 RTT", 0, 60 * time.Second, 300 * ms, 3 * time.Second, Window{30, 600}},
		{"short flow: half", 0, 3 * time.Second, 50 * ms, 1500 * ms, Window{15, 30}},
		{"late start, unaligned", 10*time.Second + 50*ms, 30 * time.Second, 20 * ms, 2 * time.Second, Window{121, 300}},
		{"unaligned end rounds down", 0, 10*time.Second + 99*ms, 0, 2 * time.Second, Window{20, 100}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Skip(c.rtt, c.end-c.start); got != c.wantSkip {
				t.Fatalf("Skip = %v, want %v", got, c.wantSkip)
			}
			if got := SteadyWindow(c.start, c.end, c.rtt, 100*ms); got != c.want {
				t.Fatalf("SteadyWindow = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestIntersect(t *testing.T) {
	if got := Intersect([]Window{{20, 600}, {120, 700}}); got != (Window{120, 600}) {
		t.Fatalf("overlap: %+v", got)
	}
	if got := Intersect([]Window{{20, 100}, {120, 700}}); got.Len() != 0 {
		t.Fatalf("disjoint: %+v has length %d", got, got.Len())
	}
	if got := Intersect(nil); got.Len() != 0 {
		t.Fatalf("none: %+v", got)
	}
}

func TestBinner(t *testing.T) {
	epoch := time.Unix(1000, 0)
	b := NewBinner(epoch, 100*time.Millisecond, 5)
	b.Add(epoch, 100)                            // bin 0
	b.Add(epoch.Add(99*time.Millisecond), 50)    // bin 0
	b.Add(epoch.Add(100*time.Millisecond), 1000) // bin 1 (boundary belongs to the next bin)
	b.Add(epoch.Add(450*time.Millisecond), 7)    // bin 4
	b.Add(epoch.Add(10*time.Second), 3)          // past the end: last bin
	b.Add(epoch.Add(-time.Second), 1)            // before the epoch: first bin
	want := []int64{151, 1000, 0, 0, 10}
	for i, v := range b.Bytes() {
		if v != want[i] {
			t.Fatalf("bins %v, want %v", b.Bytes(), want)
		}
	}
	rates := Rates(b.Bytes(), 100*time.Millisecond)
	if rates[0] != 12080 || rates[1] != 80000 || rates[2] != 0 {
		t.Fatalf("rates %v", rates)
	}
	if got := MeanRate([]float64{1, 2, 3, 4, 5}, Window{1, 4}); got != 3 {
		t.Fatalf("MeanRate = %v, want 3", got)
	}
	if got := MeanRate([]float64{1, 2}, Window{1, 9}); got != 2 {
		t.Fatalf("MeanRate clamps the window: %v, want 2", got)
	}
	if !math.IsNaN(MeanRate([]float64{1}, Window{3, 2})) {
		t.Fatal("empty window is not NaN")
	}
}

func TestConverge(t *testing.T) {
	// Flow a has the link alone (10) until bin 10, when b starts; both have 5 from bin 14. With
	// 2-bin averages and a hold of 3 bins: the window [13,14] gives (5.5, 4.5), Jain 100/101 =
	// 0.990, and every later one 1; it ends in bin 14: 14+1-10 = 5 bins after b's start.
	a := []float64{10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 9, 8, 7, 6, 5, 5, 5, 5, 5, 5, 5, 5}
	b := []float64{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 5, 5}
	cases := []struct {
		name       string
		start, end int
		threshold  float64
		want       int
		ok         bool
	}{
		{"reaches 0.99", 10, 22, 0.99, 5, true},
		// Jain of 2-bin means: [10,11]: (8.5,1.5) 0.67; [11,12]: (7.5,2.5) 0.8; [12,13]:
		// (6.5,3.5) 0.92 -> holds from the window ending at bin 13: 13+1-10 = 4 bins.
		{"reaches 0.9", 10, 22, 0.9, 4, true},
		{"too short to hold", 10, 16, 0.99, 0, false},
		{"never", 10, 22, 1.01, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := Converge([][]float64{a, b}, c.start, c.end, 2, 3, c.threshold)
			if got != c.want || ok != c.ok {
				t.Fatalf("Converge = %d, %v; want %d, %v", got, ok, c.want, c.ok)
			}
		})
	}
	if _, ok := Converge([][]float64{a}, 0, 10, 2, 3, 0.9); ok {
		t.Fatal("one flow cannot converge")
	}
}

func TestParseSpec(t *testing.T) {
	cases := []struct {
		in, want string
		bad      bool
	}{
		{in: "h1", want: "h1:cubic"},
		{in: "h2:reno", want: "h2:reno"},
		{in: "h3", want: "h3"},
		{in: "h3:newreno", want: "h3:newreno"},
		{in: "h3:bbr", want: "h3:bbr"},
		{in: "h3:vegas", bad: true},
		{in: "h4", bad: true},
		{in: "h1:no such cc", bad: true},
		{in: "", bad: true},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			s, err := ParseSpec(c.in)
			if c.bad {
				if err == nil {
					t.Fatalf("ParseSpec(%q) = %v, want an error", c.in, s)
				}
				return
			}
			if err != nil || s.String() != c.want {
				t.Fatalf("ParseSpec(%q) = %v, %v; want %s", c.in, s, err, c.want)
			}
		})
	}
	if m := Mix([]Spec{{Protocol: "h3", CC: "newreno"}, {Protocol: "h1", CC: "cubic"}}); m != "h3:newreno+h1:cubic" {
		t.Fatalf("Mix = %q", m)
	}
}

func TestDialOrder(t *testing.T) {
	c := Config{Flows: []Spec{{Start: 10 * time.Second}, {}, {}, {}, {Start: 5 * time.Second}}, Seed: 1}
	seen := map[[5]int]bool{}
	for run := range 20 {
		c.Run = run
		o := dialOrder(c)
		if o[3] != 4 || o[4] != 0 {
			t.Fatalf("run %d: order %v does not follow the start times", run, o)
		}
		seen[[5]int(o)] = true
		again := dialOrder(c)
		if [5]int(again) != [5]int(o) {
			t.Fatalf("run %d: order not reproducible: %v then %v", run, o, again)
		}
	}
	if len(seen) < 2 {
		t.Fatal("flows that start together always connect in the same order")
	}
}

func TestSchedule(t *testing.T) {
	jobs := Schedule(3, 4, 7)
	if len(jobs) != 12 {
		t.Fatalf("%d jobs, want 12", len(jobs))
	}
	firsts := map[int]bool{}
	for run := range 4 {
		block := jobs[run*3 : run*3+3]
		seen := map[int]bool{}
		for _, j := range block {
			if j.Run != run || seen[j.Mix] || j.Mix < 0 || j.Mix > 2 {
				t.Fatalf("run %d: block %v", run, block)
			}
			seen[j.Mix] = true
		}
		firsts[block[0].Mix] = true
	}
	if len(firsts) < 2 {
		t.Fatal("the same mix always runs first")
	}
	if again := Schedule(3, 4, 7); again[5] != jobs[5] {
		t.Fatal("schedule not reproducible from its seed")
	}
	if m, err := ParseMix("h3, h1:reno"); err != nil || Mix(m) != "h3+h1:reno" {
		t.Fatalf("ParseMix = %v, %v", m, err)
	}
	if _, err := ParseMix("h3,h7"); err == nil {
		t.Fatal("ParseMix accepted h7")
	}
}

// TestReadEdges: a 10 Mbit/s flow read 1250 bytes a millisecond, with receive holes
// (head-of-line blocking) of 90 and 20 ms over the edges of its steady window [2 s, 4 s] and the held bytes
// read at once when the hole ends: the bins' mean over the window counts the catch-up after
// 2 s without the time before it (10.25 Mbit/s, over the link's rate, the failure of
// TestIntegrationNgtcp2Flows on 2026-12-04), while the goodput between the edge reads is
// the link's 10 Mbit/s. Without a read before an edge, or with none inside, it says so.
func TestReadEdges(t *testing.T) {
	epoch := time.Unix(100, 0)
	from, to := epoch.Add(2*time.Second), epoch.Add(4*time.Second)
	hole := func(ms int) bool { return ms > 1940 && ms < 2030 || ms > 3990 && ms < 4010 }
	e := NewReadEdges(from, to, 10e6, 1500, 100*time.Millisecond)
	b := NewBinner(epoch, 100*time.Millisecond, 50)
	var cum int64
	held := 0
	for ms := 1; ms <= 5000; ms++ {
		held += 1250
		if hole(ms) {
			continue
		}
		at := epoch.Add(time.Duration(ms) * time.Millisecond)
		cum += int64(held)
		b.Add(at, held)
		e.Note(at, cum)
		held = 0
	}
	bins := MeanRate(Rates(b.Bytes(), 100*time.Millisecond), Window{From: 20, To: 40})
	if bins < 10.15e6 {
		t.Fatalf("fixture: the bins' mean is %.3f Mbit/s, want it biased above 10.15", bins/1e6)
	}
	bps, f, l, kept := e.Goodput()
	if math.Abs(bps-10e6) > 1 || f != epoch.Add(1940*time.Millisecond) || l != epoch.Add(3990*time.Millisecond) || kept != 0 {
		t.Errorf("goodput %.6f Mbit/s between %v and %v, want 10 between 1.940 s and 3.990 s", bps/1e6, f.Sub(epoch), l.Sub(epoch))
	}
	late := NewReadEdges(from, to, 0, 1500, 100*time.Millisecond)
	late.Note(epoch.Add(2500*time.Millisecond), 1000)
	late.Note(epoch.Add(3*time.Second), 2000)
	if bps, f, _, _ := late.Goodput(); f != from || math.Abs(bps-2000*8/1.0) > 1e-6 {
		t.Errorf("no read before the window: %.1f bit/s from %v, want 16000 from its start", bps, f.Sub(epoch))
	}
	idle := NewReadEdges(from, to, 0, 1500, 100*time.Millisecond)
	idle.Note(epoch.Add(time.Second), 5000)
	if bps, f, l, _ := idle.Goodput(); bps != 0 || f != from || l != to {
		t.Errorf("no read inside the window: %v between %v and %v, want 0 over the window", bps, f, l)
	}
}

// recoveryReads feeds e a 10 Mbit/s flow read 1250 bytes a millisecond for 5 s, with loss
// recoveries of two losses each: for each start s in starts, the first lost packet holds
// bytes from s to s+70 ms, when its retransmission is read alone (1250 bytes), and the second
// holds every byte behind it until s+105 ms, read at once (the read trace of quic-go's NewReno
// flow in TestIntegrationNgtcp2Flows in CI on 2026-12-07).
func recoveryReads(e *ReadEdges, epoch time.Time, starts ...int) {
	var cum int64
	held := int64(0)
	for ms := 1; ms <= 5000; ms++ {
		held += 1250
		read := true
		for _, s := range starts {
			switch {
			case ms == s+70:
				cum += 1250
				e.Note(epoch.Add(time.Duration(ms)*time.Millisecond), cum)
				held -= 1250
				read = false
			case ms > s && ms < s+105:
				read = false
			}
		}
		if read {
			cum += held
			e.Note(epoch.Add(time.Duration(ms)*time.Millisecond), cum)
			held = 0
		}
	}
}

// TestReadEdgesRecovery: an edge falling between the two retransmissions of a loss recovery
// (the last read before it held 86 KB back) is moved to the clean read before the recovery,
// so the goodput is the link's 10 Mbit/s, not the 10.2 the last read before the edge gives;
// the to edge lies a horizon before the window's end, where reads were seen for a whole
// horizon after it. With the recovery over the whole lookback the edge stays at the last read
// and the held bytes are reported; on an unlimited link (rate 0) reads are not judged.
func TestReadEdgesRecovery(t *testing.T) {
	epoch := time.Unix(100, 0)
	from, to := epoch.Add(2*time.Second), epoch.Add(4*time.Second)
	ms := func(d time.Time) float64 { return float64(d.Sub(epoch)) / 1e6 }
	e := NewReadEdges(from, to, 10e6, 1500, 100*time.Millisecond)
	recoveryReads(e, epoch, 1900)
	bps, f, l, held := e.Goodput()
	if math.Abs(bps-10e6) > 1 || f != epoch.Add(1900*time.Millisecond) || l != epoch.Add(4000*time.Millisecond) || held != 0 {
		t.Errorf("goodput %.6f Mbit/s between %.0f and %.0f ms, held %d: want 10 between 1900 and 4000 ms, none held", bps/1e6, ms(f), ms(l), held)
	}
	old := NewReadEdges(from, to, 0, 1500, 100*time.Millisecond)
	recoveryReads(old, epoch, 1900)
	if bps, f, _, _ := old.Goodput(); f != epoch.Add(1970*time.Millisecond) || bps < 10.15e6 {
		t.Errorf("fixture: unjudged reads give %.3f Mbit/s from %.0f ms, want over 10.15 from the read at 1970 ms", bps/1e6, ms(f))
	}
	// The window's end: the last read before 4 s is seen for a horizon only up to 4.1 s.
	cut := NewReadEdges(from, to, 10e6, 1500, 100*time.Millisecond)
	for i := 1; i <= 4050; i++ {
		cut.Note(epoch.Add(time.Duration(i)*time.Millisecond), int64(i)*1250)
	}
	if _, _, l, _ := cut.Goodput(); l != epoch.Add(3950*time.Millisecond) {
		t.Errorf("reads up to 4050 ms: to edge at %.0f ms, want 3950 (a 100 ms horizon seen after it)", ms(l))
	}
	// A reader stalled from 1.3 to 1.6 s drains what it held at 1.5 times the link's rate until
	// 2.2 s: every read of the lookback [1.5 s, 2 s] holds bytes back, so the edge stays at the
	// last read before 2 s, which held 50 ms of the link (62.5 KB) less the slack (8.25 KB).
	busy := NewReadEdges(from, to, 10e6, 1500, 100*time.Millisecond)
	for i := 1; i <= 5000; i++ {
		switch {
		case i <= 1300 || i >= 2200:
			busy.Note(epoch.Add(time.Duration(i)*time.Millisecond), int64(i)*1250)
		case i >= 1600:
			busy.Note(epoch.Add(time.Duration(i)*time.Millisecond), 1250*(3*int64(i)-2200)/2)
		}
	}
	if _, f, _, held := busy.Goodput(); held != 62500-8250 || f != from {
		t.Errorf("no clean read in the lookback: from %.0f ms, %d bytes held; want the read at 2000 ms and 54250 bytes held", ms(f), held)
	}
}
