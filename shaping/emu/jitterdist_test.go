package emu

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// paretoQ is the quantile of netem's Pareto jitter in units of J at probability u (pareto.c:
// ((1-u)^(-1/3) - 1.5) 4/3, capped at 4).
func paretoQ(u float64) float64 { return min((math.Pow(1-u, -1.0/3)-1.5)*4/3, 32767.0/DistScale) }

// distCDF is the distribution function of d in units of J, from its definition (not from the
// table): Phi for normal; 1 - (3y/4 + 1.5)^-3 for Pareto; the inverse of (Qn + 3 Qp)/4 by
// bisection for paretonormal (a sum of increasing quantile functions is increasing).
func distCDF(d JitterDist, y float64) float64 {
	switch d {
	case JitterNormal:
		return .5 + .5*math.Erf(y/math.Sqrt2)
	case JitterPareto:
		if y < -2.0/3 {
			return 0
		}
		return 1 - math.Pow(3*y/4+1.5, -3)
	}
	lo, hi := 0.0, 1.0
	for range 60 {
		m := (lo + hi) / 2
		if (math.Sqrt2*math.Erfinv(2*m-1)+3*paretoQ(m))/4 <= y {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// TestDistTablesMatchIproute2: the tables equal the ones iproute2 ships (tc's lib directory,
// which `tc qdisc ... distribution NAME` reads) entry for entry.
func TestDistTablesMatchIproute2(t *testing.T) {
	var dir string
	for _, d := range []string{"/usr/lib/x86_64-linux-gnu/tc", "/usr/lib/tc", "/usr/lib64/tc"} {
		if _, err := os.Stat(filepath.Join(d, "normal.dist")); err == nil {
			dir = d
		}
	}
	if dir == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("iproute2's netem tables (normal.dist) not found: install iproute2")
		}
		t.Skip("iproute2's netem tables not installed")
	}
	for _, d := range JitterDists[1:] {
		b, err := os.ReadFile(filepath.Join(dir, d.String()+".dist"))
		if err != nil {
			t.Fatal(err)
		}
		var want []int16
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "#") {
				continue
			}
			for _, f := range strings.Fields(line) {
				v, err := strconv.Atoi(f)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, int16(v))
			}
		}
		if got := DistTable(d); !slices.Equal(got, want) {
			t.Errorf("%s: table differs from %s (%d vs %d entries)", d, dir, len(got), len(want))
		}
	}
}

// TestJitterDistSample: per-packet jitter drawn by a pipe (fake clock, seeded, reorder on so
// each packet keeps its own draw) has the distribution it names: the sample's mean and sd
// match the distribution's within 4 standard errors, its quartiles within 0.02 J, and its
// Kolmogorov-Smirnov distance to the CDF, computed from the definition, is below the 99 %
// critical value 1.628/sqrt(n) (Stephens 1974) plus 1/4096 for the table's discreteness.
// The same sample fails the KS test against another distribution (the test can fail).
func TestJitterDistSample(t *testing.T) {
	const n, j = 20000, 10 * time.Millisecond
	for _, d := range JitterDists[1:] {
		p := NewPipe(Config{Delay: 50 * time.Millisecond, Jitter: j, JitterDist: d, Reorder: true, Seed: 7})
		sent := map[string]time.Duration{}
		var ys []float64
		for i := range n {
			now := time.Duration(i) * time.Millisecond
			for {
				due, ok := p.Next()
				if !ok || due > now {
					break
				}
				b, _ := p.Pop(due)
				ys = append(ys, float64(due-sent[string(b)]-50*time.Millisecond)/float64(j))
				p.Recycle(b)
			}
			b := p.Buffer()[:8]
			copy(b, strconv.Itoa(i))
			sent[string(b)] = now
			p.Offer(now, b)
		}
		for {
			due, ok := p.Next()
			if !ok {
				break
			}
			b, _ := p.Pop(due)
			ys = append(ys, float64(due-sent[string(b)]-50*time.Millisecond)/float64(j))
		}
		if len(ys) != n {
			t.Fatalf("%s: %d delays of %d packets", d, len(ys), n)
		}
		var s, s2 float64
		for _, y := range ys {
			s += y
			s2 += y * y
		}
		mean := s / n
		sd := math.Sqrt(s2/n - mean*mean)
		wm, wsd := JitterMoments(d)
		if math.Abs(mean-wm) > 4*wsd/math.Sqrt(n) || math.Abs(sd-wsd) > 4*wsd/math.Sqrt(2*n)+0.005 {
			t.Errorf("%s: mean %.4f sd %.4f, want %.4f %.4f", d, mean, sd, wm, wsd)
		}
		slices.Sort(ys)
		for _, u := range []float64{0.25, 0.5, 0.75} {
			lo, hi := -10.0, 10.0 // the quantile from the CDF
			for range 60 {
				if m := (lo + hi) / 2; distCDF(d, m) < u {
					lo = m
				} else {
					hi = m
				}
			}
			if got := ys[int(u*n)]; math.Abs(got-lo) > 0.02 {
				t.Errorf("%s: quantile %.2f = %.4f, want %.4f", d, u, got, lo)
			}
		}
		ks := func(cdf func(float64) float64) float64 {
			dist := 0.0
			for i, y := range ys {
				f := cdf(y)
				dist = math.Max(dist, math.Max(float64(i+1)/n-f, f-float64(i)/n))
			}
			return dist
		}
		crit := 1.628/math.Sqrt(n) + 1.0/DistTableSize
		if got := ks(func(y float64) float64 { return distCDF(d, y) }); got > crit {
			t.Errorf("%s: KS distance %.4f > %.4f", d, got, crit)
		}
		other := JitterNormal
		if d == JitterNormal {
			other = JitterPareto
		}
		if got := ks(func(y float64) float64 { return distCDF(other, y) }); got <= crit {
			t.Errorf("%s judged as %s: KS distance %.4f <= %.4f: the test cannot fail", d, other, got, crit)
		}
	}
}

// TestDistJitter: netem's tabledist arithmetic (sigma mod 8192 part rounded half away from
// zero), checked on hand-computed values.
func TestDistJitter(t *testing.T) {
	for _, c := range []struct{ sigma, t, want int64 }{
		{10_000_000, 8192, 10_000_000},   // one sd
		{10_000_000, -8192, -10_000_000}, // minus one sd
		{10_000_000, 4096, 5_000_000},    // half
		{8193, 1, 1},                     // (1*1 + 4096)/8192 = 0, + 1*1
		{12288, 1, 2},                    // (4096 + 4096)/8192 = 1, + 1
		{12288, -1, -2},                  // (-4096 - 4096)/8192 = -1, - 1
		{5_000_000, 32767, 19_999_390},   // (2880*32767 + 4096)/8192 = 11520, + 610*32767
	} {
		if got := distJitter(c.sigma, c.t); got != c.want {
			t.Errorf("distJitter(%d, %d) = %d, want %d", c.sigma, c.t, got, c.want)
		}
	}
}
