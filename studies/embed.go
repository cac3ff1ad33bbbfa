package studies

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/interop/matrix"
	"github.com/pltlab/pltlab/result"
)

// Identify finds the study and scale whose plan made recs, for tools that read a study's
// records without its command line (pltlab view). A record belongs to a study when its
// experiment is named PartExperiment(study, ...) (page-load parts, flow parts and a study's own
// schedule alike, at any scale, on any build) or it is a study shard's plan line (experiment
// STUDY). A scale is identified exactly when one of its parts' configuration hashes
// (experiment.ConfigHash, which covers runs and seed) equals a record's, when a study shard's
// plan line names it (Plan.Study "STUDY/SCALE") without --runs or --seed, or, for a study
// without page-load parts, when the records' flow runs, durations and repetitions are the
// scale's (FromRecords) at the default seed. A study run with --runs or --seed matches no scale
// exactly and gets, with exact false, the scale its plan lines name, the scale whose own
// schedule holds its runs (customScale), the scale whose flow parts are those of its flow lines
// (a study of flows only), or else the study's default scale: judge it by FromRecords(plan,
// recs), what it measured. Plans are a host's that has everything (Study.Plan), but for a flow
// study whose schedule the host that made recs cut, which gets that host's (hostsOf). ok is
// false when no record belongs to a study.
func Identify(recs []*result.Record) (s *Study, plan Plan, exact, ok bool) {
	hashes := map[string]bool{}
	for _, r := range recs {
		if r.ConfigHash != "" {
			hashes[r.ConfigHash] = true
		}
	}
	for _, st := range registry {
		if !belongs(st, recs) {
			continue
		}
		for _, sc := range Scales {
			p := st.Plan(sc)
			for _, c := range p.Configs(RunOptions{}) {
				if hashes[experiment.ConfigHash(c)] {
					return st, p, true, true
				}
			}
		}
		if sc, exact, ok := shardScale(st, recs); ok {
			return st, st.Plan(sc), exact, true
		}
		for _, h := range hostsOf(recs) {
			for _, sc := range Scales {
				if p := st.PlanOn(sc, h); len(p.Parts) == 0 && flowsOfScale(p, recs) {
					return st, p, true, true
				}
			}
		}
		for _, h := range hostsOf(recs) {
			if sc, ok := customScale(st.Name, recs, "", h); ok {
				return st, st.PlanOn(sc, h), false, true
			}
		}
		for _, sc := range Scales {
			if p := st.Plan(sc); len(p.Parts) == 0 && flowPartsOfScale(p, recs) {
				return st, p, false, true
			}
		}
		return st, st.Plan(st.DefaultScale), false, true
	}
	return nil, Plan{}, false, false
}

// customScale returns the scale of study whose own schedule, with the repetitions its records
// were scheduled with (a run made with --runs), holds every run of recs: each key among the
// scale's and the recorded schedule (field scheduled, where recorded) a whole number of its
// repetitions; the first such scale from the smallest, or only scale only when given, each
// scale's schedule that of host h. ok false when none, or when the study has no own schedule.
func customScale(study string, recs []*result.Record, only Scale, h Host) (Scale, bool) {
	st, err := Lookup(study)
	if err != nil {
		return "", false
	}
	for _, sc := range Scales {
		if only != "" && sc != only {
			continue
		}
		c := st.PlanOn(sc, h).Custom
		if c == nil || c.KeyOf == nil || c.Keys == nil || c.Arms == 0 {
			return "", false
		}
		sched, seen := 0, false
		for _, r := range recs {
			if c.KeyOf(r) != "" {
				sched, seen = max(sched, r.Scheduled), true
			}
		}
		reps := c.Reps
		if sched > 0 {
			if sched%c.Arms != 0 {
				continue
			}
			reps = sched / c.Arms
		}
		if !seen {
			continue
		}
		keys := map[string]bool{}
		for _, k := range c.Keys(reps) {
			keys[k] = true
		}
		if !slices.ContainsFunc(recs, func(r *result.Record) bool { k := c.KeyOf(r); return k != "" && !keys[k] }) {
			return sc, true
		}
	}
	return "", false
}

// belongs reports whether a record is st's: one of a part, a flow part or st's own schedule
// (experiment PartExperiment(st.Name, ...)), or a study shard's plan line of st.
func belongs(st *Study, recs []*result.Record) bool {
	return slices.ContainsFunc(recs, func(r *result.Record) bool {
		return strings.HasPrefix(r.Experiment, st.Name+"/") ||
			(r.Kind == result.KindPlan && r.Experiment == st.Name && r.Plan != nil && strings.HasPrefix(r.Plan.Study, st.Name+"/"))
	})
}

// shardScale returns the scale a study shard's plan line of st names (Plan.Study
// "STUDY/SCALE"), exact when the shard ran without --runs or --seed; ok false without one.
func shardScale(st *Study, recs []*result.Record) (sc Scale, exact, ok bool) {
	for _, r := range recs {
		if r.Kind != result.KindPlan || r.Plan == nil || r.Experiment != st.Name {
			continue
		}
		name, scale, found := strings.Cut(r.Plan.Study, "/")
		if sc, err := ParseScale(scale); found && name == st.Name && err == nil {
			return sc, r.Plan.Runs == 0 && (r.Plan.Seed == 0 || r.Plan.Seed == experiment.DefaultSeed), true
		}
	}
	return "", false, false
}

// flowsOfScale reports whether recs hold flow runs of p's schedule as planned: each flow part's
// runs per mix and duration, and its own schedule's repetitions, as recorded (FromRecords), are
// p's, every flow line is of a part of p, and every record's seed is the default.
func flowsOfScale(p Plan, recs []*result.Record) bool {
	d := FromRecords(p, recs)
	seen := false
	for i, f := range p.Flows {
		name := PartExperiment(p.Study, f.Name)
		if !slices.ContainsFunc(recs, func(r *result.Record) bool { return r.Experiment == name && r.IsFlow() }) {
			continue
		}
		seen = true
		if d.Flows[i].Runs != f.Runs || d.Flows[i].Duration != f.Duration {
			return false
		}
	}
	if c := p.Custom; c != nil && c.KeyOf != nil && slices.ContainsFunc(recs, func(r *result.Record) bool { return c.KeyOf(r) != "" }) {
		seen = true
		if d.Custom.Reps != c.Reps {
			return false
		}
		// Another scale's runs can match the repetitions (smoke made with --runs 2 has quick's):
		// every run's key must be the scale's and the recorded schedule (field scheduled) a
		// whole number of its repetitions.
		if s, ok := customScale(p.Study, recs, p.Scale, p.Host); !ok || s != p.Scale {
			return false
		}
	}
	for _, r := range recs {
		if r.Env != nil && r.Env.Seed != 0 && r.Env.Seed != experiment.DefaultSeed {
			return false
		}
		if r.IsFlow() && !slices.ContainsFunc(p.Flows, func(f FlowPart) bool { return r.Experiment == PartExperiment(p.Study, f.Name) }) &&
			(p.Custom == nil || p.Custom.KeyOf == nil || p.Custom.KeyOf(r) == "") {
			return false
		}
	}
	return seen
}

// hostsOf are the hosts a study's records are read against, in turn: one that has everything
// (the plan of Study.Plan), then, when it lacks something, the host the records show they ran
// on (recordedHost), for a run whose own schedule its host cut (evolution made without root has
// no exchange cells, without gtlsserver no ngtcp2 server).
func hostsOf(recs []*result.Record) []Host {
	if h := recordedHost(recs); h != (Host{}) {
		return []Host{{}, h}
	}
	return []Host{{}}
}

// Errors of recordedHost: what no record shows the host had.
var (
	errNgtcp2NotRecorded   = errors.New("no record used the ngtcp2 stack")
	errExchangeNotRecorded = errors.New("no exchange case is in the records")
)

// recordedHost is the host recs show they ran on: it had ngtcp2 when a record used it (a load or
// flow it served, settings.h3_stack or env.quic; an interop line with ngtcp2 as client or
// server) and ran the exchange cases when a record is of one (whatever its outcome: the plan
// scheduled it). What no record shows is missing, with that reason.
func recordedHost(recs []*result.Record) Host {
	h := Host{Ngtcp2: errNgtcp2NotRecorded, Exchange: errExchangeNotRecorded}
	for _, r := range recs {
		rec, isInterop := interopOf(r)
		if (r.Settings != nil && r.Settings.H3Stack == flows.StackNgtcp2) || (r.Env != nil && strings.HasPrefix(r.Env.QUIC, flows.StackNgtcp2)) ||
			(isInterop && (rec.Server == matrix.Ngtcp2 || rec.Client == matrix.Ngtcp2)) {
			h.Ngtcp2 = nil
		}
		if isInterop && isExchange(rec) {
			h.Exchange = nil
		}
	}
	return h
}

// flowPartsOfScale reports whether the flow parts recs hold lines of are p's, every one of them
// and no other (a line of a part's decide runs, PART/decide/K, counting as the part's): a run of
// p's flows made with other runs, durations or seed (--runs, --seed), which FromRecords judges by
// what it measured.
func flowPartsOfScale(p Plan, recs []*result.Record) bool {
	seen := map[string]bool{}
	for _, r := range recs {
		rest, ok := strings.CutPrefix(r.Experiment, p.Study+"/")
		if !ok || !r.IsFlow() {
			continue
		}
		name, _, _ := strings.Cut(rest, "/")
		if !slices.ContainsFunc(p.Flows, func(f FlowPart) bool { return f.Name == name }) {
			return false
		}
		seen[name] = true
	}
	return len(p.Flows) > 0 && len(seen) == len(p.Flows)
}

// Title is the report's heading, as report.html shows it.
func (e *Support) Title() string { return e.title() }

// SectionAnchors maps the title of every section of the report to its ID (the anchor of its
// section element in report.html); a Judgement's See names sections by title.
func (e *Support) SectionAnchors() map[string]string {
	out := map[string]string{}
	for _, s := range e.sections(e.Judge()) {
		out[s.Title] = s.ID
	}
	return out
}

// ReportBody returns what report.html shows between <body> and </body>, rendered by the same
// template, leaving out the sections whose ID is in skip (a page that shows the findings table
// itself skips "findings"). Figures are referenced as FILE.svg relative to the page, as in
// report.html; RenderFigure draws them.
func (e *Support) ReportBody(skip ...string) (string, error) {
	js := e.Judge()
	secs := slices.DeleteFunc(e.sections(js), func(s Section) bool { return slices.Contains(skip, s.ID) })
	var buf bytes.Buffer
	if err := e.writeHTML(&buf, secs); err != nil {
		return "", fmt.Errorf("study report body: %w", err)
	}
	doc := buf.String()
	start, end := strings.Index(doc, "<body>"), strings.LastIndex(doc, "</body>")
	if start < 0 || end < start {
		return "", fmt.Errorf("study report body: no <body> element")
	}
	return doc[start+len("<body>") : end], nil
}

// RenderFigure writes the report's figure whose Figure.File is file in format "svg" or "png".
// found is false when the report has no such figure.
func (e *Support) RenderFigure(w io.Writer, file, format string) (found bool, err error) {
	for _, s := range e.sections(e.Judge()) {
		for _, f := range s.Figures {
			if f.File == file {
				return true, f.Render(w, format)
			}
		}
	}
	return false, nil
}
