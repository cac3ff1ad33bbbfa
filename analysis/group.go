package analysis

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

// Key identifies a group: loads of one page over one link in one mode with one protocol.
type Key struct {
	// Page is the page (Record.PageLabel: the spec, and for a replayed archive its digest).
	Page string
	// Link is the link (Record.Link.Label: the spec, and the digests of the trace files it read).
	Link string
	// Mode is cold or warm; the two are never mixed in one statistic.
	Mode result.Mode
	// Protocol is the requested protocol, a protocol.Table name ("h1", "h2", "h3").
	Protocol string
	// Settings names every setting that changes the measurement and that the loads of the group
	// shared: "tcp_cc cubic, TLS 1.2, Chromium/156.0.1, pltlab v1" (see settingsOf). Loads made
	// with different settings are never pooled or compared. Every record field the key reads is
	// one that package result classes as a setting (result.RoleSetting, result.FieldRole).
	Settings string
}

// condition returns the key without the protocol: the (page, link, mode) a comparison is made in.
func (k Key) condition() Key { k.Protocol = ""; return k }

// Group summarises the loads of one Key. Times are in ms of the report's metric. A censored
// statistic (one that falls among timed-out loads) is +Inf (Censored): print it as ">= DeadlineMs".
type Group struct {
	Key
	// LinkInfo is the link description of the group's first load (rates and RTT for the heatmap).
	LinkInfo result.Link
	// Runs counts every non-warm-up load of the group: Valid + TimedOut + NetFailed +
	// EmulatorLate + invalid (a load made again counts once, by its last attempt).
	Runs int
	// Valid counts valid completed loads (their metric is in Completed).
	Valid int
	// TimedOut counts loads that hit their deadline (censored values). For metrics other than
	// plt_ms, a timed-out load that did report the metric (> 0) counts as completed instead.
	TimedOut int
	// NetFailed counts loads the network made fail before the deadline (result.NetworkError:
	// handshake timeouts, reset connections, QUIC protocol errors): failed measurements of the
	// protocol, censored at the deadline like timeouts. NetErrors counts them by net error.
	NetFailed int
	NetErrors map[string]int
	// EmulatorLate counts the loads during which the emulator released a packet later than its
	// lateness bound (result.OutcomeEmulatorLate): measurements of another link, excluded.
	EmulatorLate int
	// Redone counts the loads made again because the emulator was late in their first attempt
	// (result.Record.EarlierAttempts); the earlier attempts are in no statistic.
	Redone int
	// Lateness holds, ascending, each attempt's largest release lateness in ms (the larger
	// direction's, result.Emulator.LateMs; earlier attempts included) for the loads made
	// through the emulator; LateP50Ms and LateMaxMs are its median and maximum (NaN when no
	// load carries emulator counters).
	Lateness             []float64
	LateP50Ms, LateMaxMs float64
	// Lost counts the scheduled non-warm-up loads of the group the harness could not make
	// (harness_error lines): not measurements, but never silently dropped.
	Lost int
	// Invalid counts the remaining loads by InvalidReason; they are excluded from statistics.
	Invalid map[string]int
	// DeadlineMs is the smallest deadline among the timed-out loads (0 when none timed out).
	DeadlineMs float64
	// Sample is the ascending sample used for quantiles: Completed then one Censored per timeout.
	Sample []float64
	// Completed holds the metric of the valid completed loads, ascending.
	Completed []float64
	// Median, P5, P25, P75, P95, Min and Max are Hyndman-Fan type 7 quantiles of Sample.
	Median, P5, P25, P75, P95, Min, Max float64
	// CILow and CIHigh bound the 95% order-statistic CI of the median (NaN when n < 6);
	// CICoverage is its exact coverage probability.
	CILow, CIHigh, CICoverage float64
	// Mean, SD and CV (= SD/Mean) describe Completed only (timeouts excluded).
	Mean, SD, CV float64
	// Experiments names the experiments whose loads the group holds, in the order read: more
	// than one when runs with matching settings were pooled.
	Experiments []string
	// MedianLoad is the valid completed load whose metric is nearest the median (the first
	// such load on ties): the load the HTML report draws as a waterfall. nil when none.
	MedianLoad *result.Record

	valid  []*result.Record // the valid completed loads, for MedianLoad
	loads  []*result.Record // every load of the group in input order (Loads)
	metric Metric
}

// InvalidTotal returns the number of invalid (non-timeout) loads.
func (g *Group) InvalidTotal() int {
	n := 0
	for _, c := range g.Invalid {
		n += c
	}
	return n
}

// Reasons returns the invalid reasons sorted by name.
func (g *Group) Reasons() []string { return slices.Sorted(maps.Keys(g.Invalid)) }

// groupRecords builds the groups of the page loads (and harness_error lines) in recs for
// metric m, sorted by key.
func groupRecords(recs []*result.Record, m Metric) []*Group {
	byKey := map[Key]*Group{}
	settings := newSettingsIndex(recs)
	made := madeLoads(recs)
	labels := pageLabels(recs)
	for _, r := range recs {
		if r == nil || r.Warmup || (!r.IsLoad() && r.Kind != result.KindHarnessError) {
			continue
		}
		if r.Kind == result.KindHarnessError && superseded(made, r) {
			continue // the load was made later (a resumed run)
		}
		k := Key{Page: labels.of(r), Link: r.Link.Label(), Mode: r.Mode, Protocol: r.Protocol, Settings: settings.of(r)}
		g := byKey[k]
		if g == nil {
			g = &Group{Key: k, LinkInfo: r.Link, Invalid: map[string]int{}, NetErrors: map[string]int{}, metric: m}
			byKey[k] = g
		}
		if !slices.Contains(g.Experiments, r.Experiment) {
			g.Experiments = append(g.Experiments, r.Experiment)
		}
		if r.Kind == result.KindHarnessError {
			g.Lost++
			continue
		}
		g.add(r, m)
	}
	groups := make([]*Group, 0, len(byKey))
	for _, g := range byKey {
		g.summarise()
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(a, b *Group) int { return compareKeys(a.Key, b.Key) })
	return groups
}

// pageLabelIndex holds the page label (result.Record.PageLabel) of each experiment's loads per
// page spec, for the lines that carry no replay facts (harness_error lines).
type pageLabelIndex map[[3]string]string

// pageLabels indexes the page labels of the loads in recs by experiment, configuration hash
// and page spec.
func pageLabels(recs []*result.Record) pageLabelIndex {
	idx := pageLabelIndex{}
	for _, r := range recs {
		if r != nil && r.IsLoad() && r.Replay != nil {
			idx[[3]string{r.Experiment, r.ConfigHash, r.Page.Spec}] = r.PageLabel()
		}
	}
	return idx
}

// of returns r's page label: its own, or for a line without replay facts that of its
// experiment's loads of the same page spec.
func (idx pageLabelIndex) of(r *result.Record) string {
	if r.Replay == nil {
		if l, ok := idx[[3]string{r.Experiment, r.ConfigHash, r.Page.Spec}]; ok {
			return l
		}
	}
	return r.PageLabel()
}

// add classifies one load: timed out (censored at its deadline unless a non-PLT metric was
// observed before it), valid (its metric counts), or invalid by reason.
func (g *Group) add(r *result.Record, m Metric) {
	g.Runs++
	g.loads = append(g.loads, r)
	v := m.value(r)
	outcome := result.Classify(r)
	if r.Emulator != nil {
		g.Lateness = append(g.Lateness, r.Emulator.LateMs())
	}
	for _, e := range r.EarlierAttempts {
		g.Lateness = append(g.Lateness, e.LateMs)
	}
	if len(r.EarlierAttempts) > 0 {
		g.Redone++
	}
	switch {
	case outcome == result.OutcomeEmulatorLate:
		g.EmulatorLate++
	case outcome == result.OutcomeNetworkFailed:
		g.NetFailed++
		g.NetErrors[result.NetworkError(r)]++
		g.noteDeadline(r.DeadlineMs)
	case r.TimedOut && (m == PLT || v <= 0):
		g.TimedOut++
		d := r.DeadlineMs
		if d <= 0 {
			d = r.PLTMs
		}
		g.noteDeadline(d)
	case r.TimedOut:
		g.Completed = append(g.Completed, v) // observed before the deadline
		g.Valid++
	case !r.Valid:
		reason := r.InvalidReason
		reason = cmp.Or(reason, "unspecified")
		g.Invalid[reason]++
	case v <= 0 || math.IsNaN(v) || math.IsInf(v, 0):
		g.Invalid["no "+string(m)]++
	default:
		g.Completed = append(g.Completed, v)
		g.Valid++
		g.valid = append(g.valid, r)
	}
}

// noteDeadline keeps the smallest deadline of the censored loads (d <= 0: unknown).
func (g *Group) noteDeadline(d float64) {
	if d > 0 && (g.DeadlineMs == 0 || d < g.DeadlineMs) {
		g.DeadlineMs = d
	}
}

// Censored returns the number of censored loads: timeouts plus network failures.
func (g *Group) Censored() int { return g.TimedOut + g.NetFailed }

// summarise computes the statistics from Completed and the censored loads.
func (g *Group) summarise() {
	slices.Sort(g.Completed)
	g.Sample = slices.Clone(g.Completed)
	for range g.Censored() {
		g.Sample = append(g.Sample, Censored)
	}
	s := g.Sample
	g.Median, g.P5, g.P25 = Quantile(s, 0.5), Quantile(s, 0.05), Quantile(s, 0.25)
	g.P75, g.P95 = Quantile(s, 0.75), Quantile(s, 0.95)
	g.Min, g.Max = Quantile(s, 0), Quantile(s, 1)
	g.CILow, g.CIHigh, g.CICoverage = MedianCI(s, Confidence)
	g.Mean, g.SD = MeanSD(g.Completed)
	g.CV = g.SD / g.Mean
	g.MedianLoad = nearest(g.valid, g.Median, g.metric)
	slices.Sort(g.Lateness)
	g.LateP50Ms, g.LateMaxMs = math.NaN(), math.NaN()
	if len(g.Lateness) > 0 {
		g.LateP50Ms, g.LateMaxMs = Quantile(g.Lateness, 0.5), g.Lateness[len(g.Lateness)-1]
	}
}

// nearest returns the load of recs whose metric m is nearest to v (the first on ties), or nil.
func nearest(recs []*result.Record, v float64, m Metric) *result.Record {
	var best *result.Record
	for _, r := range recs {
		if best == nil || math.Abs(m.value(r)-v) < math.Abs(m.value(best)-v) {
			best = r
		}
	}
	return best
}

// protoRank orders protocols as protocol.Table does (h1, h2, h3), then unknown ones, by name.
func protoRank(p string) int { return protocol.Index(p) }

func compareKeys(a, b Key) int {
	return cmp.Or(naturalCompare(a.Page, b.Page), naturalCompare(a.Link, b.Link),
		cmp.Compare(a.Mode, b.Mode), cmp.Compare(a.Settings, b.Settings),
		cmp.Compare(protoRank(a.Protocol), protoRank(b.Protocol)), cmp.Compare(a.Protocol, b.Protocol))
}
