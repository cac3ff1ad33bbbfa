package selfcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// A tc-shaped link has no emulator counters of drops outside its model: its faults show in the
// kernel's own qdisc counters (tc -s qdisc). The check reads them around the idle probes and
// over the whole check and judges them against what the spec allows.

// qdiscCounter is a Link on the kernel's qdiscs that reads their counters.
type qdiscCounter interface {
	QdiscStats(ctx context.Context) ([]shaping.QdiscStats, error)
}

// qdiscDelta is what the link's qdiscs did between two readings, summed over both ends.
type qdiscDelta struct {
	// netemDrops are the root netem qdiscs' drops (the spec's random loss; nothing else: their
	// delay line holds netem.DelayLineLimit packets).
	netemDrops int64
	// queueDrops are the drops of the rate limiters and their queues (tbf, pfifo, AQMs).
	queueDrops int64
	// tbfOverlimits counts the packets a tbf held back for tokens.
	tbfOverlimits int64
	// backlog is the packets left in the rate limiters and their queues at the second reading.
	backlog int64
}

// diffQdiscs matches the qdiscs of two readings by device and handle. A qdisc in after but not
// in before (or the reverse) means the tree changed under the check: an error.
func diffQdiscs(before, after []shaping.QdiscStats) (qdiscDelta, error) {
	var d qdiscDelta
	if len(before) != len(after) {
		return d, fmt.Errorf("qdisc counters: %d qdiscs, then %d: the tree changed during the check", len(before), len(after))
	}
	prev := map[string]shaping.QdiscStats{}
	for _, q := range before {
		prev[q.Dev+" "+q.Handle] = q
	}
	// A qdisc's drops include its descendants' (the kernel adds a child's drops to every
	// ancestor: qdisc_tree_reduce_backlog, and a parent counts a child's refused enqueue): its
	// own drops are its count less its direct children's.
	children := map[string]int64{}
	for _, q := range after {
		if i := strings.IndexByte(q.Parent, ':'); i >= 0 {
			p := prev[q.Dev+" "+q.Handle]
			children[q.Dev+" "+q.Parent[:i+1]] += q.Drops - p.Drops
		}
	}
	for _, q := range after {
		p, ok := prev[q.Dev+" "+q.Handle]
		if !ok || p.Kind != q.Kind {
			return d, fmt.Errorf("qdisc counters: %s %s %s appeared during the check", q.Dev, q.Kind, q.Handle)
		}
		own := q.Drops - p.Drops - children[q.Dev+" "+q.Handle]
		if q.Kind == "netem" {
			d.netemDrops += own
			continue
		}
		d.queueDrops += own
		d.backlog += q.Qlen
		if q.Kind == "tbf" {
			d.tbfOverlimits += q.Overlimits - p.Overlimits
		}
	}
	return d, nil
}

// judgeIdleQdiscs judges the qdisc counters over the idle probes, lost of which went
// unanswered (the warm-up pair's included): no rate limiter or queue may drop or hold back an
// isolated probe (a full bucket sends it at once, so no tbf overlimit either) or keep a packet
// once the last probe is answered; netem may drop only on a lossy link, and its drops must be
// exactly the lost probes. The probes are all the link carries then (no ARP, no IPv6: see
// netem.Build), and a lost probe is one drop (its request or its echo), so a probe lost without
// a drop was lost outside the model and a drop without a lost probe was of traffic that should
// not be there.
func judgeIdleQdiscs(d qdiscDelta, lossFree bool, lost int) (pass bool, measured string) {
	measured = fmt.Sprintf("netem drops %d (probes lost %d), queue drops %d, tbf overlimits %d, backlog left %d packets",
		d.netemDrops, lost, d.queueDrops, d.tbfOverlimits, d.backlog)
	pass = d.queueDrops == 0 && d.tbfOverlimits == 0 && d.backlog == 0 && d.netemDrops == int64(lost)
	if lossFree {
		pass = pass && d.netemDrops == 0
	}
	return pass, measured
}

// idleQdiscLine states judgeIdleQdiscs on the check.
func (c *checker) idleQdiscLine(before, after []shaping.QdiscStats, lost int) {
	name := "qdisc counters during the idle probes (tc -s)"
	lossFree := c.lossFree()
	conf := "0 drops, 0 overlimits, 0 backlog"
	if !lossFree {
		conf = "netem drops = lost probes; queues: 0 drops, 0 overlimits, 0 backlog"
	}
	d, err := diffQdiscs(before, after)
	if err != nil {
		c.add(name, conf, err.Error(), "the same tree", false)
		return
	}
	pass, measured := judgeIdleQdiscs(d, lossFree, lost)
	c.add(name, conf, measured, "exactly (an isolated probe is neither queued, held nor dropped outside the spec's loss)", pass)
}

// wholeQdiscLine judges netem's drops over the whole check: on a loss-free link netem never
// drops (its delay line holds netem.DelayLineLimit packets), so any drop there is a fault.
func (c *checker) wholeQdiscLine(before, after []shaping.QdiscStats) {
	name := "netem drops outside the spec (tc -s, whole check)"
	d, err := diffQdiscs(before, after)
	if err != nil {
		c.add(name, "0", err.Error(), "the same tree", false)
		return
	}
	if !c.lossFree() {
		c.add(name, "the spec's loss", fmt.Sprintf("%d netem drops, %d queue drops", d.netemDrops, d.queueDrops),
			"informational (loss configured: judged by the loss lines)", true)
		return
	}
	c.add(name, "0", fmt.Sprintf("%d netem drops (%d queue drops: the model's)", d.netemDrops, d.queueDrops), "0", d.netemDrops == 0)
}

// lossFree reports whether the spec drops nothing at random in either direction.
func (c *checker) lossFree() bool {
	return !slices.ContainsFunc([]linkspec.Impair{c.spec.DownImp, c.spec.UpImp}, func(im linkspec.Impair) bool {
		return im.Loss > 0 || im.GE.Enabled()
	})
}
