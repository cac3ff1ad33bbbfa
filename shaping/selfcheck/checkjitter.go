package selfcheck

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/shaping/emu"
)

// jitterModelSize is the number of simulated one-way delays the jitter line compares with.
const jitterModelSize = 20000

// jitterJudged reports whether a direction's per-packet jitter gets a distribution line: jitter
// without delay variation, reordering holds, a trace or outages (which would mix other
// delays into the one-way delays).
func (c *checker) jitterJudged(down bool) bool {
	im := c.imp(down)
	return c.spec.Jitter > 0 && im.DelayVar == 0 && im.ReorderProb == 0 && im.Trace == "" && c.spec.Outage.Off == 0
}

// jitterModel simulates n one-way delays of a stream gap apart through the link's jitter
// (seeded, so the line is reproducible): each packet draws base + its jitter from the spec's
// distribution (uniform in +-J, or J times an entry of netem's table), floored at 0; unless
// reorder=true a packet also leaves no earlier than its predecessor, D_i = max(X_i, D_{i-1} -
// gap), as the emulator (its order keeping) and netem (its rate reference point) do.
func jitterModel(dist emu.JitterDist, j, base, gap time.Duration, reorder bool, n int) []float64 {
	rng := rand.New(rand.NewPCG(1, 0x6a697474))
	tab := emu.DistTable(dist)
	out := make([]float64, n)
	prev := math.Inf(-1)
	for i := range out {
		var x float64
		if tab == nil {
			x = float64(base) + float64(j)*(2*rng.Float64()-1)
		} else {
			x = float64(base) + float64(j)*float64(tab[rng.IntN(len(tab))])/emu.DistScale
		}
		x = max(x, 0)
		if !reorder {
			x = max(x, prev-float64(gap))
		}
		prev = x
		out[i] = x
	}
	return out
}

// quantile is the u-quantile of sorted x (the order statistic at rank floor(u (n-1)), u clamped to [0, 1]).
func quantile(x []float64, u float64) float64 {
	u = min(max(u, 0), 1)
	return x[int(u*float64(len(x)-1))]
}

// jitterQuantiles are the probabilities at which the jitter line compares quantiles.
var jitterQuantiles = []float64{0.1, 0.25, 0.75, 0.9}

// jitterZ is the normal quantile of a two-sided 99 % interval shared by the four quantiles and
// the median (Bonferroni over 8 one-sided bounds: 1 - 0.01/8 = 0.99875).
const jitterZ = 3.023

// jitterLine judges the shape of a direction's per-packet jitter by the one-way delays of its
// sequenced stream: each of the delays' 10th, 25th, 75th and 90th percentiles less their
// median must lie where the link model puts it (jitterModel), within the sampling error of
// order statistics (the ranks u +- z sqrt(u (1-u)/n) of the model, for the quantile and for the
// median, z = 3.023: 99 % over all, Bonferroni) plus the measurement's timing noise (0.5 ms,
// plus the emulator's recorded release lateness during the stream capped at shaping.LatenessBound, plus the host overhead
// measured on a tc link), by which noise can move a quantile. Taking the median off removes the
// delay's location (the idle RTT lines judge it), so the line judges the spread and skew that
// tell uniform, normal, Pareto and paretonormal jitter apart: a link drawing from another
// distribution than configured fails. Fewer than 50 delays fail: the check asks for a longer stream.
func (c *checker) jitterLine(down bool, gap time.Duration, got []arrival) {
	if !c.jitterJudged(down) {
		return
	}
	j, dist := c.spec.Jitter, c.spec.JitterDist
	name := "jitter distribution " + dirName(down) + " (one-way delays)"
	conf := fmt.Sprintf("%s +-%s", dist, quantity.FormatMsUnit(quantity.Ms(j), 2))
	if dist != emu.JitterUniform {
		lo, hi := emu.JitterRange(dist)
		conf = fmt.Sprintf("%s, sd %s (%s..%s)", dist, quantity.FormatMsUnit(quantity.Ms(time.Duration(float64(j)*jitterSD(dist))), 2), quantity.FormatMsUnit(quantity.Ms(time.Duration(lo*float64(j))), 2), quantity.FormatMsUnit(quantity.Ms(time.Duration(hi*float64(j))), 2))
	}
	if !c.spec.Reorder {
		conf += ", order kept"
	}
	if len(got) < 50 {
		c.add(name, conf, fmt.Sprintf("%d delays", len(got)), "sample too small: need 50 delays: run a longer check", false)
		return
	}
	meas := make([]float64, len(got))
	for i, a := range got {
		meas[i] = float64(a.recv.Sub(a.sent))
	}
	slices.Sort(meas)
	model := jitterModel(dist, j, c.spec.RTT/2, gap, c.spec.Reorder, jitterModelSize)
	slices.Sort(model)
	allow := lateAllowance(c.streamLate)
	noise := float64(500*time.Microsecond + allow + c.overhead)
	n := float64(len(meas))
	e := func(u float64) float64 { return jitterZ * math.Sqrt(u*(1-u)/n) }
	med, eMed := quantile(meas, 0.5), e(0.5)
	ok := true
	var got4, want4 []string
	for _, u := range jitterQuantiles {
		q := quantile(meas, u) - med
		lo := quantile(model, u-e(u)) - quantile(model, 0.5+eMed) - noise
		hi := quantile(model, u+e(u)) - quantile(model, 0.5-eMed) + noise
		ok = ok && q >= lo && q <= hi
		got4 = append(got4, fmt.Sprintf("%+.2f", q/1e6))
		want4 = append(want4, fmt.Sprintf("%+.2f..%+.2f", lo/1e6, hi/1e6))
	}
	c.addAllowed(name, conf, fmt.Sprintf("p10, p25, p75, p90 less the median %s ms (%d delays)", strings.Join(got4, ", "), len(meas)),
		fmt.Sprintf("%s ms (99%%, incl. timing noise %s, of which emulator lateness %s)", strings.Join(want4, ", "), quantity.FormatMsUnit(quantity.Ms(time.Duration(noise)), 2), quantity.FormatMsUnit(quantity.Ms(allow), 2)), ok, allow)
}

// jitterSD is the standard deviation of dist in units of the jitter.
func jitterSD(dist emu.JitterDist) float64 {
	_, sd := emu.JitterMoments(dist)
	return sd
}
