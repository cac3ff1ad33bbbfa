package experiment

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"slices"
	"time"

	"github.com/pltlab/pltlab/device"
	"github.com/pltlab/pltlab/pages"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// ShardSlice is one shard's share of the schedule (Schedule.Share).
type ShardSlice struct {
	// Shard names the slice.
	Shard plan.Shard
	// Jobs are indexes into Order(c), ascending: the warm-up blocks of each link the slice
	// brings up, and a run of whole measured blocks of one or more consecutive links.
	Jobs []int
	// Links are the indexes (into Config.Links) of the links the slice brings up.
	Links []int
	// Units are the IDs of its measured blocks (plan.BlockID), in schedule order: what its plan
	// line records (result.PlanLine.Units) and its lines name by digest (shard_units).
	Units []string
	// Measured is the number of its loads that are not warm-ups.
	Measured int
	// Estimate is the cost model's time of the slice: its loads (EstimateLoad), warm-ups
	// included, plus one bring-up per link.
	Estimate time.Duration
}

// Sharding is an experiment split into shards (Schedule.Shards).
type Sharding struct {
	// Slices has one entry per shard, in shard order.
	Slices []ShardSlice
	// Loads is the number of loads in the whole schedule, warm-ups included.
	Loads int
	// Estimate is the cost model's time of the whole experiment run unsharded (see Estimate).
	// The slices' estimates sum to more when a link's warm-ups and bring-up are repeated.
	Estimate time.Duration
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
	for _, pg := range c.Pages {
		if src, _ := pages.ParseSource(pg); src.Replay() {
			path, digest := src.HAR, ""
			if a := c.Archives[pg]; a != nil {
				digest = a.Digest // the bytes replayed, not read again
			} else {
				digest = fileDigest(path)
			}
			out = append(out, result.InputFile{Path: path, SHA256: digest})
		}
	}
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

// configHash is ConfigHash of a Config whose defaults are applied: plan.LineHash of its plan
// line, so that a plan line read back hashes to the records' config_hash below experiment too.
func configHash(c Config) string { return plan.LineHash(planLine(c, 0)) }

// planLine is the plan line payload of c, whose defaults are applied: its configuration, the
// shard's count of loads, its input files, study and units.
func planLine(c Config, loads int) *result.PlanLine {
	p := &result.PlanLine{Pages: c.Pages, Links: c.Links, Runs: c.Runs, Warmup: c.Warmup, Seed: c.Seed, Settings: *c.settings(),
		Cross: c.Cross, Loads: loads, Inputs: InputFiles(c), Study: c.Study, Units: c.Units}
	p.Overrides = nil
	for _, a := range c.Arms {
		p.Arms = append(p.Arms, result.PlanLineArm{Protocol: a.Protocol, Mode: a.Mode})
	}
	return p
}

// PlanRecord returns the "plan" line a sharded run writes first: the configuration (so that a
// merge can recompute every shard's share without the matrix file), the shard and its count of
// loads.
func PlanRecord(c Config, loads int) *result.Record {
	c = c.withDefaults()
	return &result.Record{Kind: result.KindPlan, Experiment: c.Name, Run: -1, Time: time.Now().UTC(),
		Shard: c.Shard.String(), ShardUnits: unitsDigest(c), ConfigHash: ConfigHash(c), Plan: planLine(c, loads)}
}

// FromPlan returns the Config a plan line describes (without name, shard or machine settings);
// its input files are the plan's (their digests when the plan was written), not read again.
func FromPlan(p *result.PlanLine) Config {
	c := Config{Pages: p.Pages, Links: p.Links, Runs: p.Runs, Warmup: p.Warmup,
		Timeout: time.Duration(p.TimeoutMs * float64(time.Millisecond)), Seed: p.Seed, TCPCC: p.TCPCC, TLS: p.TLS, Cross: p.Cross,
		Device: p.Device, H3Stack: p.H3Stack, QUICCC: p.QUICCC, inputs: p.Inputs}
	if c.inputs == nil {
		c.inputs = []result.InputFile{} // the plan's, not the files as they are now
	}
	for _, a := range p.Arms {
		c.Arms = append(c.Arms, Arm{Protocol: a.Protocol, Mode: a.Mode})
	}
	return c
}

// unitsDigest is plan.Digest of c's shard units, "" when c is not sharded or records none.
func unitsDigest(c Config) string {
	if c.Shard.Count == 0 || len(c.Units) == 0 {
		return ""
	}
	return plan.Digest(c.Units)
}

// deviceSpec is the device spec as Parse reads it back ("motog2013:cgroup"), "" for the desktop,
// so that the desktop's plan line and config hash are those of a run without --device.
func deviceSpec(spec string) string {
	d, err := device.Parse(spec)
	if err != nil || d.IsDesktop() {
		return ""
	}
	return d.String()
}
