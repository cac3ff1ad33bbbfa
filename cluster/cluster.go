// Package cluster writes the batch jobs that run an experiment's shards on a cluster: Slurm job-array scripts and Kubernetes Indexed Jobs.
package cluster

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/pltlab/pltlab/experiment"
)

// Defaults of the generated jobs.
const (
	// DefaultCPUs is the whole cores given to each shard: one for Chromium, one for the server
	// and the link emulator, so that a load's timing is not CPU-starved (the development machine
	// has 2 and measures one load at a time).
	DefaultCPUs = 2
	// DefaultMemoryMiB is each shard's memory in MiB (Chromium with one tab, the server and the
	// emulator use well under 1 GiB).
	DefaultMemoryMiB = 2048
	// TimeMargin multiplies a shard's estimated time (experiment.PlanShards) into its wall-time
	// limit, plus TimeSlack: the cost model is a lower bound of the network time.
	TimeMargin = 2
	// TimeSlack is added to every wall-time limit (start-up, page generation, a slow node).
	TimeSlack = 10 * time.Minute
)

// Sweep is what every generated job needs to know of the experiment.
type Sweep struct {
	// Config is the experiment (from experiment.ReadMatrix of Matrix).
	Config experiment.Config
	// Matrix is the matrix file's content, copied verbatim to where the jobs read it.
	Matrix []byte
	// Shards is the number of shards (1..experiment.MaxShards).
	Shards int
	// CPUs is the whole cores per shard (DefaultCPUs when 0).
	CPUs int
	// MemoryMiB is the memory per shard in MiB (DefaultMemoryMiB when 0).
	MemoryMiB int
	// Time is the wall-time limit per shard; 0 means TimeMargin x the longest shard's estimate
	// plus TimeSlack.
	Time time.Duration
}

// plan checks s, applies its defaults and returns the shard plan.
func (s *Sweep) plan() (experiment.Plan, error) {
	if len(s.Matrix) == 0 {
		return experiment.Plan{}, fmt.Errorf("empty matrix: accepted the YAML matrix file of 'pltlab run --matrix'")
	}
	if s.CPUs == 0 {
		s.CPUs = DefaultCPUs
	}
	if s.CPUs < 1 || s.CPUs > 512 {
		return experiment.Plan{}, fmt.Errorf("bad cpus %d: accepted whole cores 1..512", s.CPUs)
	}
	if s.MemoryMiB == 0 {
		s.MemoryMiB = DefaultMemoryMiB
	}
	if s.MemoryMiB < 256 {
		return experiment.Plan{}, fmt.Errorf("bad memory %d MiB: accepted 256 MiB or more", s.MemoryMiB)
	}
	if s.Time < 0 || (s.Time > 0 && s.Time < time.Minute) {
		return experiment.Plan{}, fmt.Errorf("bad time %v: accepted 1m or more", s.Time)
	}
	p, err := experiment.PlanShards(s.Config, s.Shards)
	if err != nil {
		return p, err
	}
	if s.Time == 0 {
		var longest time.Duration
		for _, part := range p.Parts {
			longest = max(longest, part.Estimate)
		}
		s.Time = (TimeMargin*longest + TimeSlack).Round(time.Minute)
	}
	return p, nil
}

// TimeLimit returns the wall-time limit per shard: s.Time, or TimeMargin x the longest shard's
// estimate plus TimeSlack when s.Time is 0. Errors are those of the Sweep's checks.
func (s Sweep) TimeLimit() (time.Duration, error) {
	_, err := s.plan()
	return s.Time, err
}

// name returns a name for the sweep's jobs that Slurm and Kubernetes both accept (a DNS-1123
// label of at most 40 characters): "pltlab-" and the experiment's name, or its config hash.
func (s *Sweep) name() string {
	n := strings.ToLower(s.Config.Name)
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
