package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/pltlab/pltlab/protocol"
	"github.com/pltlab/pltlab/result"
)

// runKey identifies one scheduled load of one experiment.
type runKey struct {
	experiment string
	run        int
}

// madeLoads returns, per scheduled load of recs that has a page-load line, the start time of
// its latest load line.
func madeLoads(recs []*result.Record) map[runKey]time.Time {
	made := map[runKey]time.Time{}
	for _, r := range recs {
		if r != nil && r.IsLoad() {
			k := runKey{r.Experiment, r.Run}
			if t, ok := made[k]; !ok || r.Time.After(t) {
				made[k] = r.Time
			}
		}
	}
	return made
}

// superseded reports whether the harness_error line r was made good later: a load line of
// the same experiment and run started after it (a resumed run). A load made before it belongs
// to another run of the experiment (pooled files), so the loss still counts.
func superseded(made map[runKey]time.Time, r *result.Record) bool {
	t, ok := made[runKey{r.Experiment, r.Run}]
	return ok && !t.Before(r.Time)
}

// settingsIndex derives the settings label of each record (see settingsOf).
type settingsIndex struct {
	// tcp holds, per experiment, the TCP settings observed on its TCP loads (for records written
	// before records carried their settings).
	tcp map[string]string
	// browser holds, per experiment, its one browser version ("" when it had several).
	browser map[string]string
}

func newSettingsIndex(recs []*result.Record) *settingsIndex {
	tcp, browsers := map[string]map[string]bool{}, map[string]map[string]bool{}
	add := func(m map[string]map[string]bool, k, v string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		if v != "" {
			m[k][v] = true
		}
	}
	for _, r := range recs {
		if r == nil || !r.IsLoad() {
			continue
		}
		add(browsers, r.Experiment, r.Browser)
		if p, err := protocol.Lookup(r.Protocol); err == nil && p.Transport == protocol.TCP {
			add(tcp, r.Experiment, tcpLabel(r.TCPCC, r.TLSVersion))
		}
	}
	ix := &settingsIndex{tcp: map[string]string{}, browser: map[string]string{}}
	for e, set := range tcp {
		ix.tcp[e] = strings.Join(slices.Sorted(maps.Keys(set)), " + ")
	}
	for e, set := range browsers {
		if len(set) == 1 {
			ix.browser[e] = slices.Collect(maps.Keys(set))[0]
		}
	}
	return ix
}

// tcpLabel names the TCP settings: "tcp_cc cubic, TLS 1.2".
func tcpLabel(cc, tls string) string {
	var parts []string
	if cc != "" {
		parts = append(parts, "tcp_cc "+cc)
	}
	if tls != "" {
		parts = append(parts, "TLS "+tls)
	}
	return strings.Join(parts, ", ")
}

// of returns the settings label of r: the experiment's requested TCP congestion control and
// TLS version (from r.Settings, or as observed on the experiment's TCP loads for older files),
// the browser version, the pltlab version, the cross traffic (Record.Cross), the emulated
// device (Settings.Device), the HTTP/3 stack with its congestion controller (Settings.H3Stack,
// QUICCC; absent for quic-go), the CPU shielded for the emulator (Env.ShieldCPU), every other
// setting of r.Settings (result.SettingValues, see labelled) and, on a flow line, the flow's own
// settings that FlowKey does not hold (result.Flow's: start, duration, bins, host stack). The
// same label means the same method; the protocols of one experiment share it, so they are
// compared. It is the one label of both kinds of measurement, loads (Key) and flows (FlowKey).
func (ix *settingsIndex) of(r *result.Record) string {
	var parts []string
	if r.Settings != nil && (r.Settings.TCPCC != "" || r.Settings.TLS != "") {
		parts = append(parts, tcpLabel(r.Settings.TCPCC, r.Settings.TLS))
	} else if t := ix.tcp[r.Experiment]; t != "" {
		parts = append(parts, t)
	}
	b := r.Browser
	b = cmp.Or(b, ix.browser[r.Experiment]) // a harness_error line has no browser
	if b != "" {
		parts = append(parts, b)
	}
	if r.Env != nil && r.Env.Pltlab != "" {
		parts = append(parts, "pltlab "+r.Env.Pltlab)
	}
	if r.Cross != "" { // loads under cross traffic are never pooled with loads without it
		parts = append(parts, "cross traffic "+r.Cross)
	}
	if d := recordDevice(r); d != "" { // a phone's loads are never pooled with the desktop's
		parts = append(parts, "device "+d)
	}
	if r.Settings != nil && (r.Settings.H3Stack != "" || r.Settings.QUICCC != "") { // nor another h3 stack's with quic-go's
		parts = append(parts, "h3 stack "+r.Settings.H3Stack+"/"+r.Settings.QUICCC)
	}
	if r.Env != nil && r.Env.ShieldCPU != nil { // nor loads or flows made with the emulator's CPU shielded with others
		parts = append(parts, "shield cpu "+strconv.Itoa(*r.Env.ShieldCPU))
	}
	vals := result.SettingValues(r.Settings) // any other requested setting, as recorded
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		if !labelled[k] {
			parts = append(parts, k+" "+strings.Trim(vals[k], `"`))
		}
	}
	flow := result.SettingValues(r.Flow) // a flow's own settings (start, duration, bins, host stack)
	for _, k := range slices.Sorted(maps.Keys(flow)) {
		if !flowKeyed[k] {
			parts = append(parts, k+" "+strings.Trim(flow[k], `"`))
		}
	}
	return strings.Join(parts, ", ")
}

// flowKeyed names the settings of result.Flow that FlowKey holds apart from its Settings.
var flowKeyed = map[string]bool{"flow": true, "flows": true, "mix": true}

// labelled names the settings of result.Settings that of words in its own way, and timeout_ms,
// by which groups have never been split; every other setting of result.Settings is named in
// the label as "NAME VALUE", so that a setting added there splits groups with no change here.
var labelled = map[string]bool{"tcp_cc": true, "tls": true, "device": true, "h3_stack": true, "quic_cc": true, "timeout_ms": true}

// recordDevice is the emulated device of r's experiment: its settings' spec, else (a record
// without one) the applied device's; "" for the desktop.
func recordDevice(r *result.Record) string {
	if r.Settings != nil && r.Settings.Device != "" {
		return r.Settings.Device
	}
	if r.Device != nil {
		return r.Device.Spec
	}
	return ""
}

// naturalCompare orders strings with their digit runs compared as numbers, so that
// "rate=5mbit" sorts before "rate=20mbit".
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := unicode.IsDigit(rune(a[0])), unicode.IsDigit(rune(b[0]))
		if da && db {
			na, ra := digitRun(a)
			nb, rb := digitRun(b)
			if c := compareNumbers(na, nb); c != 0 {
				return c
			}
			a, b = ra, rb
			continue
		}
		if a[0] != b[0] {
			if a[0] < b[0] {
				return -1
			}
			return 1
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitRun(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// compareNumbers compares two runs of decimal digits by value.
func compareNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// BaselineFor returns the default baseline among the protocols measured: h1 when measured, else
// the first of them in protocol.Table order (then by name); "" for none. `run`'s summary and
// `report` both use it.
func BaselineFor(protocols []string) string {
	if len(protocols) == 0 {
		return ""
	}
	ps := slices.Clone(protocols)
	slices.SortFunc(ps, func(a, b string) int {
		if c := protocol.Index(a) - protocol.Index(b); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	if slices.Contains(ps, DefaultBaseline) {
		return DefaultBaseline
	}
	return ps[0]
}

// warnings returns what a reader of the report must know: settings that split one condition,
// harness losses unbalanced between protocols, partial experiments, links whose self-check
// passed only when repeated (result.RecheckedLinks).
func (r *Report) warnings(recs []*result.Record) []string {
	out := append(result.MergeNotes(recs), result.RecheckedLinks(recs)...)
	settings := map[Key][]string{}
	for _, g := range r.Groups {
		k := g.condition()
		k.Settings = ""
		if !slices.Contains(settings[k], g.Settings) {
			settings[k] = append(settings[k], g.Settings)
		}
	}
	for _, c := range r.conditions() {
		k := c.Key
		k.Settings = ""
		if s := settings[k]; len(s) > 1 && c.Key.Settings == s[0] {
			out = append(out, fmt.Sprintf("page %s, link %s, %s: loads made with different settings are reported separately, never pooled: %s",
				orDash(k.Page), orDash(k.Link), orDash(string(k.Mode)), strings.Join(quoteAll(s), " | ")))
		}
		if w := lostImbalance(c); w != "" {
			out = append(out, w)
		}
	}
	if w := r.pooledNote(); w != "" {
		out = append(out, w)
	}
	out = append(out, inputSplits(recs)...)
	out = append(out, archiveSplits(recs)...)
	if w := busyHostNote(recs); w != "" {
		out = append(out, w)
	}
	if w := hostFreezeNote(recs); w != "" {
		out = append(out, w)
	}
	return append(out, partialExperiments(recs)...)
}

// inputSplits says, for each link spec whose loads read different contents of its input files
// (trace:FILE changed between runs), that those loads are reported separately.
func inputSplits(recs []*result.Record) []string {
	return splits(recs, "link %s was measured over %d different contents of its input files: reported separately, never pooled: %s",
		func(r *result.Record) (string, string, bool) {
			return r.Link.Spec, r.Link.Label(), len(r.Link.Inputs) > 0
		})
}

// archiveSplits says, for each replayed page spec (har:FILE) whose loads replayed different
// archives (the file changed between runs), that those loads are reported separately.
func archiveSplits(recs []*result.Record) []string {
	return splits(recs, "page %s replayed %d different archives: reported separately, never pooled: %s",
		func(r *result.Record) (string, string, bool) { return r.Page.Spec, r.PageLabel(), r.Replay != nil })
}

// splits formats format (spec, count, labels) for each spec, in order of first load, whose
// loads carry more than one label; of names a load's spec and label, and whether it counts.
func splits(recs []*result.Record, format string, of func(*result.Record) (spec, label string, ok bool)) []string {
	labels := map[string][]string{}
	var specs []string
	for _, r := range recs {
		if r == nil || !r.IsLoad() {
			continue
		}
		sp, l, ok := of(r)
		if !ok {
			continue
		}
		if _, seen := labels[sp]; !seen {
			specs = append(specs, sp)
		}
		if !slices.Contains(labels[sp], l) {
			labels[sp] = append(labels[sp], l)
		}
	}
	var out []string
	for _, sp := range specs {
		if ls := labels[sp]; len(ls) > 1 {
			out = append(out, fmt.Sprintf(format, sp, len(ls), strings.Join(quoteAll(ls), " | ")))
		}
	}
	return out
}

// HostBusyBoundPct and HostStealBoundPct bound the machine's load during a load that a report
// takes without a word: a load made while the machine's CPUs were busier than
// HostBusyBoundPct percent (the browser, server and emulator included: one load of
// carlucci2015 keeps a 2-core machine about 20-40 % busy), or while the hypervisor took more
// than HostStealBoundPct percent of their time, is flagged (busyHostNote), because its PLT may
// include the machine's delays. They are flags, not exclusions: the emulator's own lateness is
// what excludes a load (result.OutcomeEmulatorLate).
const (
	HostBusyBoundPct  = 90.0
	HostStealBoundPct = 5.0
)

// busyHostNote says how many measured loads, per protocol, were made on a machine busier than
// the bounds above ("" when none; records without the fields count as not flagged).
func busyHostNote(recs []*result.Record) string {
	per := map[string]int{}
	var protos []string
	n, total := 0, 0
	for _, r := range recs {
		if r == nil || !r.IsLoad() || r.Warmup {
			continue
		}
		total++
		if r.HostBusyPct <= HostBusyBoundPct && r.HostStealPct <= HostStealBoundPct {
			continue
		}
		if per[r.Protocol] == 0 {
			protos = append(protos, r.Protocol)
		}
		per[r.Protocol]++
		n++
	}
	if n == 0 {
		return ""
	}
	slices.SortFunc(protos, func(a, b string) int { return protoRank(a) - protoRank(b) })
	var parts []string
	for _, p := range protos {
		parts = append(parts, fmt.Sprintf("%s %d", p, per[p]))
	}
	return fmt.Sprintf("BUSY HOST: %d of %d loads were made while the machine was more than %.0f %% busy or the hypervisor took more than %.0f %% of its CPU time (%s; the records' host_busy_pct, host_steal_pct): their PLTs may include the machine's own delays",
		n, total, HostBusyBoundPct, HostStealBoundPct, strings.Join(parts, ", "))
}

// hostFreezeNote says how many measured loads had release lateness taken off because a freeze
// of the host explained it (result.Direction.HostFreezeMs), and the most taken off one
// release: those loads count as valid, and their PLTs include the freeze, as every process of
// the machine stood still ("" when none).
func hostFreezeNote(recs []*result.Record) string {
	n, total, most := 0, 0, 0.0
	for _, r := range recs {
		if r == nil || !r.IsLoad() || r.Warmup {
			continue
		}
		total++
		if r.Emulator == nil || r.Emulator.HostFreezeMs() == 0 {
			continue
		}
		n++
		most = max(most, r.Emulator.HostFreezeMs())
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("HOST FROZE: in %d of %d loads the hypervisor held a CPU while a packet waited, and up to %.1f ms of a release's lateness (at most %.0f ms) was taken off as the host's, not the emulator's (the records' host_freeze_ms, timing_err_own_max_ms): their PLTs include those freezes",
		n, total, most, result.HostFreezeAllowanceMs)
}

// pooledNote says which groups pool the loads of several experiments ("" when none does):
// independent runs whose settings match (Key.Settings) are pooled, and the report says so.
func (r *Report) pooledNote() string {
	var exps []string
	n := 0
	for _, g := range r.Groups {
		if len(g.Experiments) < 2 {
			continue
		}
		n++
		for _, e := range g.Experiments {
			if !slices.Contains(exps, e) {
				exps = append(exps, e)
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("POOLED: %d of %d groups hold the loads of %d experiments whose settings match (%s); loads of different settings are never pooled",
		n, len(r.Groups), len(exps), strings.Join(exps, ", "))
}

func quoteAll(xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = strconv.Quote(orDash(x))
	}
	return out
}

// lostImbalance describes loads lost to the harness in unequal numbers between the protocols of
// c ("" when balanced): such losses are rarely random between arms and may bias a comparison.
func lostImbalance(c condition) string {
	lo, hi := -1, 0
	var parts []string
	for _, g := range c.Groups {
		parts = append(parts, fmt.Sprintf("%s %d", g.Protocol, g.Lost))
		if lo < 0 || g.Lost < lo {
			lo = g.Lost
		}
		hi = max(hi, g.Lost)
	}
	if hi == lo || len(c.Groups) < 2 {
		return ""
	}
	return fmt.Sprintf("%s: loads lost to harness are unbalanced between protocols (%s): comparisons may be biased",
		c.Title(), strings.Join(parts, ", "))
}

// partialExperiments names each experiment with fewer lines than scheduled loads.
func partialExperiments(recs []*result.Record) []string {
	scheduled := map[string]int{}
	lines := map[string]map[int]bool{}
	var order []string
	for _, r := range recs {
		if r == nil || r.Scheduled == 0 || (!r.IsLoad() && r.Kind != result.KindHarnessError) {
			continue
		}
		if lines[r.Experiment] == nil {
			lines[r.Experiment] = map[int]bool{}
			order = append(order, r.Experiment)
		}
		lines[r.Experiment][r.Run] = true
		scheduled[r.Experiment] = max(scheduled[r.Experiment], r.Scheduled)
	}
	var out []string
	for _, e := range order {
		if n := len(lines[e]); n < scheduled[e] {
			out = append(out, fmt.Sprintf("PARTIAL: experiment %s made %d of its %d scheduled loads (interrupted; `pltlab run --resume` or `pltlab reproduce --resume` continues it)",
				e, n, scheduled[e]))
		}
	}
	return out
}
