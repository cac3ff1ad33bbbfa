package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/plan"
)

// shardSchedule parses a --shard value for c ("" = not sharded) and computes c's schedule with it
// (experiment.NewSchedule), as usage errors: a shard count the schedule cannot be split into is
// refused with the largest useful one.
func shardSchedule(c experiment.Config, s string) (*experiment.Schedule, error) {
	if s != "" {
		sh, err := plan.ParseShard(s, os.Getenv)
		if err != nil {
			return nil, usagef("bad --shard: %v", err)
		}
		c.Shard = sh
	}
	sched, err := experiment.NewSchedule(c)
	if err != nil {
		if s != "" {
			return nil, usagef("bad --shard %s: %v", s, err)
		}
		return nil, asUsage(err)
	}
	return sched, nil
}

// printDryRun prints what the schedule would do: its loads and the cost model's time, and with a
// shard every shard's slice of its one cut (Schedule.Sharding; the selected one marked).
func printDryRun(w io.Writer, p *experiment.Schedule) error {
	c := p.Config
	runs, warmup := c.Runs, c.Warmup
	runs = cmp.Or(runs, experiment.DefaultRuns)
	fmt.Fprintf(w, "%d pages x %d links x %d arms x (%d runs + %d warm-ups) = %d loads; estimated %s on one machine (config_hash %s)\n",
		len(c.Pages), len(c.Links), len(c.Arms), runs, warmup, len(p.Jobs), quantity.FormatEstimate(p.Total()), experiment.ConfigHash(c))
	if c.Shard.Count == 0 {
		return nil
	}
	var longest time.Duration
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "shard\tloads\tmeasured\testimated\tlinks")
	for _, p := range p.Sharding.Slices {
		mark := ""
		if p.Shard == c.Shard {
			mark = " *"
		}
		var links []string
		for _, l := range p.Links {
			links = append(links, c.Links[l])
		}
		longest = max(longest, p.Estimate)
		fmt.Fprintf(tw, "%s%s\t%d\t%d\t%s\t%s\n", p.Shard, mark, len(p.Jobs), p.Measured, quantity.FormatEstimate(p.Estimate), strings.Join(links, " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d shards: the sweep takes about %s (its longest shard) when every shard runs at once\n", c.Shard.Count, quantity.FormatEstimate(longest))
	return nil
}
