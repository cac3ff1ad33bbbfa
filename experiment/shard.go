package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/linkspec"
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
		i, err1 := strconv.Atoi(idx)
		n, err2 := strconv.Atoi(count)
		if err1 != nil || err2 != nil || n < 1 || n > MaxShards || i < 0 || i >= n {
			return Shard{}, fmt.Errorf("bad shard %q: accepted I/N with 0 <= I < N <= %d (shards count from 0)", s, MaxShards)
		}
		return Shard{Index: i, Count: n}, nil
	}
	given := 0
	if ok {
		n, err := strconv.Atoi(count)
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

// Part is one shard's share of the schedule.
type Part struct {
	// Shard names the part.
	Shard Shard
	// Jobs are indexes into Schedule(c), ascending: the warm-up blocks of each link the part
	// brings up, and a run of whole measured blocks of one or more consecutive links.
	Jobs []int
	// Links are the indexes (into Config.Links) of the links the part brings up.
	Links []int
	// Measured is the number of its loads that are not warm-ups.
	Measured int
	// Estimate is the cost model's time of the part: its loads (EstimateLoad), warm-ups
	// included, plus one bring-up per link.
	Estimate time.Duration
}

// ShardPlan is an experiment split into shards (Plan.Shards).
type ShardPlan struct {
	// Parts has one entry per shard, in shard order.
	Parts []Part
	// Loads is the number of loads in the whole schedule, warm-ups included.
	Loads int
	// Estimate is the cost model's time of the whole experiment run unsharded (see Estimate).
	// The parts' estimates sum to more when a link's warm-ups and bring-up are repeated.
	Estimate time.Duration
}

// PlanShards splits Schedule(c) into n parts that every shard of a job array computes alike
// (the plan depends only on the configuration). The schedule is a sequence of randomized
// complete blocks, link after link, each link's warm-up blocks first; the measured blocks are
// cut into n consecutive runs of whole blocks, so every part keeps the design (every block holds
// each (page, arm) cell once) and measures something. Every part also makes the warm-up blocks
// of each link it brings up, so that no shard measures its first loads cold on a fresh node: a
// warm-up load is therefore in every part that holds its link (its line carries the shard, and
// Merge keeps each shard's). Cuts are placed by the cost model (EstimateLoad, per-link bring-up
// and warm-ups), not by count: cut k goes to the block boundary nearest k/n of the total
// estimated time, moved to the nearest boundary between links when one lies within LinkSnap of
// the per-shard target (CutPoints), so that links are split only where balance needs it.
// It is Plan.Shards of NewPlan(c) without c's own shard.
// Errors: a spec that does not parse, n outside 1..MaxShards, or more shards than measured
// blocks (links x runs), naming the largest useful count.
func PlanShards(c Config, n int) (ShardPlan, error) {
	p, err := NewPlan(unsharded(c))
	if err != nil {
		return ShardPlan{}, err
	}
	return p.Shards(n)
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

// ShardJobs returns the indexes into Schedule(c) of the loads of c.Shard (c.Subset when set;
// every index when c is not sharded), ascending: NewPlan(c).Mine.
func ShardJobs(c Config) ([]int, error) {
	p, err := NewPlan(c)
	if err != nil {
		return nil, err
	}
	return p.Mine, nil
}

// hashed is what ConfigHash covers: every setting that decides which loads are made and how.
type hashed struct {
	Pages   []string `json:"pages"`
	Links   []string `json:"links"`
	Arms    []Arm    `json:"arms"`
	Runs    int      `json:"runs"`
	Warmup  int      `json:"warmup"`
	Timeout string   `json:"timeout"`
	Seed    int64    `json:"seed"`
	TCPCC   string   `json:"tcp_cc"`
	TLS     string   `json:"tls"`
	Cross   string   `json:"cross,omitempty"`
	// Inputs are the files the links read (trace:FILE) with their content digests; absent when
	// none is read, so a configuration without such files keeps the hash it always had.
	Inputs []result.InputFile `json:"inputs,omitempty"`
}

// InputFiles returns the files the links of c read (each trace:FILE, in link order, each path
// once) with the SHA-256 of their content now. A file that cannot be read gets the digest
// "unreadable: ERROR", which no content hashes to. Pages are generated from their specs and
// read no file.
func InputFiles(c Config) []result.InputFile {
	if c.inputs != nil {
		return c.inputs
	}
	var out []result.InputFile
	for _, l := range c.Links {
		for _, path := range linkspec.InputFiles(l) {
			if slices.ContainsFunc(out, func(f result.InputFile) bool { return f.Path == path }) {
				continue
			}
			out = append(out, result.InputFile{Path: path, SHA256: fileDigest(path)})
		}
	}
	return out
}

// fileDigest returns the lowercase hex SHA-256 of the file's content, or "unreadable: ERROR".
func fileDigest(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unreadable: " + err.Error()
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ConfigHash returns the hash of c's configuration: the first 16 hex digits of the SHA-256 of
// its pages, links, arms, runs, warm-ups, timeout, seed, TCP congestion control, TLS version and
// cross traffic (defaults applied) and the content digests of the files its links read
// (InputFiles: a trace edited between two shards changes the hash) as JSON. It does not depend on the shard, the name, the Chromium binary, the
// temporary directory or whether links are self-checked, so every shard of one sweep has the
// same hash and shards of different sweeps do not.
func ConfigHash(c Config) string { return configHash(c.withDefaults()) }

// configHash is ConfigHash of a Config whose defaults are applied.
func configHash(c Config) string {
	b, _ := json.Marshal(hashed{Pages: c.Pages, Links: c.Links, Arms: c.Arms, Runs: c.Runs, Warmup: c.Warmup,
		Timeout: c.Timeout.String(), Seed: c.Seed, TCPCC: c.TCPCC, TLS: c.TLS, Cross: c.Cross, Inputs: InputFiles(c)})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// PlanRecord returns the "plan" line a sharded run writes first: the configuration (so that a
// merge can recompute every shard's share without the matrix file), the shard and its count of
// loads.
func PlanRecord(c Config, loads int) *result.Record {
	c = c.withDefaults()
	p := &result.Plan{Pages: c.Pages, Links: c.Links, Runs: c.Runs, Warmup: c.Warmup,
		TimeoutMs: float64(c.Timeout) / float64(time.Millisecond), Seed: c.Seed, TCPCC: c.TCPCC, TLS: c.TLS, Cross: c.Cross, Loads: loads,
		Inputs: InputFiles(c), Study: c.Study}
	for _, a := range c.Arms {
		p.Arms = append(p.Arms, result.PlanArm{Protocol: a.Protocol, Mode: a.Mode})
	}
	return &result.Record{Kind: result.KindPlan, Experiment: c.Name, Run: -1, Time: time.Now().UTC(),
		Shard: c.Shard.String(), ConfigHash: ConfigHash(c), Plan: p}
}

// FromPlan returns the Config a plan line describes (without name, shard or machine settings);
// its input files are the plan's (their digests when the plan was written), not read again.
func FromPlan(p *result.Plan) Config {
	c := Config{Pages: p.Pages, Links: p.Links, Runs: p.Runs, Warmup: p.Warmup,
		Timeout: time.Duration(p.TimeoutMs * float64(time.Millisecond)), Seed: p.Seed, TCPCC: p.TCPCC, TLS: p.TLS, Cross: p.Cross,
		inputs: p.Inputs}
	if c.inputs == nil {
		c.inputs = []result.InputFile{} // the plan's, not the files as they are now
	}
	for _, a := range p.Arms {
		c.Arms = append(c.Arms, Arm{Protocol: a.Protocol, Mode: a.Mode})
	}
	return c
}

// Block is one measured randomized complete block of Schedule(c): the smallest piece a shard
// plan gives out.
type Block struct {
	// Link indexes Config.Links.
	Link int
	// Jobs are the block's indexes into Schedule(c), ascending (every (page, arm) cell once).
	Jobs []int
	// Cost is the cost model's time of the block's loads.
	Cost time.Duration
}

// LinkEntry is what a process pays before the first measured block of a link: bringing it up
// (LinkCheckTime or LinkUpCost, BrowserLaunchCost and BrowserCloseCost per page and protocol) and
// its warm-up blocks.
type LinkEntry struct {
	// Warmups are the link's warm-up loads, indexes into Schedule(c), ascending.
	Warmups []int
	// Cost is the cost model's time of the bring-up and the warm-ups.
	Cost time.Duration
}

// Blocks returns the measured blocks of Schedule(c) in schedule order (link after link) and per
// link its entry (LinkEntry): Plan.Blocks of NewPlan(c) without c's shard. It fails on a spec
// that does not parse.
func Blocks(c Config) ([]Block, []LinkEntry, error) {
	p, err := NewPlan(unsharded(c))
	if err != nil {
		return nil, nil, err
	}
	b, e := p.Blocks()
	return b, e, nil
}
