// Package cluster writes the batch jobs that run an experiment's or a study's shards on a cluster: Slurm job-array scripts and Kubernetes Indexed Jobs, each with a final merge job.
package cluster

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/studies"
)

// Defaults of the generated jobs.
const (
	// DefaultCPUs is the whole cores given to each shard: plan.CPUsPerShard, the rule of
	// how many shards may share a node (one core for Chromium, one for the server and the link
	// emulator; README, "How many shards may share a node").
	DefaultCPUs = plan.CPUsPerShard
	// MaxCPUs is the most whole cores a shard may be given (Sweep.CPUs).
	MaxCPUs = 512
	// DevShmMiB is the memory-backed /dev/shm a Kubernetes pod gets (Chromium's shared memory;
	// its pages count against the pod's memory limit).
	DevShmMiB = 1024
	// MemoryMargin multiplies a shard's modelled footprint (experiment.PlanFootprint: pltlab,
	// the server's held page objects and one Chromium per forced protocol, measured with
	// scripts/footprint.py; BENCHMARKS.md, "Footprint") into the memory each shard requests,
	// so that a page the model has not seen or a node's other tenants do not meet the limit. A
	// Kubernetes pod adds DevShmMiB.
	MemoryMargin = 2
	// TimeMargin multiplies a shard's estimated time (the cost model, plan.LoadOverhead,
	// fitted on an unloaded 2-core machine) into its wall-time limit, plus TimeSlack: a busy or
	// slower node takes longer (at load average 5-9 on 2 cores a kakhki2017 smoke shard took 21 s
	// against an estimate of 11 s).
	TimeMargin = 2
	// TimeSlack is added to every wall-time limit (start-up, page generation, a slow node).
	TimeSlack = 10 * time.Minute
)

// mergeMemoryMiB is the merge job's memory for a sweep of loads page loads: 1 GiB plus 40 KiB a
// load (a load line is up to about 13 KB of JSON, 12.7 KB on average in the carlucci2015 fixture,
// held in memory as records about three times that).
func mergeMemoryMiB(loads int) int { return 1024 + loads*40/1024 }

// mergeTime is the merge job's time limit: 30 min plus 20 ms a load (reading, the analysis and
// the figures).
func mergeTime(loads int) time.Duration {
	return 30*time.Minute + time.Duration(loads)*20*time.Millisecond
}

// Study is a study's reproduction run as a sweep ('pltlab reproduce STUDY --shard').
type Study struct {
	// Name and Scale select the plan (studies.Lookup, studies.ParseScale).
	Name  string
	Scale studies.Scale
	// Runs (0 = the scale's) and Seed (experiment.DefaultSeed when 0) are passed to every shard
	// and to the merge: they decide the plan.
	Runs int
	Seed int64
	// Plan is the study's plan at Scale; the sweep applies Runs and Seed to it (Plan.Apply), so
	// its loads, estimates and shards are those of the jobs' runs.
	Plan studies.Plan
}

// options returns the run options that decide the plan.
func (st *Study) options() studies.RunOptions {
	return studies.RunOptions{Runs: st.Runs, Seed: st.Seed}
}

// args returns the reproduce arguments every shard and the merge share.
func (st *Study) args() []string {
	a := []string{st.Name, "--scale", string(st.Scale)}
	if st.Runs > 0 {
		a = append(a, "--runs", fmt.Sprint(st.Runs))
	}
	if st.Seed != 0 {
		a = append(a, "--seed", fmt.Sprint(st.Seed))
	}
	return a
}

// Sweep is what every generated job needs to know: a matrix sweep (Config, Matrix) or a study
// (Study).
type Sweep struct {
	// Config is the experiment (from experiment.ReadMatrix of Matrix); unused with Study.
	Config experiment.Config
	// Matrix is the matrix file's content, copied verbatim to where the jobs read it.
	Matrix []byte
	// Traces are the files the matrix refers to (trace links), by the name the copied matrix
	// uses for them (relative to its directory), each shipped beside it.
	Traces map[string][]byte
	// Study, when set, makes the sweep a study's reproduction instead of a matrix.
	Study *Study
	// Shards is the number of shards (1..plan.MaxShards).
	Shards int
	// CPUs is the whole cores per shard (DefaultCPUs when 0).
	CPUs int
	// MemoryMiB is the memory per shard in MiB; 0 means MemoryMargin x the plan's footprint
	// (Footprint). A value below the footprint is refused.
	MemoryMiB int
	// Time is the wall-time limit per shard; 0 means TimeMargin x the longest shard's estimate
	// plus TimeSlack. A limit below the longest shard's estimate is refused.
	Time time.Duration
	// Exclusive gives every shard a whole node (Slurm --exclusive; on Kubernetes the default
	// one pod per node), for studies whose timing must not share a node's memory bandwidth.
	Exclusive bool
	// ShieldCPU, when set, makes every shard run 'pltlab --shield-cpu N ...': the shard keeps
	// CPU N of its node for its own process (docs/design.md, "A shielded CPU"). The shield moves
	// every task of the node off that CPU, so it needs root there and a node of its own: Slurm
	// shards get --exclusive, Kubernetes pods run privileged in the node's PID namespace
	// (hostPID) so that the shield sees the node's tasks. A node whose process may not run on
	// CPU N refuses it at the shard's start (exit 2, naming the CPUs it has).
	ShieldCPU *int
}

// pltlabArgs returns the global arguments every shard's pltlab takes before its command:
// --shield-cpu N with ShieldCPU, none otherwise.
func (s Sweep) pltlabArgs() []string {
	if s.ShieldCPU == nil {
		return nil
	}
	return []string{"--shield-cpu", fmt.Sprint(*s.ShieldCPU)}
}

// Estimates is the cost model's view of a sweep (experiment.Schedule.Shards, studies.Prepared.Shards).
type Estimates struct {
	// Loads is the number of page loads of the whole sweep, warm-ups included once.
	Loads int
	// Total is the unsharded time on one machine.
	Total time.Duration
	// Shards are the shards' times, in shard order.
	Shards []time.Duration
	// Footprint is the memory model of one shard (every shard has the same: each brings up
	// every link of its parts with the same pages and protocols).
	Footprint experiment.Footprint
}

// Longest returns the longest shard's estimate.
func (e Estimates) Longest() time.Duration {
	var d time.Duration
	for _, s := range e.Shards {
		d = max(d, s)
	}
	return d
}

// plan checks s, applies its defaults and returns the cost model's estimates.
func (s *Sweep) plan() (Estimates, error) {
	var e Estimates
	if s.Study == nil && len(s.Matrix) == 0 {
		return e, fmt.Errorf("empty matrix: accepted the YAML matrix file of 'pltlab run --matrix'")
	}
	s.CPUs = cmp.Or(s.CPUs, DefaultCPUs)
	if s.CPUs < 1 || s.CPUs > MaxCPUs {
		return e, fmt.Errorf("bad cpus %d: accepted whole cores 1..%d", s.CPUs, MaxCPUs)
	}
	fp, err := s.footprint()
	if err != nil {
		return e, err
	}
	e.Footprint = fp
	switch {
	case s.MemoryMiB == 0:
		s.MemoryMiB = MemoryMargin * fp.MiB
	case s.MemoryMiB < fp.MiB:
		return e, fmt.Errorf("bad memory %d MiB: a shard of this plan is modelled at %s: accepted %d MiB or more (default %d)",
			s.MemoryMiB, fp, fp.MiB, MemoryMargin*fp.MiB)
	}
	if s.Time < 0 || (s.Time > 0 && s.Time < time.Minute) {
		return e, fmt.Errorf("bad time %v: accepted 1m or more", s.Time)
	}
	if s.Study != nil {
		if err := s.Study.Plan.Shardable(); err != nil {
			return e, err // its jobs would each run 'pltlab reproduce --shard', which it refuses
		}
		pr, err := s.Study.Plan.Prepare(s.Study.options()) // derived once: the shards and the total read it
		if err != nil {
			return e, err
		}
		shards, err := pr.Shards(s.Shards)
		if err != nil {
			return e, err
		}
		e.Total, e.Loads = pr.Estimate(), pr.Plan.Loads()
		for _, sh := range shards {
			e.Shards = append(e.Shards, sh.Estimate)
		}
	} else {
		c := s.Config
		c.Shard = plan.Shard{} // the whole schedule, cut once
		whole, err := experiment.NewSchedule(c)
		if err != nil {
			return e, err
		}
		p, err := whole.Shards(s.Shards)
		if err != nil {
			return e, err
		}
		e.Loads, e.Total = p.Loads, p.Estimate+plan.StartCost
		for _, sl := range p.Slices {
			e.Shards = append(e.Shards, sl.Estimate+plan.StartCost)
		}
	}
	longest := e.Longest()
	switch {
	case s.Time == 0:
		s.Time = (TimeMargin*longest + TimeSlack).Round(time.Minute)
	case s.Time < longest:
		return e, fmt.Errorf("bad time %v: the longest shard is estimated at %v: accepted at least that (default %v)",
			s.Time, longest.Round(time.Second), (TimeMargin*longest + TimeSlack).Round(time.Minute))
	}
	return e, nil
}

// TimeLimit returns the wall-time limit per shard: s.Time, or TimeMargin x the longest shard's
// estimate plus TimeSlack when s.Time is 0. Errors are those of the Sweep's checks.
func (s Sweep) TimeLimit() (time.Duration, error) {
	_, err := s.plan()
	return s.Time, err
}

// Estimate returns the cost model's estimates of the sweep (after the Sweep's checks).
func (s Sweep) Estimate() (Estimates, error) { return s.plan() }

// footprint returns the modelled peak memory of one of the sweep's shards: the largest of its
// parts' (studies.Plan.Footprint) or the matrix's (experiment.PlanFootprint).
func (s *Sweep) footprint() (experiment.Footprint, error) {
	if s.Study != nil {
		return s.Study.Plan.Apply(s.Study.options()).Footprint()
	}
	return experiment.PlanFootprint(s.Config)
}

// label names the sweep in comments: "study STUDY scale S" or "sweep NAME (config_hash H)".
func (s *Sweep) label() string {
	if s.Study != nil {
		return fmt.Sprintf("study %s scale %s", s.Study.Name, s.Study.Scale)
	}
	return fmt.Sprintf("sweep %s (config_hash %s)", s.Config.Name, experiment.ConfigHash(s.Config))
}

// shaped reports whether the sweep opens a shaped link (it then needs privileges).
func (s *Sweep) shaped() (bool, error) {
	if s.Study == nil {
		return experiment.Shaped(s.Config)
	}
	for _, c := range s.Study.Plan.Configs(s.Study.options()) {
		if sh, err := experiment.Shaped(c); err != nil || sh {
			return sh, err
		}
	}
	return len(s.Study.Plan.Flows) > 0, nil
}

// name returns a name for the sweep's jobs that Slurm and Kubernetes both accept (a DNS-1123
// label of at most 40 characters): "pltlab-" and the experiment's name, or its config hash.
func (s *Sweep) name() string {
	n := strings.ToLower(s.Config.Name)
	if s.Study != nil {
		n = s.Study.Name + "-" + string(s.Study.Scale)
	}
	n = regexp.MustCompile(`[^a-z0-9-]+`).ReplaceAllString(n, "-")
	n = strings.Trim(n, "-")
	if n == "" {
		n = experiment.ConfigHash(s.Config)
	}
	n = "pltlab-" + n
	if len(n) > 40 {
		n = strings.TrimRight(n[:40], "-")
	}
	return n
}
