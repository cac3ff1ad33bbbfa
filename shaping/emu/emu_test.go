package emu

import (
	"math"
	"testing"
	"time"
)

const ms1 = time.Millisecond

// offer hands a packet of size bytes to p at now.
func offer(p *Pipe, now time.Duration, size int) Verdict {
	b := p.Buffer()[:size]
	b[0] = byte(size)
	return p.Offer(now, b)
}

// drainAll pops every packet in order, advancing a fake clock to each due time exactly.
func drainAll(p *Pipe) []time.Duration {
	var out []time.Duration
	for {
		due, ok := p.Next()
		if !ok {
			return out
		}
		b, ok := p.Pop(due)
		if !ok {
			panic("due packet not popped")
		}
		p.Recycle(b)
		out = append(out, due)
	}
}

func TestDepartureTimes(t *testing.T) {
	// 3 Mbit/s: 1500 B take 4 ms, 750 B 2 ms; one-way delay 25 ms.
	p := NewPipe(Config{Rate: 3e6, Delay: 25 * ms1})
	offer(p, 0, 1500)        // starts 0, finishes 4
	offer(p, 1*ms1, 1500)    // queued: 4..8
	offer(p, 2*ms1, 750)     // 8..10
	offer(p, 50*ms1, 1500)   // idle again: 50..54
	offer(p, 50*ms1+1, 1500) // 54..58
	want := []time.Duration{29 * ms1, 33 * ms1, 35 * ms1, 79 * ms1, 83 * ms1}
	got := drainAll(p)
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("packet %d delivered at %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
	d := p.Take()
	if d.PacketsIn != 5 || d.PacketsOut != 5 || d.BytesOut != 6750 || d.DropsQueue+d.DropsLoss+d.DropsOther != 0 {
		t.Fatalf("counters %+v", d)
	}
	// Queue delays: 0, 3, 6, 0, 4-1ns ms: max 6 ms.
	if d.QueueDelayMax != 6*ms1 || d.TimingErrMax != 0 {
		t.Fatalf("queue delay max %v, timing err max %v", d.QueueDelayMax, d.TimingErrMax)
	}
}

func TestAbsoluteTimelineNoDrift(t *testing.T) {
	// 1000 back-to-back 1000-byte packets at 3 Mbit/s (8/3 ms each, not a whole number of ns):
	// the last one must finish at exactly 1000*8000/3e6 s = 2.666...s, rounded down.
	p := NewPipe(Config{Rate: 3e6})
	for i := 0; i < 1000; i++ {
		offer(p, 0, 1000)
	}
	got := drainAll(p)
	want := time.Duration(int64(1000*8000) * int64(time.Second) / 3e6)
	if got[len(got)-1] != want {
		t.Fatalf("last departure %v, want %v", got[len(got)-1], want)
	}
}

func TestLateCallerKeepsTimeline(t *testing.T) {
	// The caller pops late (1 ms after each due time): departures stay on the timeline and the
	// lateness is reported as timing error, not lost link time.
	p := NewPipe(Config{Rate: 3e6})
	for i := 0; i < 10; i++ {
		offer(p, 0, 1500)
	}
	var last time.Duration
	for p.Len() > 0 {
		due, _ := p.Next()
		b, _ := p.Pop(due + ms1)
		p.Recycle(b)
		last = due
	}
	if last != 40*ms1 {
		t.Fatalf("10th packet due %v, want 40ms", last)
	}
	if d := p.Take(); d.TimingErrP50 != ms1 || d.TimingErrMax != ms1 {
		t.Fatalf("timing error p50 %v max %v, want 1 ms", d.TimingErrP50, d.TimingErrMax)
	}
}

func TestDroptailBytes(t *testing.T) {
	// Limit 3000 B: two 1500 B packets fit (including the one being serialized), a third does not,
	// a 1 B packet neither; once the first finished (4 ms), one more 1500 B fits.
	p := NewPipe(Config{Rate: 3e6, QueueBytes: 3000})
	for i, tc := range []struct {
		at   time.Duration
		size int
		want Verdict
	}{
		{0, 1500, Queued}, {0, 1500, Queued}, {0, 1, DroppedFull}, {4*ms1 - 1, 1500, DroppedFull},
		{4 * ms1, 1500, Queued}, {4 * ms1, 1, DroppedFull},
	} {
		if got := offer(p, tc.at, tc.size); got != tc.want {
			t.Fatalf("offer %d (%d B at %v) = %v, want %v", i, tc.size, tc.at, got, tc.want)
		}
	}
	if d := p.Take(); d.DropsQueue != 3 || d.PacketsIn != 6 {
		t.Fatalf("counters %+v", d)
	}
}

func TestDroptailPackets(t *testing.T) {
	p := NewPipe(Config{Rate: 1e6, QueuePackets: 2})
	got := []Verdict{offer(p, 0, 100), offer(p, 0, 100), offer(p, 0, 100)}
	if got[0] != Queued || got[1] != Queued || got[2] != DroppedFull {
		t.Fatalf("verdicts %v", got)
	}
}

func TestLossRate(t *testing.T) {
	// Seeded Bernoulli: the drop count must lie in the binomial 99% interval
	// n*p +- 2.576*sqrt(n*p*(1-p)).
	const n, prob = 100000, 0.02
	p := NewPipe(Config{Loss: prob, Seed: 42})
	for i := 0; i < n; i++ {
		offer(p, time.Duration(i), 100)
		for b, ok := p.Pop(time.Duration(i)); ok; b, ok = p.Pop(time.Duration(i)) {
			p.Recycle(b)
		}
	}
	d := p.Take()
	mean, sd := n*prob, math.Sqrt(n*prob*(1-prob))
	if math.Abs(float64(d.DropsLoss)-mean) > 2.576*sd {
		t.Fatalf("drops %d, want %v +- %v", d.DropsLoss, mean, 2.576*sd)
	}
	if d.PacketsOut+d.DropsLoss != n {
		t.Fatalf("packets out %d + lost %d != %d", d.PacketsOut, d.DropsLoss, n)
	}
}

func TestJitterKeepsOrder(t *testing.T) {
	p := NewPipe(Config{Delay: 10 * ms1, Jitter: 5 * ms1, Seed: 1})
	for i := 0; i < 1000; i++ {
		b := p.Buffer()[:2]
		b[0], b[1] = byte(i>>8), byte(i)
		p.Offer(time.Duration(i)*100*time.Microsecond, b)
	}
	prev := -1
	var lastDue time.Duration
	for p.Len() > 0 {
		due, _ := p.Next()
		b, _ := p.Pop(due)
		i := int(b[0])<<8 | int(b[1])
		if i != prev+1 || due < lastDue {
			t.Fatalf("packet %d after %d (due %v after %v)", i, prev, due, lastDue)
		}
		prev, lastDue = i, due
		p.Recycle(b)
	}
}

func TestJitterReorders(t *testing.T) {
	p := NewPipe(Config{Delay: 10 * ms1, Jitter: 5 * ms1, Reorder: true, Seed: 1})
	for i := 0; i < 1000; i++ {
		b := p.Buffer()[:2]
		b[0], b[1] = byte(i>>8), byte(i)
		p.Offer(time.Duration(i)*100*time.Microsecond, b)
	}
	reordered, prev := 0, -1
	var lastDue time.Duration
	for p.Len() > 0 {
		due, _ := p.Next()
		b, _ := p.Pop(due)
		if due < lastDue {
			t.Fatalf("heap out of order: %v after %v", due, lastDue)
		}
		if i := int(b[0])<<8 | int(b[1]); i < prev {
			reordered++
		} else {
			prev = i
		}
		lastDue = due
		p.Recycle(b)
	}
	if reordered == 0 {
		t.Fatal("reorder=true with 5 ms jitter at 0.1 ms spacing reordered nothing")
	}
}

func TestHistQuantiles(t *testing.T) {
	var h hist
	for i := int64(1); i <= 1000; i++ {
		h.record(i * 1000) // 1..1000 us
	}
	for _, tc := range []struct {
		q    float64
		want int64
	}{{0.5, 500000}, {0.99, 990000}, {1, 1000000}} {
		got := h.quantile(tc.q)
		if math.Abs(float64(got-tc.want)) > 0.016*float64(tc.want) {
			t.Errorf("quantile(%v) = %d, want %d +-1.6%%", tc.q, got, tc.want)
		}
	}
}

func TestNoAllocSteadyState(t *testing.T) {
	p := NewPipe(Config{Rate: 1e9, Delay: 25 * ms1, QueueBytes: 1 << 20, BufSize: 1500})
	now := time.Duration(0)
	step := func() {
		now += 12 * time.Microsecond
		offer(p, now, 1500)
		for b, ok := p.Pop(now); ok; b, ok = p.Pop(now) {
			p.Recycle(b)
		}
	}
	for i := 0; i < 10000; i++ {
		step()
	}
	if a := testing.AllocsPerRun(1000, step); a != 0 {
		t.Fatalf("%v allocations per packet in steady state", a)
	}
}

func BenchmarkPipe(b *testing.B) {
	p := NewPipe(Config{Rate: 1e9, Delay: 25 * ms1, QueueBytes: 1 << 20, BufSize: 1500})
	now := time.Duration(0)
	b.SetBytes(1500)
	for i := 0; i < b.N; i++ {
		now += 12 * time.Microsecond
		offer(p, now, 1500)
		for pkt, ok := p.Pop(now); ok; pkt, ok = p.Pop(now) {
			p.Recycle(pkt)
		}
	}
}
