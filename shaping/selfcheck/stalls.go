package selfcheck

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
)

// The rules that keep one host stall from refusing a link (docs/design.md, "Host stalls"). A
// stall is a run of releases later than the lateness bound that one stop of the emulator's
// thread made (emu.Counters.Stalls). A link check judges the emulator's systematic fidelity on
// statistics a stall cannot move, and the stalls on a line of their own:
//   - the RTT lines leave out the probes whose flight overlapped a recorded stall
//     (outsideStalls), at most half of them, and say how many;
//   - the lateness line judges the share of releases made in stalls (SystematicLateShareMax):
//     an emulator that cannot keep up with the link makes most of its releases late, a host that
//     stops it now and then a few;
//   - the host-stall line judges how many planned loads the stalls would make late
//     (result.HostStallsLateShareMax), at the lower confidence bound of their rate, so it
//     refuses a host too noisy to finish a plan and never one stall.
// Each load is still valid only when its own lateness is within the bound (made once more when
// it is not), so no late release is ever part of a valid measurement.

// SystematicLateShareMax is the largest share of a check's releases (0..1) that may be later
// than the lateness bound. One 30 ms stall at 100 Mbit/s makes about 250 of a full check's
// 100 000 releases late (0.25 %), at 3 Mbit/s about 8 of a quick check's 1 500 (0.5 %); an
// emulator that cannot keep up with its link makes most of them late.
const SystematicLateShareMax = 0.02

// DefaultLoadSpan is the load duration the host-stall line assumes when the caller does not
// give one (Options.LoadSpan): 3 s, longer than a carlucci2015 load (about 1.5 s with the
// browser context's set-up) and than the smoke scales' loads.
const DefaultLoadSpan = 3 * time.Second

// maxLeftOutShare is the largest share of a line's probes outsideStalls leaves out: when more
// of them overlapped stalls, the stalls are the link's behaviour and every probe is judged.
const maxLeftOutShare = 0.5

// outsideStalls returns the RTTs of the probes whose flight (sent to sent+RTT) overlapped no
// stall the check recorded, and how many it left out; when that would be more than half of
// them, it keeps them all (left = 0).
func (c *checker) outsideStalls(probes []timedRTT) (kept []time.Duration, left int) {
	kept = make([]time.Duration, 0, len(probes))
	for _, p := range probes {
		if overlapsStall(c.acc.spans, p.At, p.At.Add(p.RTT)) {
			left++
			continue
		}
		kept = append(kept, p.RTT)
	}
	if left == 0 || float64(left) > maxLeftOutShare*float64(len(probes)) {
		return rttsOf(probes), 0
	}
	c.acc.leftOut += left
	return kept, left
}

// arrivalsOutsideStalls returns the arrivals of a sequenced stream whose flight (sent to
// received) overlapped no stall the check recorded, and how many it left out; when that would
// be more than half of them, it keeps them all (left = 0). A stall holds the packets in flight
// through it by its length, which is the host's doing, not the link model's: the delay,
// reordering and jitter lines judge the model on the others, as the RTT lines do.
func (c *checker) arrivalsOutsideStalls(got []arrival) (kept []arrival, left int) {
	kept = make([]arrival, 0, len(got))
	for _, a := range got {
		if overlapsStall(c.acc.spans, a.sent, a.recv) {
			left++
			continue
		}
		kept = append(kept, a)
	}
	if left == 0 || float64(left) > maxLeftOutShare*float64(len(got)) {
		return got, 0
	}
	c.acc.leftOut += left
	return kept, left
}

// overlapsStall reports whether [from, to] overlaps any of spans.
func overlapsStall(spans []result.StallSpan, from, to time.Time) bool {
	return slices.ContainsFunc(spans, func(s result.StallSpan) bool { return s.From.Before(to) && s.To.After(from) })
}

// leftOutNote is the measured value's note for left probes of left+kept left out, "" when none.
func leftOutNote(left, kept int) string { return leftOutNoteOf(left, kept, "probes") }

// leftOutNoteOf is leftOutNote for what (probes, packets).
func leftOutNoteOf(left, kept int, what string) string {
	if left == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of %d %s left out: in flight during an emulator stall, judged on the host-stall line)", left, left+kept, what)
}

// latenessLine judges the emulator's systematic lateness: the share of the check's releases
// later than shaping.LatenessBound (those in stalls) must be at most SystematicLateShareMax.
// The largest lateness is stated, and the host-stall line judges the stalls themselves.
func (c *checker) latenessLine() {
	share := 0.0
	if c.acc.released > 0 {
		share = float64(c.acc.stalled) / float64(c.acc.released)
	}
	measured := fmt.Sprintf("%d of %d releases (%.2f %%) later than %s; largest %.2f ms",
		c.acc.stalled, c.acc.released, 100*share, quantity.FormatMsUnit(quantity.Ms(shaping.LatenessBound), 2), c.acc.rawMax)
	c.add("emulator release lateness (share late)", "0", measured,
		fmt.Sprintf("<= %.0f %% of releases later than the lateness bound", 100*SystematicLateShareMax),
		share <= SystematicLateShareMax)
}

// hostStallsLine states the check's stalls and judges them. A stall makes a load late when its
// lateness, less what host freezes explain (as a load's is: result.StallSpan.OwnLateMs), still
// exceeds the bound; those are the Own stalls, and all of them when the guest reclaimed memory
// during the check (reclaimPages: then a stopped CPU may be the guest's own work, and no freeze
// is trusted). With k Own stalls in the check's window T, the rate's one-sided 95 % lower bound
// is poissonLower(k)/T, and the share of planned loads of span L it would make late is
// 1 - exp(-rate L); the line fails when that share exceeds result.HostStallsLateShareMax. One
// stall in a 3 s check gives a lower bound of 0.051 per 3 s, 5 % of 3 s loads: never a refusal.
// The finding is also recorded (result.LinkCheck.HostStalls).
func (c *checker) hostStallsLine() {
	window, span := time.Since(c.start), cmpOr(c.loadSpan, DefaultLoadSpan)
	reclaim := reclaimPages() - c.reclaimStart
	if c.reclaimStart < 0 {
		reclaim = 0
	}
	own := ownStalls(c.acc.stalls, c.acc.spans, reclaim > 0)
	f := hostStalls(own, window, span)
	f.Stalls, f.Own, f.ReclaimPages = c.acc.stalls, own, reclaim
	f.PerMinute = float64(c.acc.stalls) / max(window.Minutes(), 1e-9)
	f.Releases, f.ReleasesTotal, f.LongestMs, f.LongestOwnMs, f.ProbesLeftOut = c.acc.stalled, c.acc.released, c.acc.rawMax, c.acc.lateMax, c.acc.leftOut
	c.watched(&f, c.start, c.start.Add(window))
	c.res.HostStalls = &f
	measured := fmt.Sprintf("%d stalls over %s in %.1f s (%.1f per minute), %d beyond host freezes (>= %.1f per minute at 95 %%): %.1f %% of %s loads late (>= %.1f %%)",
		f.Stalls, quantity.FormatMsUnit(quantity.Ms(shaping.LatenessBound), 2), f.WindowS, f.PerMinute, f.Own, f.PerMinuteLo, 100*f.LateShare, span, 100*f.LateShareLo)
	if reclaim > 0 {
		measured += fmt.Sprintf("; the guest reclaimed memory (%d pages scanned): no freeze trusted", reclaim)
	}
	if f.Watched {
		measured += fmt.Sprintf("; %d of %d listed seen by the host's watchers too (their longest stop %.2f ms)", f.SeenByHost, len(c.acc.spans), f.FloorMs)
	}
	c.add("host stalls (emulator late beyond the bound)", "none", measured,
		fmt.Sprintf("loads made late <= %.0f %% at the rate's 95 %% lower bound (each late load is made again)", 100*result.HostStallsLateShareMax),
		f.LateShareLo <= result.HostStallsLateShareMax)
}

// ownStalls counts the stalls of total that would make a load late: the listed spans whose
// lateness less host freezes exceeds the bound, every stall not listed, and every stall when
// noFreezes (the guest reclaimed memory).
func ownStalls(total int64, spans []result.StallSpan, noFreezes bool) int64 {
	if noFreezes {
		return total
	}
	own := total - int64(len(spans))
	for _, s := range spans {
		if s.OwnLateMs > quantity.Ms(shaping.LatenessBound) {
			own++
		}
	}
	return max(own, 0)
}

// watched fills f's Watched, SeenByHost and FloorMs from the freezes the idle-poll spinners and
// watchers reported between from and to (idlepoll.Freezes), when they ran.
func (c *checker) watched(f *result.HostStalls, from, to time.Time) {
	if idlepoll.Active() == 0 {
		return
	}
	f.Watched = true
	seen, floor := stallsSeen(c.acc.spans, idlepoll.Freezes(from, to))
	f.SeenByHost, f.FloorMs = seen, quantity.Ms(floor)
}

// stallsSeen counts the stalls of spans that overlap a freeze of freezes that a watcher
// reported (a CPU stop an independent SCHED_FIFO thread saw; spinners' reports are not
// trusted, idlepoll.Freeze.Spinner), and returns the longest such freeze (its Stolen).
func stallsSeen(spans []result.StallSpan, all []idlepoll.Freeze) (seen int, floor time.Duration) {
	var freezes []idlepoll.Freeze
	for _, fr := range all {
		if !fr.Spinner {
			freezes = append(freezes, fr)
			floor = max(floor, fr.Stolen)
		}
	}
	for _, s := range spans {
		if slices.ContainsFunc(freezes, func(fr idlepoll.Freeze) bool { return fr.Start.Before(s.To) && fr.End.After(s.From) }) {
			seen++
		}
	}
	return seen, floor
}

// hostStalls is the finding of k stalls that make loads late over window, for loads of span
// (rates per minute, shares 0..1; see hostStallsLine).
func hostStalls(k int64, window, span time.Duration) result.HostStalls {
	f := result.HostStalls{Stalls: k, Own: k, WindowS: window.Seconds(), LoadSpanS: span.Seconds()}
	if window <= 0 {
		return f
	}
	perLoad := span.Seconds() / window.Seconds()
	f.PerMinute = float64(k) / window.Minutes()
	f.PerMinuteLo = poissonLower(k) / window.Minutes()
	f.LateShare = 1 - math.Exp(-float64(k)*perLoad)
	f.LateShareLo = 1 - math.Exp(-poissonLower(k)*perLoad)
	return f
}

// poissonLower is the one-sided 95 % lower confidence bound of a Poisson mean from k observed
// events (Garwood 1936): the mean m with P(X >= k | m) = 0.05, 0 for k = 0. Found by
// bisection on the Poisson tail (equal to half the chi-square 0.05 quantile at 2k degrees of
// freedom: 0.0513 for k = 1, 0.355 for 2, 0.818 for 3, 1.366 for 4).
func poissonLower(k int64) float64 {
	if k <= 0 {
		return 0
	}
	// tailAtLeast is P(X >= k) for X ~ Poisson(m): 1 - sum_{i<k} e^-m m^i / i!.
	tailAtLeast := func(m float64) float64 {
		term, sum := math.Exp(-m), 0.0
		for i := int64(0); i < k; i++ {
			sum += term
			term *= m / float64(i+1)
		}
		return 1 - sum
	}
	lo, hi := 0.0, float64(k)
	for range 100 {
		mid := (lo + hi) / 2
		if tailAtLeast(mid) < 0.05 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// reclaimFields are the /proc/vmstat counters of the guest's own memory reclaim and compaction.
var reclaimFields = []string{"pgscan_kswapd", "pgscan_direct", "compact_stall", "allocstall_dma", "allocstall_dma32", "allocstall_normal", "allocstall_movable"}

// reclaimPages is the sum of reclaimFields in /proc/vmstat (pages scanned, stalls counted), -1
// when it cannot be read (another OS).
func reclaimPages() int64 {
	b, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		return -1
	}
	var sum int64
	for _, line := range strings.Split(string(b), "\n") {
		name, val, ok := strings.Cut(line, " ")
		if !ok || !slices.Contains(reclaimFields, name) {
			continue
		}
		if v, err := strconv.ParseInt(val, 10, 64); err == nil {
			sum += v
		}
	}
	return sum
}
