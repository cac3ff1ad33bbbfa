package studies

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
)

// flowsPause separates the runs of a flow part, so the link's queue drains between them.
const flowsPause = 2 * time.Second

// This file links the flows package into the studies: with it, plans' flow parts run and the
// safe-deployment sections and findings are judged from their "kind":"flow" records.
func init() {
	flowRunner = runFlowPart
	flowResults = readFlowResults
	flowGoodputFigure = goodputFigure
}

// runFlowPart opens f's link once, then runs every mix f.Runs times (flows.Run), writing every
// flow record, named experiment, to w.
func runFlowPart(ctx context.Context, experiment string, f FlowPart, o RunOptions, w *result.Writer) error {
	spec, err := shaping.ParseSpec(f.Link)
	if err != nil {
		return fmt.Errorf("flow link: %w", err)
	}
	if spec.Seed == 0 {
		spec.Seed = o.Seed
	}
	mixes := make([][]flows.Spec, len(f.Mixes))
	for i, m := range f.Mixes {
		for _, s := range m {
			fs, err := flows.ParseSpec(s)
			if err != nil {
				return err
			}
			mixes[i] = append(mixes[i], fs)
		}
	}
	l, err := shaping.Open(ctx, spec)
	if err != nil {
		return fmt.Errorf("open link: %w", err)
	}
	srv, err := flows.NewServer(ctx, l, o.Logger)
	if err != nil {
		return errors.Join(err, l.Close())
	}
	env := &result.Env{Pltlab: o.Version, CPUs: runtime.NumCPU(), Seed: o.Seed}
	env.Host, _ = os.Hostname()
	err = func() error {
		for run := range f.Runs {
			for _, mix := range mixes {
				recs, err := flows.Run(ctx, l, srv, flows.Config{Flows: mix, Duration: f.Duration, Seed: o.Seed, Run: run,
					Experiment: experiment, Env: env, Logger: o.Logger})
				if err != nil {
					return err
				}
				for _, r := range recs {
					r.Link.Spec = f.Link
					r.Shard = o.Shard.String() // "" unsharded
					if err := w.Write(r); err != nil {
						return err
					}
				}
				if err := srv.CloseConnections(); err != nil {
					return err
				}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(flowsPause):
				}
			}
		}
		return nil
	}()
	return errors.Join(err, srv.Close(), l.Close())
}

// readFlowResults turns a flow part's records into one FlowMixResult per (mix, run), in order.
func readFlowResults(recs []*result.Record, experiment string) []FlowMixResult {
	var out []FlowMixResult
	index := map[[2]any]int{}
	for _, r := range recs {
		if !r.IsFlow() || r.Experiment != experiment {
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
			Utilization: util, LossRatio: r.LossRatio})
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
