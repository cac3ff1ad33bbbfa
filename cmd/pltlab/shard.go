package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pltlab/pltlab/experiment"
)

// parseShard parses a --shard value for c ("" = not sharded) and checks that c can be split so,
// as a usage error.
func parseShard(c experiment.Config, s string) (experiment.Shard, error) {
	if s == "" {
		return experiment.Shard{}, nil
	}
	sh, err := experiment.ParseShard(s, os.Getenv)
	if err != nil {
		return sh, usagef("bad --shard: %v", err)
	}
	if _, err := experiment.PlanShards(c, sh.Count); err != nil {
		return sh, usagef("bad --shard %s: %v", s, err)
	}
	return sh, nil
}

// printDryRun prints what c would do: its loads and the cost model's time, and with a shard
// the plan of every shard (the selected one marked).
func printDryRun(w io.Writer, c experiment.Config) error {
	jobs := experiment.Schedule(c)
	total, err := experiment.Estimate(c)
	if err != nil {
		return err
	}
	runs, warmup := c.Runs, c.Warmup
	if runs == 0 {
		runs = experiment.DefaultRuns
	}
	fmt.Fprintf(w, "%d pages x %d links x %d arms x (%d runs + %d warm-ups) = %d loads; estimated %s on one machine (config_hash %s)\n",
		len(c.Pages), len(c.Links), len(c.Arms), runs, warmup, len(jobs), roundDur(total), experiment.ConfigHash(c))
	if c.Shard.Count == 0 {
		return nil
	}
	plan, err := experiment.PlanShards(c, c.Shard.Count)
	if err != nil {
		return err
	}
	var longest time.Duration
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "shard\tloads\tmeasured\testimated\tlinks")
	for _, p := range plan.Parts {
		mark := ""
		if p.Shard == c.Shard {
			mark = " *"
		}
		var links []string
		for _, l := range p.Links {
			links = append(links, c.Links[l])
		}
		longest = max(longest, p.Estimate)
		fmt.Fprintf(tw, "%s%s\t%d\t%d\t%s\t%s\n", p.Shard, mark, len(p.Jobs), p.Measured, roundDur(p.Estimate), strings.Join(links, " "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d shards: the sweep takes about %s (its longest shard) when every shard runs at once\n", c.Shard.Count, roundDur(longest))
	return nil
}

// roundDur rounds d for printing: to seconds below an hour, to minutes above.
func roundDur(d time.Duration) time.Duration {
	if d < time.Hour {
		return d.Round(time.Second)
	}
	return d.Round(time.Minute)
}
