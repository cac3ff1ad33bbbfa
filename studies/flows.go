package studies

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/artifacts"
	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/result"
)

// This file runs the plans' flow parts through the flows package and reads their "kind":"flow"
// records for the safe-deployment sections and findings.

// runFlowPart runs flow part f through the one bulk-flows runner (flows.Execute: seeded
// schedule, link self-check, artifacts, complete env), writing every record, named experiment,
// to w. The artifacts are those o.Configure sets for the page loads, restricted to what flows
// keep (pcap, qlog); "slowest" keeps every run, flows having no PLT. It returns the number of
// artifacts not written whole.
func runFlowPart(ctx context.Context, experiment string, f FlowPart, o RunOptions, w *result.Writer) (int, error) {
	mixes := make([][]flows.Spec, len(f.Mixes))
	for i, m := range f.Mixes {
		for _, s := range m {
			fs, err := flows.ParseSpec(s)
			if err != nil {
				return 0, err
			}
			mixes[i] = append(mixes[i], fs)
		}
	}
	art := flowArtifacts(o)
	if f.H3Stack == flows.StackNgtcp2 {
		// gtlsserver's qlogs are read for the sender's counters and removed (flows.MixExperiment.Check)
		if slices.Contains(art.Kinds, artifacts.Qlog) && o.Logger != nil {
			o.Logger.Warn("flow part on the ngtcp2 stack: its qlogs are read for the sender's counters, not kept as artifacts", "part", f.Name)
		}
		art.Kinds = slices.DeleteFunc(art.Kinds, func(k artifacts.Kind) bool { return k == artifacts.Qlog })
		if len(art.Kinds) == 0 {
			art = artifacts.Config{}
		}
	}
	seed := o.Seed
	if f.Seed != 0 {
		seed = f.Seed // a part of its own draws (--decide)
	}
	p := flows.MixExperiment{Link: f.Link, Mixes: mixes, Runs: f.Runs, Duration: f.Duration, Seed: seed, H3Stack: f.H3Stack,
		Experiment: experiment, Version: o.Version, Artifacts: art,
		SkipLinkCheck: o.SkipLinkCheck,
		Resume:        o.Resume, Logger: o.Logger}
	shard := o.Shard.String() // "" unsharded
	sum, err := flows.Execute(ctx, p, func(r *result.Record) error {
		r.Shard, r.ShardUnits = shard, o.units
		return w.Write(r)
	})
	return sum.ArtifactsFailed, err
}

// flowArtifacts returns the artifacts o.Configure sets for the page loads, restricted to the
// kinds a flow run keeps.
func flowArtifacts(o RunOptions) artifacts.Config {
	if o.Configure == nil {
		return artifacts.Config{}
	}
	var c experiment.Config
	o.Configure(&c)
	a := c.Artifacts
	a.Kinds = slices.DeleteFunc(slices.Clone(a.Kinds), func(k artifacts.Kind) bool { return k != artifacts.Pcap && k != artifacts.Qlog })
	if a.For == artifacts.KeepSlowest {
		a.For = artifacts.KeepAll
	}
	return a
}

// binsOf is f's goodput series cut to [from, to] seconds (whole bins; nil when the series or
// the span is empty).
func binsOf(f *result.Flow, from, to float64) []float64 {
	if f == nil || f.BinMs <= 0 || to <= from {
		return nil
	}
	a, b := int(math.Round(from*1000/f.BinMs)), int(math.Round(to*1000/f.BinMs))
	a, b = max(a, 0), min(b, len(f.Series))
	if b <= a {
		return nil
	}
	return f.Series[a:b]
}

// readFlowResults turns a flow part's records into one FlowMixResult per (mix, run), in order.
// A run with a flow that is invalid for any reason but starvation (the emulator late, no
// connection, the protocol not observed: flowRunsLeftOut) is left out whole, since its
// goodputs, shares and Jain's index are not a measurement of the mix; a starved flow is a
// fact of the mix and stays, with its goodput of 0.
func readFlowResults(recs []*result.Record, experiment string) []FlowMixResult {
	var out []FlowMixResult
	index := map[[2]any]int{}
	bad := map[[2]any]bool{}
	for _, k := range flowRunsLeftOut(recs, experiment) {
		bad[[2]any{k.mix, k.run}] = true
	}
	for _, r := range recs {
		if !r.IsFlow() || r.Experiment != experiment || bad[[2]any{r.Mix, r.Run}] {
			continue
		}
		k := [2]any{r.Mix, r.Run}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, FlowMixResult{Mix: r.Mix, Run: r.Run, Jain: r.Jain})
		}
		util := r.Utilization // a flow alone: the run's utilization over its steady window
		if r.Flows > 1 && r.Link.DownBps > 0 {
			util = r.GoodputBps / float64(r.Link.DownBps)
		}
		out[i].Flows = append(out[i].Flows, FlowResult{Spec: r.Protocol + ":" + r.CC, GoodputBps: r.GoodputBps,
			Utilization: util, LossRatio: r.LossRatio, Steady: binsOf(r.Flow, r.SteadyFromS, r.SteadyToS),
			RateBps: float64(r.Link.DownBps), BinMs: r.BinMs})
		if r.Flows > 1 && r.JainToS > r.JainFromS {
			out[i].Common = append(out[i].Common, binsOf(r.Flow, r.JainFromS, r.JainToS))
		}
	}
	for i := range out {
		if len(out[i].Common) != len(out[i].Flows) {
			out[i].Common = nil // a flow without the common span: no joint series
		}
	}
	for i := range out {
		var sum float64
		for _, f := range out[i].Flows {
			sum += f.GoodputBps
		}
		for j := range out[i].Flows {
			if sum > 0 {
				out[i].Flows[j].Share = out[i].Flows[j].GoodputBps / sum
			}
		}
	}
	return out
}

// goodputFigure is the goodput over time of every run of the flow part (analysis.GoodputPlot).
func goodputFigure(recs []*result.Record, experiment, file string) (Figure, bool) {
	var mine []*result.Record
	for _, r := range recs {
		if r.IsFlow() && r.Experiment == experiment {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return Figure{}, false
	}
	rep := analysis.Analyze(mine, analysis.Options{})
	return Figure{File: file, Caption: "Goodput over time per run: one line per flow; the dashed line is the bottleneck rate.",
		Render: func(w io.Writer, format string) error { return rep.WritePlot(w, analysis.GoodputPlot, format) }}, true
}

// leftOutRun is a flow run left out of a part's results, and why (its first invalid flow's
// reason).
type leftOutRun struct {
	mix, why string
	run      int
}

// flowRunsLeftOut returns the (mix, run) pairs of experiment's flow records with a flow that
// is invalid and not starved, in the records' order.
func flowRunsLeftOut(recs []*result.Record, experiment string) []leftOutRun {
	var out []leftOutRun
	seen := map[[2]any]bool{}
	for _, r := range recs {
		if !r.IsFlow() || r.Experiment != experiment || r.Valid || r.Starved {
			continue
		}
		k := [2]any{r.Mix, r.Run}
		if !seen[k] {
			seen[k] = true
			out = append(out, leftOutRun{mix: r.Mix, run: r.Run, why: r.InvalidReason})
		}
	}
	return out
}

// flowsLeftOutText is the sentence naming the runs of a flow part (and the runs --decide added
// to it) left out of its results, or "" when none was.
func (e *Support) flowsLeftOutText(part string) string {
	name := PartExperiment(e.Study.Name, part)
	var out []leftOutRun
	for _, x := range append([]string{name}, decideExperiments(e.Records, name)...) {
		out = append(out, flowRunsLeftOut(e.Records, x)...)
	}
	if len(out) == 0 {
		return ""
	}
	return fmt.Sprintf("%d run(s) left out, a flow of each not valid (so its shares and Jain's index measure no mix); the first: %s run %d, %s.",
		len(out), out[0].mix, out[0].run, out[0].why)
}
