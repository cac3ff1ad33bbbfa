package emu

import (
	"math"
	"sync"
)

// JitterDist is the distribution of per-packet jitter: netem's four ("delay D J distribution
// uniform|normal|pareto|paretonormal", tc-netem(8)). A non-uniform draw is netem's: J times a
// value picked uniformly from a table of DistTableSize quantiles scaled by DistScale, the
// tables built as iproute2's netem/normal.c, pareto.c and paretonormal.c build them (from NIST
// Net), so that both backends draw from the same discrete distribution.
type JitterDist int

// Jitter distributions.
const (
	// JitterUniform is uniform in [-J, +J] (netem's default, no table).
	JitterUniform JitterDist = iota
	// JitterNormal is the normal distribution N(0, J^2) on netem's grid: from -4 J (the int16
	// cap) to 3.52 J (the quantile at 16380/16384), mean -0.0008 J, sd 1.0001 J.
	JitterNormal
	// JitterPareto is J (X - 1.5) 4/3 for X Pareto with shape 3 and scale 1 (mean 1.5): from
	// -2/3 J up to 4 J (the table's cap), mean -0.033 J, sd 0.820 J (the table's moments).
	JitterPareto
	// JitterParetoNormal is J (N + 3 P)/4 with N and P the normal and Pareto quantiles at the
	// same probability (a sum of quantiles, not a mixture: NIST Net's "paretonormal"): from
	// -1.50 J to 3.88 J, mean -0.025 J, sd 0.834 J.
	JitterParetoNormal
)

// JitterDists lists the distributions in grammar order.
var JitterDists = []JitterDist{JitterUniform, JitterNormal, JitterPareto, JitterParetoNormal}

// String gives the name used in LINK specs and by tc: uniform, normal, pareto or paretonormal.
func (d JitterDist) String() string {
	switch d {
	case JitterNormal:
		return "normal"
	case JitterPareto:
		return "pareto"
	case JitterParetoNormal:
		return "paretonormal"
	}
	return "uniform"
}

// DistScale is netem's NETEM_DIST_SCALE: a table value t stands for t/DistScale jitters.
const DistScale = 8192

// DistTableSize is the number of entries of netem's shipped tables (TABLESIZE 16384 in steps of 4).
const DistTableSize = 4096

const distGrid = 16384 // TABLESIZE of iproute2's generators

var (
	distOnce   sync.Once
	distTables [4][]int16
)

// DistTable returns the table of d (DistTableSize ascending values in units of 1/DistScale
// jitters), nil for JitterUniform. The tables are computed once, as iproute2's generators
// compute them: normal.c inverts the normal CDF by scanning x from -10 to 10 in steps of 5e-5
// and keeping, for each grid point i = rint(16384 Phi(x)), the last x; every fourth point is
// the table, times 8192, rounded, clipped to int16. pareto.c takes u = i/65536 for i = 65536
// down to 16 in steps of 16 and writes (u^(-1/3) - 1.5) 4/3 8192, capped at 32767.
// paretonormal.c writes (normal + 3 pareto)/4 for the same grid point (integer division).
func DistTable(d JitterDist) []int16 {
	if d == JitterUniform {
		return nil
	}
	distOnce.Do(buildDistTables)
	return distTables[d]
}

func buildDistTables() {
	var grid [distGrid + 1]float64
	for x := -10.0; x < 10.05; x += .00005 {
		i := int(math.RoundToEven(distGrid * (.5 + .5*math.Erf(x/math.Sqrt2))))
		grid[i] = x
	}
	clip := func(v int) int16 { return int16(min(max(v, math.MinInt16), math.MaxInt16)) }
	pareto := func(i int) int { // pareto.c's and paretonormal.c's value for u = i/65536
		v := 1.0/math.Pow(float64(i)/65536, 1.0/3) - 1.5
		return int(math.RoundToEven(min(v*(4.0/3.0)*DistScale, 32767)))
	}
	normal, par, pn := make([]int16, 0, DistTableSize), make([]int16, 0, DistTableSize), make([]int16, 0, DistTableSize)
	for i := 0; i < distGrid; i += 4 {
		nv := int(math.RoundToEven(grid[i] * DistScale))
		normal = append(normal, clip(nv))
		pv := pareto(65536 - 4*i)
		par = append(par, clip(pv))
		pn = append(pn, clip((nv+3*pv)/4)) // C's int division truncates towards 0, as Go's
	}
	distTables[JitterNormal], distTables[JitterPareto], distTables[JitterParetoNormal] = normal, par, pn
}

// distJitter scales a table value t by the jitter sigma (ns) exactly as netem's tabledist does
// (net/sched/sch_netem.c): (sigma mod S) t rounded half away from zero over S, plus (sigma / S) t.
func distJitter(sigma, t int64) int64 {
	x := (sigma % DistScale) * t
	if x >= 0 {
		x += DistScale / 2
	} else {
		x -= DistScale / 2
	}
	return x/DistScale + (sigma/DistScale)*t
}

// JitterMoments returns the mean and standard deviation of d in units of the jitter J: the
// uniform's 0 and 1/sqrt(3), or the table's own (each entry equally likely).
func JitterMoments(d JitterDist) (mean, sd float64) {
	tab := DistTable(d)
	if tab == nil {
		return 0, 1 / math.Sqrt(3)
	}
	var s, s2 float64
	for _, t := range tab {
		v := float64(t) / DistScale
		s += v
		s2 += v * v
	}
	n := float64(len(tab))
	mean = s / n
	return mean, math.Sqrt(s2/n - mean*mean)
}

// JitterRange returns the smallest and largest value of d in units of the jitter J: -1 and 1
// for the uniform, the table's ends otherwise.
func JitterRange(d JitterDist) (lo, hi float64) {
	tab := DistTable(d)
	if tab == nil {
		return -1, 1
	}
	return float64(tab[0]) / DistScale, float64(tab[len(tab)-1]) / DistScale
}

// jitterDraw draws one packet's jitter (ns) for jitter j > 0 from the pipe's jitter generator:
// uniform in [-j, j], or netem's table draw.
func (p *Pipe) jitterDraw(j int64) int64 {
	tab := DistTable(p.cfg.JitterDist)
	if tab == nil {
		return p.jit.Int64N(2*j+1) - j
	}
	return distJitter(j, int64(tab[p.jit.IntN(len(tab))]))
}
