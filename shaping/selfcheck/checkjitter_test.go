package selfcheck

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// jitterStream sends n packets gap apart through an emulator pipe (fake clock) with the spec's
// delay, jitter, distribution and order keeping, and returns the arrivals in arrival order.
func jitterStream(t *testing.T, spec string, n int, gap time.Duration, seed int64) []arrival {
	t.Helper()
	s, err := linkspec.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	down, _, err := linkspec.PipeConfigs(s)
	if err != nil {
		t.Fatal(err)
	}
	down.Rate, down.Seed = 0, seed // the line removes the location; no serialization needed
	p := emu.NewPipe(down)
	t0 := time.Unix(1000, 0)
	var got []arrival
	pop := func(until time.Duration, all bool) {
		for {
			due, ok := p.Next()
			if !ok || !all && due > until {
				return
			}
			b, _ := p.Pop(due)
			i := int(binary.BigEndian.Uint32(b))
			got = append(got, arrival{seq: i, sent: t0.Add(time.Duration(i) * gap), recv: t0.Add(due)})
			p.Recycle(b)
		}
	}
	for i := range n {
		now := time.Duration(i) * gap
		pop(now, false)
		b := p.Buffer()[:64]
		binary.BigEndian.PutUint32(b, uint32(i))
		p.Offer(now, b)
	}
	pop(0, true)
	return got
}

// TestJitterLine: the jitter distribution line passes the emulator's own jitter for each of
// netem's distributions, with and without order keeping, over a quick check's 300 and a full
// check's 1000 delays 1 ms apart (five seeds each), and fails a full check's delays judged
// against another distribution (a link that draws from the wrong table), except Pareto against
// paretonormal with the order kept, whose shapes order keeping at 1 ms makes too alike for 1000
// delays at jitter 5 ms; before, the check judged every jitter as uniform, by its range only.
func TestJitterLine(t *testing.T) {
	const base = "rate=10mbit,rtt=40ms,jitter=5ms"
	for _, reorder := range []string{"", ",reorder=true"} {
		for _, d := range emu.JitterDists {
			spec := base + ",jitter_dist=" + d.String() + reorder
			for _, n := range []int{300, 1000} {
				for seed := int64(11); seed < 16; seed++ {
					got := jitterStream(t, spec, n, time.Millisecond, seed)
					for _, judge := range emu.JitterDists {
						if judge != d && (n < 1000 || seed > 11) {
							continue
						}
						c := testChecker(base+",jitter_dist="+judge.String()+reorder, n < 1000)
						c.jitterLine(true, time.Millisecond, got)
						if len(c.res.Lines) != 1 {
							t.Fatalf("lines %+v", c.res.Lines)
						}
						l := c.res.Lines[0]
						alike := reorder == "" && (d == emu.JitterPareto && judge == emu.JitterParetoNormal || d == emu.JitterParetoNormal && judge == emu.JitterPareto)
						if want := judge == d; l.Pass != want && !alike {
							t.Errorf("%s (%d delays, seed %d) judged as %s: %s against %s: pass %v, want %v", spec, n, seed, judge, l.Measured, l.Tolerance, l.Pass, want)
						}
					}
				}
			}
		}
	}
}

// TestJitterLineTooFew: fewer than 50 delays ask for a longer check.
func TestJitterLineTooFew(t *testing.T) {
	c := testChecker("rate=10mbit,rtt=40ms,jitter=5ms,jitter_dist=normal", true)
	c.jitterLine(true, time.Millisecond, jitterStream(t, "rate=10mbit,rtt=40ms,jitter=5ms", 20, time.Millisecond, 1))
	if len(c.res.Lines) != 1 || c.res.Lines[0].Pass {
		t.Fatalf("lines %+v", c.res.Lines)
	}
}

// TestCAKECheckLines: a CAKE link's standing queue is judged against COBALT's 5 ms target
// (bound 2 x 5 ms + 2 ms + 2 MTU times = 20 ms at 3 Mbit/s), and its RTT under load against
// CAKE's memory limit (4 MiB at 3 Mbit/s: 11.18 s), not a queue of 0.
func TestCAKECheckLines(t *testing.T) {
	c := testChecker("rate=3mbit,rtt=50ms,aqm=cake,shaper=netem", false)
	if got := c.qDelay(true); got != 11184810666*time.Nanosecond {
		t.Errorf("qDelay = %v, want 11.18 s", got)
	}
	exp := c.expectedRTT()
	c.aqmLine(true, []time.Duration{exp + 8*time.Millisecond, exp + 9*time.Millisecond, exp + 10*time.Millisecond}, nil)
	c.aqmLine(false, []time.Duration{exp + 25*time.Millisecond, exp + 30*time.Millisecond, exp + 35*time.Millisecond}, nil)
	if len(c.res.Lines) != 2 || c.res.Lines[0].Name != "cake standing queue down (TCP load)" || !c.res.Lines[0].Pass || c.res.Lines[1].Pass {
		t.Fatalf("lines %+v", c.res.Lines)
	}
}
