// Package plan is where pltlab's work is cut into shards and joined again: the shard names of
// job arrays (Shard, ParseShard), the cut of a list of units (measured randomized complete
// blocks, flow parts) into consecutive runs balanced by the cost model (CutPoints, Units.Cut), the
// record of which units a shard was given (Membership, Digest, Units.Recorded), so that a merge checks
// what each shard owes against what the shard itself wrote, never against a cut recomputed with
// today's cost model, the merge of result files (Merge) and the node rule (NodeOverlaps). It
// imports only package result; experiment, flows, studies, cluster and analysis build on it.
package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// MaxShards bounds a shard count (a job array of more tasks is a mistake, not a sweep).
const MaxShards = 10000

// LinkSnap is how close to a balanced cut (as a fraction of the per-shard target time) a link
// boundary must be for the cut to move there, so that a shard brings up fewer links at the
// cost of up to this much imbalance.
const LinkSnap = 0.10

// Shard names part Index of Count of an experiment's schedule, 0 <= Index < Count (0-based, like
// Slurm array task IDs from 0 and Kubernetes' JOB_COMPLETION_INDEX). The zero Shard means the
// whole schedule.
type Shard struct {
	// Index is the part, from 0.
	Index int
	// Count is the number of parts (0 = not sharded).
	Count int
}

// String returns "I/N", or "" for the zero Shard.
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// ParseShard parses "I/N" (0 <= I < N <= MaxShards), "auto" or "auto/N". auto takes the index
// from the batch system's environment, read with getenv (os.Getenv in the CLI):
//   - Slurm job arrays: SLURM_ARRAY_TASK_ID minus SLURM_ARRAY_TASK_MIN (0 when unset), of
//     SLURM_ARRAY_TASK_COUNT parts (or MAX - MIN + 1); the array must be contiguous (no step);
//   - Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX, of N parts, which must then be given
//     ("auto/N": the Job's completions; the pod is not told them).
//
// With "auto/N" under Slurm, N must equal the array's size. Errors are one line naming the bad
// value and what is accepted.
func ParseShard(s string, getenv func(string) string) (Shard, error) {
	idx, count, ok := strings.Cut(s, "/")
	if idx != "auto" {
		if !ok {
			return Shard{}, fmt.Errorf("bad shard %q: accepted I/N (0 <= I < N), auto or auto/N", s)
		}
		i, err1 := atoi(idx)
		n, err2 := atoi(count)
		if err1 != nil || err2 != nil || n < 1 || n > MaxShards || i < 0 || i >= n {
			return Shard{}, fmt.Errorf("bad shard %q: accepted I/N with 0 <= I < N <= %d (shards count from 0)", s, MaxShards)
		}
		return Shard{Index: i, Count: n}, nil
	}
	given := 0
	if ok {
		n, err := atoi(count)
		if err != nil || n < 1 || n > MaxShards {
			return Shard{}, fmt.Errorf("bad shard %q: accepted auto/N with 1 <= N <= %d", s, MaxShards)
		}
		given = n
	}
	if id := getenv("SLURM_ARRAY_TASK_ID"); id != "" {
		return slurmShard(id, getenv, given)
	}
	if id := getenv("JOB_COMPLETION_INDEX"); id != "" {
		i, err := strconv.Atoi(id)
		switch {
		case err != nil || i < 0:
			return Shard{}, fmt.Errorf("bad JOB_COMPLETION_INDEX %q: accepted an integer from 0", id)
		case given == 0:
			return Shard{}, fmt.Errorf("shard auto with JOB_COMPLETION_INDEX=%s needs the shard count: accepted auto/N (N = the Job's completions)", id)
		case i >= given:
			return Shard{}, fmt.Errorf("JOB_COMPLETION_INDEX=%d is not below the shard count %d of %q", i, given, s)
		}
		return Shard{Index: i, Count: given}, nil
	}
	return Shard{}, fmt.Errorf("shard %q: neither SLURM_ARRAY_TASK_ID nor JOB_COMPLETION_INDEX is set; accepted I/N outside a job array", s)
}

// atoi parses a shard number written in decimal digits only: no sign ("+1", "-0") or spaces,
// which strconv.Atoi would take.
func atoi(s string) (int, error) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a number of digits: %q", s)
	}
	return strconv.Atoi(s)
}

// slurmShard derives the shard of a Slurm array task from its environment (sbatch(1), "OUTPUT
// ENVIRONMENT VARIABLES").
func slurmShard(id string, getenv func(string) string, given int) (Shard, error) {
	num := func(name, v string) (int, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("bad %s %q: accepted an integer from 0", name, v)
		}
		return n, nil
	}
	task, err := num("SLURM_ARRAY_TASK_ID", id)
	if err != nil {
		return Shard{}, err
	}
	lo, hi, count := 0, -1, 0
	if v := getenv("SLURM_ARRAY_TASK_MIN"); v != "" {
		if lo, err = num("SLURM_ARRAY_TASK_MIN", v); err != nil {
			return Shard{}, err
		}
	}
	if v := getenv("SLURM_ARRAY_TASK_MAX"); v != "" {
		if hi, err = num("SLURM_ARRAY_TASK_MAX", v); err != nil {
			return Shard{}, err
		}
	}
	if v := getenv("SLURM_ARRAY_TASK_COUNT"); v != "" {
		if count, err = num("SLURM_ARRAY_TASK_COUNT", v); err != nil {
			return Shard{}, err
		}
	}
	switch {
	case count == 0 && hi >= lo:
		count = hi - lo + 1
	case count == 0:
		count = given
	}
	switch {
	case count == 0:
		return Shard{}, fmt.Errorf("SLURM_ARRAY_TASK_ID=%d without SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MAX: accepted auto/N to give the count", task)
	case hi >= lo && hi-lo+1 != count:
		return Shard{}, fmt.Errorf("slurm array %d-%d has %d tasks, not contiguous: accepted an array without a step, such as --array=0-%d", lo, hi, count, count-1)
	case given != 0 && given != count:
		return Shard{}, fmt.Errorf("shard auto/%d, but the Slurm array has %d tasks: accepted auto or auto/%d", given, count, count)
	case task < lo || task-lo >= count:
		return Shard{}, fmt.Errorf("SLURM_ARRAY_TASK_ID=%d is outside the array %d..%d", task, lo, lo+count-1)
	}
	return Shard{Index: task - lo, Count: count}, nil
}

// CutPoints returns n+1 unit indexes 0 = c_0 < c_1 < ... < c_n = units: part k is the units
// [c_k, c_k+1), each part at least one unit (n <= units). cum is the cumulative cost (len
// units+1); boundary(i) says whether a cut before unit i starts a new link (a bring-up the
// part after it pays). Cut k goes to the unit boundary nearest k/n of the total, moved to the
// nearest link boundary within LinkSnap of the per-part target.
func CutPoints(cum []time.Duration, boundary func(int) bool, n int) []int {
	units := len(cum) - 1
	total := float64(cum[units])
	target := total / float64(n)
	cuts := []int{0}
	for k := 1; k < n; k++ {
		ideal := target * float64(k)
		best, bestLink := -1, -1
		for i := 1; i < units; i++ {
			d := math.Abs(float64(cum[i]) - ideal)
			if best < 0 || d < math.Abs(float64(cum[best])-ideal) {
				best = i
			}
			if boundary(i) && d <= LinkSnap*target && (bestLink < 0 || d < math.Abs(float64(cum[bestLink])-ideal)) {
				bestLink = i
			}
		}
		if bestLink >= 0 {
			best = bestLink
		}
		// Every part holds at least one unit: stay after the previous cut and leave one unit
		// for each part still to come.
		best = max(best, cuts[k-1]+1)
		best = min(best, units-(n-k))
		cuts = append(cuts, best)
	}
	return append(cuts, units)
}
