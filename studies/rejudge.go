package studies

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
)

// Complete reports whether recs hold the whole of sp (plan.Left of each schedule is empty): every part has a page-load line for
// every run of its schedule (the length its own records give, field scheduled, so records of
// an older pltlab or another scale count by their own plan; records without the field by the
// schedule of the settings they record, FromRecords), every run of the Custom schedule (by its
// keys, with the repetitions its records were scheduled with) has a line, and every flow part,
// where flows can run in this build, a flow line for every mix and run. A complete run is re-judged from
// its records (`reproduce --resume`) without a load or a link check.
func Complete(sp Plan, recs []*result.Record) bool {
	derived := FromRecords(sp, recs)
	for i, p := range sp.Parts {
		name := PartExperiment(sp.Study, p.Name)
		scheduled := 0
		made := plan.Made(recs, func(r *result.Record) (int, bool) {
			ok := r.Experiment == name && r.IsLoad()
			if ok {
				scheduled = max(scheduled, r.Scheduled)
			}
			return r.Run, ok
		})
		if scheduled == 0 && len(made) > 0 {
			// Records older than the field: the schedule their own settings give.
			scheduled = derived.Parts[i].Config.Loads()
		}
		if scheduled == 0 || len(plan.Left(upTo(scheduled), made)) > 0 {
			return false
		}
	}
	if c := derived.Custom; c != nil && c.Keys != nil && len(plan.Left(c.Keys(c.Reps), c.made(recs))) > 0 {
		return false
	}
	for _, f := range derived.Flows {
		name := PartExperiment(sp.Study, f.Name)
		runs := map[string]bool{}
		for _, r := range recs {
			if r.Experiment == name && r.Kind == result.KindFlow && r.Flow != nil {
				runs[fmt.Sprintf("%s/%d", r.Flow.Mix, r.Run)] = true
			}
		}
		if len(runs) < len(f.Mixes)*f.Runs {
			return false
		}
	}
	return true
}

// upTo returns 0, 1, ..., n-1: the run numbers of a schedule of n loads.
func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// FromRecords returns plan with each part's pages, links, arms, measured loads per cell and
// warm-ups taken from the part's records, in the order they first appear, and each flow part's
// runs per mix and flow duration from its flow lines, so that a run made with other settings
// (another scale, --runs, an older pltlab's plan: carlucci2015 quick ran 1 flow run of 20 s a
// mix before 2026-12-02, 3 of 10 s since) is judged by what it measured. A part without records
// keeps its plan.
func FromRecords(sp Plan, recs []*result.Record) Plan {
	out := sp
	out.Parts = slices.Clone(sp.Parts)
	for i, p := range out.Parts {
		name := PartExperiment(sp.Study, p.Name)
		c := p.Config
		var pgs, links []string
		var arms []experiment.Arm
		measured, warm := map[string]int{}, map[string]int{}
		for _, r := range recs {
			if r.Experiment != name || !r.IsLoad() {
				continue
			}
			if !slices.Contains(pgs, r.Page.Spec) {
				pgs = append(pgs, r.Page.Spec)
			}
			if !slices.Contains(links, r.Link.Spec) {
				links = append(links, r.Link.Spec)
			}
			a := experiment.Arm{Protocol: r.Protocol, Mode: r.Mode}
			if !slices.Contains(arms, a) {
				arms = append(arms, a)
			}
			cell := r.Page.Spec + "|" + r.Link.Spec + "|" + a.String()
			if r.Warmup {
				warm[cell]++
			} else {
				measured[cell]++
			}
		}
		if len(pgs) == 0 {
			continue
		}
		c.Pages, c.Links, c.Arms = pgs, links, arms
		c.Runs, c.Warmup = maxCount(measured), maxCount(warm)
		out.Parts[i].Config = c
	}
	out.Flows = slices.Clone(sp.Flows)
	for i, f := range out.Flows {
		name := PartExperiment(sp.Study, f.Name)
		runs := map[string]map[int]bool{}
		longest := 0.0
		for _, r := range recs {
			if r.Experiment != name || !r.IsFlow() {
				continue
			}
			if runs[r.Mix] == nil {
				runs[r.Mix] = map[int]bool{}
			}
			runs[r.Mix][r.Run] = true
			longest = max(longest, r.DurationS)
		}
		if len(runs) == 0 {
			continue
		}
		n := 0
		for _, rs := range runs {
			n = max(n, len(rs))
		}
		out.Flows[i].Runs = n
		if longest > 0 {
			out.Flows[i].Duration = time.Duration(math.Round(longest)) * time.Second
		}
	}
	if c := sp.Custom; c != nil && c.KeyOf != nil {
		// The Custom schedule's repetitions are those its records were scheduled with (field
		// scheduled: runs of the whole schedule), so a run made with --runs is judged by them.
		sched := 0
		for _, r := range recs {
			if c.KeyOf(r) != "" {
				sched = max(sched, r.Scheduled)
			}
		}
		if sched > 0 && c.Arms > 0 && sched%c.Arms == 0 {
			cc := *c
			cc.Reps = sched / c.Arms
			out.Custom = &cc
		}
	}
	return out
}

// maxCount is the largest count of m (0 for none).
func maxCount(m map[string]int) int {
	n := 0
	for _, v := range m {
		n = max(n, v)
	}
	return n
}
