package studies

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/matrix"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// Evolution names the study of QUIC implementations' behaviour over their releases.
const Evolution = "evolution"

// EvolutionPart is the part name of the study's interop lines (experiment "evolution/interop").
const EvolutionPart = "interop"

// EvolutionMinReleases is the fewest quic-go releases with a judged outcome that the findings
// over releases (arrival, regression) need: with two, a change cannot be told from the ends of
// the range; with three, a feature can be absent, arrive and stay.
const EvolutionMinReleases = 3

// evolutionCaseCost is the cost model's time of one case against one server: the cases take
// 1 s (version-negotiation, stateless-reset: the --quiet wait), 2 s (initial-under-1200 and
// its control) and 4 s (amplification-limit's window); 6.2 s for the four, measured.
const evolutionCaseCost = 1600 * time.Millisecond

const evolutionCitation = `Maxime Piraux, Quentin De Coninck, Olivier Bonaventure: "Observing the Evolution of QUIC ` +
	`Implementations", EPIQ 2018 (ACM CoNEXT workshop), arXiv:1810.09134. QUIC-Tracker's test suite run against the ` +
	`public QUIC implementations daily over a semester: features appear in releases over time, some releases regress ` +
	`on tests an earlier one passed, and implementations answer the same test differently.`

// evolutionScale is what one scale runs: the quic-go releases probed (oldest first), the
// releases and exchange cases of the exchange cells (each release as client and as server
// against EvolutionFixed), and repetitions.
type evolutionScale struct {
	releases   []string
	exReleases []string
	exchanges  []string
	reps       int
	// goodputPer is how many goodput runs each of goodputReleases (nil: exReleases), and ngtcp2
	// when goodputNgtcp2, makes as the server per repetition (0: none): reps x goodputPer runs
	// each in all.
	goodputPer      int
	goodputReleases []string
	goodputNgtcp2   bool
}

// goodputServers are the releases whose endpoints serve the goodput runs.
func (es evolutionScale) goodputServers() []string {
	if len(es.goodputReleases) > 0 {
		return es.goodputReleases
	}
	return es.exReleases
}

// evolutionAll are the releases of the quick and full scales: twelve spread over v0.33-v0.66,
// every API era and both toolchains (v0.33-v0.37 build with a fetched go1.20).
var evolutionAll = []string{"v0.33.0", "v0.35.0", "v0.37.0", "v0.40.1", "v0.43.0", "v0.46.0", "v0.48.2", "v0.52.0", "v0.56.0", "v0.60.0", "v0.63.0", "v0.66.0"}

// evolutionScales: smoke probes three releases that build with the local Go (one per API era)
// and runs v2 with two of them as client and as server, once; quick probes every release and
// runs zerortt, v2, keyupdate, connectionmigration and ecn with four releases over the range
// (features that arrived in quic-go's history: RFC 9369's v2, 0-RTT through the API eras,
// quic-go's own key update, connection migration from v0.51: before it a client has no
// Conn.AddPath and a server forbids migration, each unsupported with the reason; ECN, which no
// quic-go endpoint claims: unsupported unless the wire shows it), twice; full runs ten exchange
// cases (quick's, handshake, retry, resumption and the 10 MiB rebind-port and rebind-addr) with
// every release, five times. The goodput runs (the
// Interop Runner's measurement, 5 runs per pair there) are made with the exchange releases as
// servers: smoke once with v0.66.0 alone, without ngtcp2 (about 13 s a run, twice that when the
// emulator was late: the smoke's time budget), so its finding is inconclusive for too few runs;
// quick 3 per repetition (6 each, and ngtcp2's), full 1 per repetition (5 each).
var evolutionScales = map[Scale]evolutionScale{
	Smoke: {releases: []string{"v0.40.1", "v0.48.2", "v0.66.0"}, exReleases: []string{"v0.40.1", "v0.66.0"}, exchanges: []string{"v2"}, reps: 1,
		goodputPer: 1, goodputReleases: []string{"v0.66.0"}},
	Quick: {releases: evolutionAll, exReleases: []string{"v0.33.0", "v0.43.0", "v0.52.0", "v0.66.0"}, exchanges: []string{"zerortt", "v2", "keyupdate", "connectionmigration", "ecn"}, reps: 2,
		goodputPer: 3, goodputNgtcp2: true},
	Full: {releases: evolutionAll, exReleases: evolutionAll, exchanges: []string{"handshake", "retry", "resumption", "zerortt", "v2", "keyupdate",
		"connectionmigration", "ecn", "rebind-port", "rebind-addr"}, reps: 5, goodputPer: 1, goodputNgtcp2: true},
}

func evolution() *Study {
	return &Study{Name: Evolution, Title: "Piraux, De Coninck, Bonaventure, EPIQ 2018: the evolution of QUIC implementations",
		Citation: evolutionCitation, DefaultScale: Quick, plan: evolutionPlan, Findings: evolutionFindings(),
		Sections: evolutionSections, Differences: evolutionDifferences}
}

// evolutionServers are the servers of a scale, in run order: the quic-go releases oldest first,
// then ngtcp2 unless host h lacks it.
func evolutionServers(es evolutionScale, h Host) []string {
	var out []string
	for _, v := range es.releases {
		out = append(out, matrix.ReleaseName(v))
	}
	if h.Ngtcp2 == nil {
		out = append(out, matrix.Ngtcp2)
	}
	return out
}

// evolutionPlan is the study's plan at a scale: no page loads, its own schedule of every case
// against every server, once per repetition.
func evolutionPlan(sc Scale, h Host) Plan {
	es := evolutionScales[sc]
	servers, cells := evolutionServers(es, h), exchangeCells(es, h)
	p := Plan{Study: Evolution, Scale: sc,
		ScaledDown: []string{fmt.Sprintf("%d quic-go releases (%s) and ngtcp2 (Debian's) instead of the paper's public implementations, "+
			"on loopback, with pltlab's four probe cases instead of QUIC-Tracker's suite", len(es.releases), strings.Join(es.releases, ", ")),
			fmt.Sprintf("exchange cases %s with %d releases (%s) and ngtcp2, each as client and as server against %s (the release pltlab links), "+
				"through the Interop Runner's emulated 10 Mbit/s, 30 ms link", strings.Join(es.exchanges, ", "), len(es.exReleases), strings.Join(es.exReleases, ", "), EvolutionFixed)},
	}
	if l := goodputScaledDown(es); l != "" {
		p.ScaledDown = append(p.ScaledDown, l)
	}
	if err := h.Ngtcp2; err != nil {
		p.NotRun = []string{"ngtcp2, the second implementation: " + err.Error()}
	}
	if l := exchangeNotRun(es, h); l != "" {
		p.NotRun = append(p.NotRun, l)
	}
	probes := len(servers) * len(evolutionProbes())
	arms := probes + len(cells)
	cost := (time.Duration(probes)*evolutionCaseCost + cellsCost(cells)) / time.Duration(max(arms, 1))
	// One unit per endpoint (the unit a shard runs whole): its probe cases and its exchange
	// cells, as client and as server, against the fixed peer.
	units := make([]CustomUnit, len(servers))
	for i, s := range servers {
		units[i] = CustomUnit{Name: s, Experiment: PartExperiment(Evolution, EvolutionPart), Arms: len(evolutionProbes())}
		for _, x := range cells {
			if x.subject() == s {
				units[i].Arms++
			}
		}
	}
	p.Custom = &CustomPart{Reps: es.reps, Arms: arms, RunCost: cost, Units: units,
		Run: func(ctx context.Context, reps int, us []int, o RunOptions, w *result.Writer) error {
			return runEvolution(ctx, servers, us, cells, reps, o, w)
		},
		UnitOf: func(r *result.Record) string {
			if rec, ok := interopOf(r); ok {
				return subjectOfRecord(rec)
			}
			return ""
		},
		Keys:  func(reps int) []string { return evolutionKeys(servers, cells, reps) },
		KeyOf: evolutionKeyOf, Noun: "interop case run",
		Note: func(reps int) string {
			return fmt.Sprintf("%d repetition(s) of every probe case against every server and of every exchange cell (the paper: daily runs over a semester)", reps)
		}}
	return p
}

// evolutionKey is one case's key: "SERVER|CASE|REP".
func evolutionKey(server, c string, rep int) string { return fmt.Sprint(server, "|", c, "|", rep) }

// evolutionKeyOf is the key of an evolution cell's scheduled record ("" for any other line, and
// for a confirmation re-run, which is no run of the schedule: confirmRegressions).
func evolutionKeyOf(r *result.Record) string {
	if rec, ok := interopOf(r); ok && rec.Rerun == "" {
		return recordKey(rec, r.Run)
	}
	return ""
}

// recordKey is the key of an interop record of repetition rep: a probe's or an exchange's.
func recordKey(rec interop.Record, rep int) string {
	if !isExchange(rec) {
		return evolutionKey(rec.Server, rec.Case, rep)
	}
	return exchangeKey(rec.Client, rec.Server, rec.Case, rep)
}

// evolutionKeys lists the schedule's keys in run order: repetition, then every probe case
// against every server, then the exchange cells.
func evolutionKeys(servers []string, cells []exCell, reps int) []string {
	var out []string
	for rep := range reps {
		for _, s := range servers {
			for _, c := range evolutionProbes() {
				out = append(out, evolutionKey(s, c.Name, rep))
			}
		}
		for _, x := range cells {
			out = append(out, exchangeKey(x.client, x.server, x.c, x.run(rep)))
		}
	}
	return out
}

// interopOf decodes an interop line's case record; false for any other line.
func interopOf(r *result.Record) (interop.Record, bool) {
	var rec interop.Record
	if r == nil || r.Kind != result.KindInterop || len(r.Interop) == 0 || json.Unmarshal(r.Interop, &rec) != nil {
		return rec, false
	}
	return rec, true
}

// unitsOf returns the servers of the units us (indexes into servers; nil: all of them), in
// run order.
func unitsOf(servers []string, us []int) []string {
	if us == nil {
		return servers
	}
	var out []string
	for i, s := range servers {
		if slices.Contains(us, i) {
			out = append(out, s)
		}
	}
	return out
}

// subjectOfRecord is the endpoint an interop record is evidence about: a probe's server, or an
// exchange's endpoint other than the fixed peer (EvolutionFixed).
func subjectOfRecord(rec interop.Record) string {
	if isExchange(rec) && rec.Server == EvolutionFixed {
		return rec.Client
	}
	return rec.Server
}

// runEvolution runs every probe case against every server of the units us (indexes into
// servers, one unit per endpoint; nil: all) and then the exchange cells whose subject is one
// of them, reps times, skipping the cells o.Resume holds; each server is started (a release's
// endpoint built first, progress to the logger) and stopped once per repetition. A server that does not start
// gets one error line per case (no evidence of anything) and the run goes on. After the
// repetitions, every cell that looks like a regression seen in one run (suspects, over the lines
// resumed and made) is run once more (confirmRegressions). The errors are returned joined at
// the end.
func runEvolution(ctx context.Context, servers []string, us []int, cells []exCell, reps int, o RunOptions, w *result.Writer) error {
	log := o.Logger
	log = cmp.Or(log, slog.Default())
	done := plan.Made(o.Resume, keyed(evolutionKeyOf))
	scheduled := reps * (len(servers)*len(evolutionProbes()) + len(cells)) // the whole schedule's, as every shard records it
	servers = unitsOf(servers, us)
	cells = slices.DeleteFunc(slices.Clone(cells), func(x exCell) bool { return !slices.Contains(servers, x.subject()) })
	shard := o.Shard.String() // "" unsharded
	seen := slices.Clone(o.Resume)
	write := func(run int, rec interop.Record) error {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		r := &result.Record{Kind: result.KindInterop, Experiment: PartExperiment(Evolution, EvolutionPart), Run: run,
			Scheduled: scheduled, Time: time.Now().UTC(), Valid: rec.Outcome != interop.Error, Interop: b,
			Shard: shard, ShardUnits: o.units}
		seen = append(seen, r)
		return w.Write(r)
	}
	var errs []error
	run := &evoRunner{peers: map[string]matrix.Peer{}, log: log, version: o.Version}
	for rep := range reps {
		for _, s := range servers {
			var cases []interop.Case
			for _, c := range evolutionProbes() {
				if !done[evolutionKey(s, c.Name, rep)] {
					cases = append(cases, c)
				}
			}
			if len(cases) == 0 {
				continue
			}
			if err := ctx.Err(); err != nil {
				return errors.Join(append(errs, err)...)
			}
			log.Info("evolution: probing", "server", s, "repetition", rep+1, "of", reps)
			var werr error
			err := run.probes(ctx, s, cases, func(rec interop.Record) error {
				if werr = write(rep, rec); werr != nil {
					return werr
				}
				return nil
			})
			if werr != nil {
				return errors.Join(append(errs, werr)...)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", s, err))
			}
		}
		if err := runExchanges(ctx, cells, rep, done, run, log, write); err != nil {
			if ctx.Err() != nil {
				return errors.Join(append(errs, err)...)
			}
			errs = append(errs, err)
		}
	}
	runOf := func(client, server, c string) int { return confirmRun(cells, reps, client, server, c) }
	if err := confirmRegressions(ctx, evolutionData(seen), servers, run, runOf, log, write); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// confirmRun is the run number of a confirmation re-run of the cell client > server in case c
// (confirmRegressions): the cell's scheduled runs with reps repetitions (reps, or reps x per
// for a goodput cell of cells), the first number no scheduled run of it has.
func confirmRun(cells []exCell, reps int, client, server, c string) int {
	for _, x := range cells {
		if x.client == client && x.server == server && x.c == c {
			return reps * max(x.per, 1)
		}
	}
	return reps
}

// evoState is one release's state of one feature: known when its judged repetitions agree, and
// then has when the feature is there (the case passed, the version was listed).
type evoState struct {
	known, has bool
}

// evoData are the interop lines of a run sorted for judging: the quic-go releases oldest first
// and, per endpoint, the records of each column of the grid (subjectOf: a probe case, or an
// exchange case as client or as server), errors and cells this machine could not run left out:
// they are evidence of nothing.
type evoData struct {
	releases []string                               // quic-go releases with at least one judged record, oldest first
	byServer map[string]map[string][]interop.Record // endpoint name, column: judged records
	errors   int                                    // records with outcome error, left out
	notRun   int                                    // exchange records the machine could not run (environmental), left out
	host     Host                                   // the host the run planned for (Plan.Host)
}

// evolutionData sorts the interop lines of recs.
func evolutionData(recs []*result.Record) evoData {
	d := evoData{byServer: map[string]map[string][]interop.Record{}}
	for _, r := range recs {
		rec, ok := interopOf(r)
		if !ok {
			continue
		}
		if rec.Outcome == interop.Error {
			d.errors++
			continue
		}
		if environmental(rec) {
			d.notRun++
			continue
		}
		s, col := subjectOf(rec)
		if d.byServer[s] == nil {
			d.byServer[s] = map[string][]interop.Record{}
			if v, ok := matrix.Release(s); ok {
				d.releases = append(d.releases, v)
			}
		}
		d.byServer[s][col] = append(d.byServer[s][col], rec)
	}
	slices.SortFunc(d.releases, compareRelease)
	return d
}

// releaseCells names the servers of the judged releases ("quic-go@v0.40.1"), oldest first.
func (d evoData) releaseCells() []string {
	out := make([]string, len(d.releases))
	for i, v := range d.releases {
		out[i] = matrix.ReleaseName(v)
	}
	return out
}

// compareRelease orders quic-go releases "vA.B.C" by their numbers (an unparsable one first).
func compareRelease(a, b string) int {
	pa, pb := releaseNums(a), releaseNums(b)
	return cmp.Or(cmp.Compare(pa[0], pb[0]), cmp.Compare(pa[1], pb[1]), cmp.Compare(pa[2], pb[2]), strings.Compare(a, b))
}

// releaseNums are a release's three numbers (-1 where not a number).
func releaseNums(v string) [3]int {
	out := [3]int{-1, -1, -1}
	for i, f := range strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3) {
		if n, err := strconv.Atoi(f); err == nil {
			out[i] = n
		}
	}
	return out
}

// outcome is the outcome every judged record of an endpoint's column agrees on, "" when none or
// when they disagree (a flaky case is evidence of neither state).
func (d evoData) outcome(server, c string) interop.Outcome {
	var o interop.Outcome
	for _, r := range d.byServer[server][c] {
		if o != "" && r.Outcome != o {
			return ""
		}
		o = r.Outcome
	}
	return o
}

// greased reports a version of the reserved pattern 0x?a?a?a?a (RFC 9000 section 15), which a
// server lists to exercise negotiation: not a feature.
func greased(v string) bool {
	n, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 32)
	return err == nil && n&0x0f0f0f0f == 0x0a0a0a0a
}

// versionNames names the versions a report mentions.
var versionNames = map[string]string{"0x00000001": "QUIC v1", "0x6b3343cf": "QUIC v2 (RFC 9369)", "0xff00001d": "draft-29", "0x709a50c4": "QUIC v2 draft"}

// versionName is "0x6b3343cf (QUIC v2 (RFC 9369))" or the number alone.
func versionName(v string) string {
	if n, ok := versionNames[v]; ok {
		return v + " (" + n + ")"
	}
	return v
}

// features returns, per feature of the quic-go releases ("lists VERSION in Version
// Negotiation", "passes CASE"), its state at each release of d.releases in order.
func (d evoData) features() (names []string, states map[string][]evoState) {
	states = map[string][]evoState{}
	add := func(name string, i int, st evoState) {
		if states[name] == nil {
			states[name] = make([]evoState, len(d.releases))
			names = append(names, name)
		}
		states[name][i] = st
	}
	for i, v := range d.releases {
		s := matrix.ReleaseName(v)
		for _, c := range evolutionColumns() {
			if o := d.outcome(s, c); o != "" {
				add("passes "+c, i, evoState{known: true, has: o == interop.Pass})
			}
		}
	}
	// The versions listed: every version any release lists (greased ones aside), then each
	// release's state: known where its passing version-negotiation records agree on it.
	counts, passes := make([]map[string]int, len(d.releases)), make([]int, len(d.releases))
	var listed []string
	for i, v := range d.releases {
		counts[i] = map[string]int{}
		for _, r := range d.byServer[matrix.ReleaseName(v)]["version-negotiation"] {
			if r.Outcome != interop.Pass {
				continue
			}
			passes[i]++
			for _, ver := range r.Observed.VersionsListed {
				if !greased(ver) {
					counts[i][ver]++
					if !slices.Contains(listed, ver) {
						listed = append(listed, ver)
					}
				}
			}
		}
	}
	for _, ver := range listed {
		for i := range d.releases {
			switch c := counts[i][ver]; {
			case passes[i] == 0:
			case c == passes[i]:
				add("lists "+ver, i, evoState{known: true, has: true})
			case c == 0:
				add("lists "+ver, i, evoState{known: true})
			}
		}
	}
	slices.Sort(names)
	return names, states
}

// arrival is where a feature arrives: absent at every known release before index at, present at
// it and at every known release after; false when the feature does not arrive so (present from
// the first known release, never present, or present and absent again).
func arrival(st []evoState) (at int, ok bool) {
	at, seenAbsent := -1, false
	for i, s := range st {
		switch {
		case !s.known:
		case s.has && at < 0:
			at = i
		case !s.has && at >= 0:
			return -1, false
		case !s.has:
			seenAbsent = true
		}
	}
	return at, at >= 0 && seenAbsent
}

// featureName is a feature as the evidence names it.
func featureName(n string) string {
	if ver, ok := strings.CutPrefix(n, "lists "); ok {
		return "lists " + versionName(ver) + " in Version Negotiation"
	}
	return n
}

// invert is a feature's states negated (known states only): its arrivals are the feature's
// departures.
func invert(st []evoState) []evoState {
	out := make([]evoState, len(st))
	for i, s := range st {
		out[i] = evoState{known: s.known, has: s.known && !s.has}
	}
	return out
}

// lastKnownBefore is the release of the last known state before index at ("" when none).
func (d evoData) lastKnownBefore(st []evoState, at int) string {
	for i := at - 1; i >= 0; i-- {
		if st[i].known {
			return d.releases[i]
		}
	}
	return ""
}

// judgeArrival judges "features arrive over releases": reproduced when at least one feature is
// absent at the earlier releases and present from some release on (the first release listing or
// passing it is the evidence); contradicted when, over EvolutionMinReleases or more releases,
// no feature changes at all; inconclusive when features change but none arrives (departures
// only, or back and forth: the range shows evolution, not an arrival; a feature present from
// the oldest release may have arrived before the range) and with fewer releases. An observation
// has no sampling error: the arrivals are counted (counted; a change that is no arrival is an
// unsure one, holding the verdict at inconclusive) and folded by the one rule (fold).
func judgeArrival(d evoData) Judgement {
	if len(d.releases) < EvolutionMinReleases {
		return Judgement{Verdict: Inconclusive, Evidence: fmt.Sprintf("%d quic-go release(s) with judged cases (%s); the finding needs %d", len(d.releases), strings.Join(d.releases, ", "), EvolutionMinReleases)}
	}
	names, states := d.features()
	var arrivals, departures, other, always []string
	for _, n := range names {
		st := states[n]
		at, ok := arrival(st)
		dat, dok := arrival(invert(st))
		known, has := 0, 0
		for _, s := range st {
			if s.known {
				known++
				if s.has {
					has++
				}
			}
		}
		switch {
		case ok:
			arrivals = append(arrivals, fmt.Sprintf("%s from %s on (not at %s)", featureName(n), d.releases[at], d.lastKnownBefore(st, at)))
		case dok:
			departures = append(departures, fmt.Sprintf("%s up to %s, not from %s on", featureName(n), d.lastKnownBefore(st, dat), d.releases[dat]))
		case has > 0 && has < known:
			other = append(other, featureName(n)+" back and forth")
		case has == known && has > 0:
			always = append(always, featureName(n))
		}
	}
	span := fmt.Sprintf("over %d releases (%s to %s)", len(d.releases), d.releases[0], d.releases[len(d.releases)-1])
	v, _ := fold(every, Alpha, counted(len(arrivals), len(departures)+len(other)))
	j := Judgement{Verdict: v, See: []string{"Release x case"}, Cells: d.releaseCells()}
	parts := []string{}
	if len(arrivals) > 0 {
		parts = append(parts, "arrive: "+strings.Join(arrivals, "; "))
	} else {
		parts = append(parts, "no feature arrives")
	}
	if len(departures)+len(other) > 0 {
		parts = append(parts, "change otherwise: "+strings.Join(append(departures, other...), "; "))
	}
	if len(always) > 0 {
		parts = append(parts, "present from the oldest release on (an arrival before the range cannot be seen): "+strings.Join(always, "; "))
	}
	j.Evidence = span + ": " + strings.Join(parts, "; ")
	return j
}

// judgeRegression judges "some releases regress a feature an earlier one had", over every
// column of the grid (probe cases, exchange cases as client and as server): reproduced when some
// column passes at a release and fails at a later one in every run, and the failing cell ran at
// least twice (the regression confirmed by re-running it, not taken from one try: a second
// repetition, or the re-run of confirmRegressions); contradicted when no column has a pass
// followed by a fail over EvolutionMinReleases or more releases; inconclusive with fewer
// releases, or when the only regressions seen ran once (never re-run). A failing cell whose
// re-run passed (its runs disagree) is named as not confirmed, not reproduced on the re-run: no
// regression and, like any disagreeing repetitions, no state, so it alone does not hold the
// verdict. Errors and cells not run here are no state either (evoData.outcome).
func judgeRegression(d evoData) Judgement {
	if len(d.releases) < EvolutionMinReleases {
		return Judgement{Verdict: Inconclusive, Evidence: fmt.Sprintf("%d quic-go release(s) with judged cases (%s); the finding needs %d", len(d.releases), strings.Join(d.releases, ", "), EvolutionMinReleases)}
	}
	var confirmed, once, notReproduced, monotone []string
	for _, c := range evolutionColumns() {
		lastPass, found, unconf, known := "", "", "", false
		var flaky []string
		for _, v := range d.releases {
			recs := d.byServer[matrix.ReleaseName(v)][c]
			switch d.outcome(matrix.ReleaseName(v), c) {
			case interop.Pass:
				lastPass, known = v, true
			case interop.Fail:
				known = true
				if lastPass == "" || found != "" {
					break
				}
				desc := fmt.Sprintf("%s passes at %s (%d run(s)) and fails at %s (%d run(s))", c, lastPass, len(d.byServer[matrix.ReleaseName(lastPass)][c]), v, len(recs))
				if len(recs) >= 2 {
					found = desc
				} else if unconf == "" {
					unconf = desc
				}
			case interop.Unsupported:
				known = true
			case "":
				if n := outcomes(recs, interop.Fail); lastPass != "" && n > 0 && outcomes(recs, interop.Pass) > 0 {
					flaky = append(flaky, fmt.Sprintf("%s passes at %s and fails at %s in %d of %d run(s), passing in the others", c, lastPass, v, n, len(recs)))
				}
			}
		}
		notReproduced = append(notReproduced, flaky...)
		switch {
		case found != "":
			confirmed = append(confirmed, found)
		case unconf != "":
			once = append(once, unconf)
		case known:
			monotone = append(monotone, c)
		}
	}
	v, _ := fold(every, Alpha, counted(len(confirmed), len(once)))
	j := Judgement{Verdict: v, See: []string{"Release x case"}, Cells: d.releaseCells()}
	var parts []string
	switch {
	case len(confirmed) > 0:
		parts = append(parts, "confirmed by a re-run: "+strings.Join(confirmed, "; "))
	case len(once) == 0:
		parts = append(parts, fmt.Sprintf("every case is monotone over %d releases (%s to %s): no pass followed by a fail (%s)", len(d.releases), d.releases[0], d.releases[len(d.releases)-1], strings.Join(monotone, ", ")))
	}
	if len(once) > 0 {
		parts = append(parts, "regressions seen in one run only, not confirmed by a re-run: "+strings.Join(once, "; "))
	}
	if len(notReproduced) > 0 {
		parts = append(parts, "not confirmed, not reproduced on the re-run: "+strings.Join(notReproduced, "; "))
	}
	j.Evidence = strings.Join(parts, "; ")
	return j
}

// outcomes counts the records of recs with outcome o.
func outcomes(recs []interop.Record, o interop.Outcome) int {
	n := 0
	for _, r := range recs {
		if r.Outcome == o {
			n++
		}
	}
	return n
}

// judgeDiffer judges "implementations differ on the same case": the newest quic-go release
// probed against ngtcp2, case by case where both have an outcome their repetitions agree on;
// reproduced when some case's outcome differs, contradicted when every compared case agrees,
// inconclusive when none is comparable; not testable here without ngtcp2 (gtlsserver).
func judgeDiffer(d evoData) Judgement {
	if len(d.byServer[matrix.Ngtcp2]) == 0 {
		if err := d.host.Ngtcp2; err != nil {
			return Judgement{Verdict: NotTestable, Evidence: "the second implementation, ngtcp2, is not installed here: " + err.Error()}
		}
		return notRun("no judged ngtcp2 case in the records")
	}
	if len(d.releases) == 0 {
		return notRun("no judged quic-go case in the records")
	}
	newest := matrix.ReleaseName(d.releases[len(d.releases)-1])
	var differ, same []string
	for _, c := range evolutionColumns() {
		a, b := d.outcome(newest, c), d.outcome(matrix.Ngtcp2, c)
		if a == "" || b == "" {
			continue
		}
		desc := fmt.Sprintf("%s: %s %s, ngtcp2 %s", c, newest, a, b)
		if c == "amplification-limit" {
			ra, rb := d.byServer[newest][c][0].Observed, d.byServer[matrix.Ngtcp2][c][0].Observed
			desc = fmt.Sprintf("%s: %s %s (%d bytes for %d, %.2fx), ngtcp2 %s (%d bytes, %.2fx)", c, newest, a, ra.BytesReceived, ra.BytesSent, ra.Ratio, b, rb.BytesReceived, rb.Ratio)
		}
		if a != b {
			differ = append(differ, desc)
		} else {
			same = append(same, desc)
		}
	}
	if len(differ)+len(same) == 0 {
		return Judgement{Verdict: Inconclusive, Evidence: "no case with an agreed outcome at both " + newest + " and ngtcp2"}
	}
	v, _ := fold(every, Alpha, counted(len(differ), 0))
	j := Judgement{Verdict: v, See: []string{"Release x case"}, Cells: []string{newest, matrix.Ngtcp2}}
	j.Evidence = fmt.Sprintf("%d of %d cases differ", len(differ), len(differ)+len(same))
	if len(differ) > 0 {
		j.Evidence += ": " + strings.Join(differ, "; ")
	}
	if len(same) > 0 {
		j.Evidence += "; the same: " + strings.Join(same, "; ")
	}
	return j
}

func evolutionFindings() []Finding {
	data := func(e *Support) evoData {
		d := evolutionData(e.Records)
		d.host = e.Plan.Host
		return d
	}
	return []Finding{
		{ID: "arrival", Source: "Piraux et al. 2018, section 4: implementations gain features over the semester (new versions, new tests passed)",
			Claim:     "features arrive over releases",
			Criterion: fmt.Sprintf("over %d or more quic-go releases: some feature (a version listed in Version Negotiation, greased ones aside, or a case passed: a probe case, or an exchange case as client or as server) absent at the earlier releases and present from one release on; contradicted when none arrives", EvolutionMinReleases),
			Judge:     func(e *Support) Judgement { return judgeArrival(data(e)) }},
		{ID: "regression", Source: "Piraux et al. 2018, section 4: some versions fail tests an earlier version passed",
			Claim:     "some releases regress a feature an earlier one had",
			Criterion: fmt.Sprintf("over %d or more quic-go releases: some case (a probe case, or an exchange case as client or as server) passes at a release and fails at a later one in every run, the failing cell run at least twice (confirmed by a re-run: a cell failing in its one run after an earlier release passed it is run again; a fail no re-run confirmed holds the verdict at inconclusive, one whose re-run passed is named as not reproduced); contradicted when every case is monotone (errors, cells not run here and disagreeing repetitions are no evidence)", EvolutionMinReleases),
			Judge:     func(e *Support) Judgement { return judgeRegression(data(e)) }},
		{ID: "differ", Source: "Piraux et al. 2018, section 4: implementations behave differently on the same test",
			Claim:     "implementations differ on the same case",
			Criterion: "the newest quic-go release probed and ngtcp2, over the probe cases and the exchange cases in each role: some case's agreed outcome differs; contradicted when every comparable case agrees",
			Judge:     func(e *Support) Judgement { return judgeDiffer(data(e)) }},
		goodputFinding(),
	}
}

// evolutionSections are the release x case table and each endpoint's build provenance.
func evolutionSections(e *Support) []Section {
	var servers []string
	cells := map[string]map[string][]interop.Record{}
	builds := map[string]*interop.Build{}
	versions := map[string]string{}
	used := map[string]bool{}
	for _, r := range e.Records {
		rec, ok := interopOf(r)
		if !ok {
			continue
		}
		sub, col := subjectOf(rec)
		if cells[sub] == nil {
			cells[sub] = map[string][]interop.Record{}
			servers = append(servers, sub)
		}
		cells[sub][col] = append(cells[sub][col], rec)
		used[col] = true
		role, b := "server", rec.Build
		if sub == rec.Client {
			role, b = "client", rec.ClientBuild
		}
		if b != nil {
			builds[sub] = b
		}
		if v := rec.Versions[role]; v != "" {
			versions[sub] = v
		}
	}
	cols := slices.Clone(evolutionProbeNames)
	for _, c := range exchangeColumns() {
		if used[c] {
			cols = append(cols, c)
		}
	}
	slices.SortStableFunc(servers, compareServers)
	t := Table{Caption: "Each case with each endpoint: the outcome of every repetition and its key evidence (the records hold every datagram; an exchange case's records its decrypted capture)",
		Header: append([]string{"endpoint"}, cols...)}
	for _, s := range servers {
		row := []string{s}
		for _, c := range cols {
			row = append(row, evoCell(cells[s][c]))
		}
		t.Rows = append(t.Rows, row)
	}
	prov := Table{Caption: "What ran: each endpoint's version as read from it and, for a release's endpoint, its build",
		Header: []string{"endpoint", "version", "era", "toolchain", "module sum", "binary SHA-256"}}
	for _, s := range servers {
		b := builds[s]
		if b == nil {
			prov.Rows = append(prov.Rows, []string{s, versions[s], "", "", "", ""})
			continue
		}
		prov.Rows = append(prov.Rows, []string{s, versions[s], b.Era, b.Toolchain, b.Sum, b.BinarySHA256})
	}
	grid := analysis.OutcomeGrid{Title: "Release x case: green pass, red fail, grey unsupported, amber repetitions disagree",
		Rows: servers, Cols: cols}
	for _, s := range servers {
		row := make([]analysis.OutcomeCell, len(cols))
		for j, c := range cols {
			row[j] = evoClass(cells[s][c])
		}
		grid.Cells = append(grid.Cells, row)
	}
	out := []Section{
		{ID: "matrix", Title: "Release x case", Figures: []Figure{{File: "evolution-grid",
			Caption: "The table above as a picture: a row per endpoint (quic-go's releases oldest first, then ngtcp2), a column per case; white: nothing judged (errors, or cells this machine could not run).",
			Render:  func(w io.Writer, format string) error { return analysis.WriteOutcomeGrid(w, grid, format) }}},
			Text: []string{"pltlab's raw probe client against each quic-go release's interop endpoint (built from the module proxy) and ngtcp2, on loopback. An error is the probe unable to tell, evidence of nothing.",
				"The exchange columns: each endpoint as the client (CASE as client) against " + EvolutionFixed + ", the interop endpoint of the release pltlab links, and as the server (CASE as server) for it, through the case's emulated link, judged from the decrypted capture. " +
					"unsupported is the endpoint's API lacking the feature; a cell this machine could not run (no root for the link, no tshark) is evidence of nothing."},
			Tables: []Table{t}},
		{ID: "builds", Title: "Build provenance", Tables: []Table{prov}},
	}
	if g := goodputSection(e.Records); g != nil {
		out = slices.Insert(out, 1, *g)
	}
	return out
}

// evoClass is one cell of the grid picture: the outcome its judged repetitions agree on, mixed
// when they disagree, nothing when none was judged (errors and cells the machine could not run
// are evidence of nothing).
func evoClass(recs []interop.Record) analysis.OutcomeCell {
	var out interop.Outcome
	for _, r := range recs {
		if r.Outcome == interop.Error || environmental(r) {
			continue
		}
		if out != "" && r.Outcome != out {
			return analysis.OutcomeCell{Class: "mixed", Label: "mixed"}
		}
		out = r.Outcome
	}
	label := map[interop.Outcome]string{interop.Pass: "pass", interop.Fail: "fail", interop.Unsupported: "unsup."}[out]
	return analysis.OutcomeCell{Class: string(out), Label: label}
}

// evoCell is one table cell: each repetition's outcome (once when they agree), a confirmation
// re-run's outcome (confirmRegressions) and the key evidence of the first judged record.
func evoCell(recs []interop.Record) string {
	if len(recs) == 0 {
		return "-"
	}
	var outs []string
	for _, r := range recs {
		if !slices.Contains(outs, string(r.Outcome)) {
			outs = append(outs, string(r.Outcome))
		}
	}
	s := strings.Join(outs, "/")
	if i := slices.IndexFunc(recs, func(r interop.Record) bool { return r.Rerun != "" }); i >= 0 {
		s += fmt.Sprintf(" (re-run to confirm a regression: %s)", recs[i].Outcome)
	}
	for _, r := range recs {
		if r.Outcome == interop.Error {
			continue
		}
		if isExchange(r) {
			if r.Outcome != interop.Pass {
				s += ": " + shortReason(r.Reason)
			}
			return s
		}
		switch ev := r.Observed; {
		case len(ev.VersionsListed) > 0:
			var vs []string
			for _, v := range ev.VersionsListed {
				if !greased(v) {
					vs = append(vs, v)
				}
			}
			s += ": " + strings.Join(vs, " ")
		case ev.Ratio > 0:
			s += fmt.Sprintf(": %d B for %d (%.2fx)", ev.BytesReceived, ev.BytesSent, ev.Ratio)
		case ev.ResetToken != "":
			s += fmt.Sprintf(": reset of %d B", ev.BytesReceived)
		}
		return s
	}
	return s + ": " + recs[0].Reason
}

// shortReason is a reason cut to about 100 characters for a table cell.
func shortReason(r string) string {
	if rs := []rune(r); len(rs) > 100 {
		return string(rs[:97]) + "..."
	}
	return r
}

// evolutionDifferences says what differs from the paper's testbed.
func evolutionDifferences(e *Support) []string {
	return []string{
		"one implementation's history (quic-go's releases, built now from the module proxy) instead of daily runs against the public implementations' servers over a semester",
		"pltlab's four probe cases (version negotiation, Initial under 1200 bytes, amplification limit, stateless reset) instead of QUIC-Tracker's suite",
		"the Interop Runner's exchange cases, each release against one fixed peer (" + EvolutionFixed + ", the release pltlab links) in each role, instead of the paper's scanner as the only client",
		"loopback on one machine instead of the Internet",
	}
}
