package shaping

import (
	"testing"
	"time"
)

func TestBinomialOK(t *testing.T) {
	tests := []struct {
		name string
		k, n int
		p    float64
		want bool
	}{
		{"exact", 10, 1000, 0.01, true},
		{"edge inside", 18, 1000, 0.01, true},
		{"far above", 40, 1000, 0.01, false},
		{"none lost at 5%", 0, 1000, 0.05, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := binomialOK(tt.k, tt.n, tt.p); got != tt.want {
				t.Fatalf("binomialOK(%d, %d, %v) = %v", tt.k, tt.n, tt.p, got)
			}
		})
	}
}

func testChecker(spec string, quick bool) *checker {
	s, err := ParseSpec(spec)
	if err != nil {
		panic(err)
	}
	return &checker{l: noneLink{spec: s}, spec: s, quick: quick}
}

func TestCheckLines(t *testing.T) {
	c := testChecker("carlucci2015", false)
	if got := c.qDelay(true); got != 50*time.Millisecond {
		t.Fatalf("qDelay = %v, want 50ms (18750 B at 3 Mbit/s)", got)
	}
	// Probe of 92 B at 3 Mbit/s: 245.333 us each way.
	if got := c.expectedRTT(); got != 50*time.Millisecond+2*245333*time.Nanosecond {
		t.Fatalf("expectedRTT = %v", got)
	}
	c.goodputLine(true, 2.88e6)  // 99.4% of 2.896: pass
	c.goodputLine(false, 2.60e6) // 89.8%: fail in a full check
	c.loadLine(true, []time.Duration{60 * time.Millisecond, 101 * time.Millisecond})
	c.loadLine(false, []time.Duration{103 * time.Millisecond})
	want := []bool{true, false, true, false}
	for i, line := range c.res.Lines {
		if line.Pass != want[i] {
			t.Errorf("line %q measured %s: pass %v, want %v", line.Name, line.Measured, line.Pass, want[i])
		}
	}
	q := testChecker("carlucci2015", true)
	q.goodputLine(false, 2.60e6) // quick accepts 85%
	if !q.res.Lines[0].Pass {
		t.Errorf("quick goodput 2.6 Mbit/s failed: %+v", q.res.Lines[0])
	}
}
