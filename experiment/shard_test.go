package experiment

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
)

// kakhkiLike is a heterogeneous sweep: pages and links whose loads differ in cost by orders of
// magnitude.
func kakhkiLike() Config {
	return Config{
		Pages: []string{"1x5KB", "10x100KB", "1x10MB"},
		Links: []string{"rate=5mbit,rtt=100ms", "rate=100mbit,rtt=10ms", "rate=50mbit,rtt=50ms,loss=1%", "none"},
		Arms:  CrossArms([]string{"h2", "h3"}, []result.Mode{result.Cold, result.Warm}),
		Runs:  10, Warmup: 1, Seed: 3,
	}
}

func TestPlanShardsPartition(t *testing.T) {
	configs := map[string]Config{
		"kakhki-like": kakhkiLike(),
		"one link":    {Pages: []string{"10x30KB"}, Links: []string{"carlucci2015"}, Arms: CrossArms([]string{"h1", "h2", "h3"}, []result.Mode{result.Cold}), Runs: 8, Warmup: 2},
		"many links":  {Pages: []string{"5x10KB"}, Links: []string{"none", "3g", "4g", "cable", "dsl", "carlucci2015"}, Arms: CrossArms([]string{"h2"}, []result.Mode{result.Cold}), Runs: 3},
	}
	for name, c := range configs {
		jobs := Order(c)
		for _, n := range []int{1, 2, 3, 4, 5, 8} {
			t.Run(name+"/"+string(rune('0'+n)), func(t *testing.T) {
				sp, err := planShards(c, n)
				if err != nil {
					t.Fatal(err)
				}
				if len(sp.Slices) != n || sp.Loads != len(jobs) {
					t.Fatalf("%d parts of %d loads, want %d of %d", len(sp.Slices), sp.Loads, n, len(jobs))
				}
				seen := make([]int, len(jobs))
				measured := 0
				for k, p := range sp.Slices {
					if p.Shard != (plan.Shard{Index: k, Count: n}) || len(p.Jobs) == 0 || p.Measured == 0 {
						t.Fatalf("part %d: shard %v, %d jobs, %d measured", k, p.Shard, len(p.Jobs), p.Measured)
					}
					warmed := map[int]int{}
					for _, i := range p.Jobs {
						seen[i]++
						if jobs[i].Warmup {
							warmed[jobs[i].Link]++
						}
					}
					for _, l := range p.Links {
						if want := c.Warmup * len(c.Pages) * len(c.Arms); warmed[l] != want {
							t.Fatalf("part %d brings up link %d with %d warm-up loads, want %d", k, l, warmed[l], want)
						}
					}
					measured += p.Measured
					checkBlocks(t, c, jobs, p)
				}
				for i, s := range seen {
					// A measured load is in exactly one part; a warm-up in every part that holds its link.
					if !jobs[i].Warmup && s != 1 {
						t.Fatalf("load %d (%+v) is in %d parts, want exactly 1 (disjoint, union = schedule)", i, jobs[i], s)
					}
					if jobs[i].Warmup && s < 1 {
						t.Fatalf("warm-up %d (%+v) is in no part", i, jobs[i])
					}
				}
				if want := len(c.Links) * len(c.Pages) * len(c.Arms) * c.Runs; measured != want {
					t.Fatalf("measured loads %d, want %d", measured, want)
				}
				again, _ := planShards(c, n)
				if !reflect.DeepEqual(sp, again) {
					t.Fatal("the same config gave another plan")
				}
			})
		}
	}
}

// checkBlocks checks that part p holds whole randomized complete blocks: per link, its loads are
// a multiple of the cells, and each consecutive run of cells holds every (page, arm) once.
func checkBlocks(t *testing.T, c Config, jobs []Job, p ShardSlice) {
	t.Helper()
	cells := len(c.Pages) * len(c.Arms)
	if len(p.Jobs)%cells != 0 {
		t.Fatalf("shard %v has %d loads, not whole blocks of %d", p.Shard, len(p.Jobs), cells)
	}
	for b := 0; b < len(p.Jobs); b += cells {
		seen := map[Job]bool{}
		for _, i := range p.Jobs[b : b+cells] {
			j := jobs[i]
			key := Job{Link: j.Link, Page: j.Page, Arm: j.Arm}
			if seen[key] {
				t.Fatalf("shard %v: block at %d repeats %+v", p.Shard, b, key)
			}
			seen[key] = true
		}
	}
}

func TestPlanShardsBalance(t *testing.T) {
	c := kakhkiLike()
	p, err := NewSchedule(c)
	if err != nil {
		t.Fatal(err)
	}
	var maxBlock, maxSetup time.Duration
	for _, b := range p.Units("") {
		maxBlock = max(maxBlock, b.Cost)
	}
	for _, s := range p.Setup {
		maxSetup = max(maxSetup, s)
	}
	for _, n := range []int{2, 3, 4, 6, 10} {
		sp, err := planShards(c, n)
		if err != nil {
			t.Fatal(err)
		}
		target := sp.Estimate / time.Duration(n)
		var longest, shortest time.Duration = 0, 1 << 62
		links := 0
		for _, p := range sp.Slices {
			longest, shortest = max(longest, p.Estimate), min(shortest, p.Estimate)
			links += len(p.Links)
		}
		// A cut lands within one block of its ideal place (or moves to a link boundary within
		// plan.LinkSnap of the target), and a split link is brought up once more.
		// A split link also makes its warm-up blocks once more.
		slack := time.Duration(1+c.Warmup)*maxBlock + maxSetup + time.Duration(plan.LinkSnap*float64(target))
		if longest > target+slack {
			t.Errorf("n=%d: longest shard %v, target %v, slack %v", n, longest, target, slack)
		}
		// Each cut splits at most one link.
		if links > len(c.Links)+n-1 {
			t.Errorf("n=%d: %d link bring-ups, want <= %d", n, links, len(c.Links)+n-1)
		}
		t.Logf("n=%d: total %v, per shard %v..%v, %d link bring-ups", n, sp.Estimate.Round(time.Second), shortest.Round(time.Second), longest.Round(time.Second), links)
	}
}

func TestPlanShardsByCostNotCount(t *testing.T) {
	// One expensive link (10 MB at 5 Mbit/s: 16 s a load) and one cheap one: two shards by count
	// would be one link each; by time the cheap link joins part of the expensive one.
	c := Config{Pages: []string{"1x10MB"}, Links: []string{"rate=5mbit,rtt=50ms", "rate=100mbit,rtt=10ms"},
		Arms: CrossArms([]string{"h2"}, []result.Mode{result.Cold}), Runs: 20}
	sp, err := planShards(c, 2)
	if err != nil {
		t.Fatal(err)
	}
	a, b := sp.Slices[0].Estimate, sp.Slices[1].Estimate
	if r := float64(max(a, b)) / float64(min(a, b)); r > 1.2 {
		t.Fatalf("shards of %v and %v: ratio %.2f, want balanced by time", a, b, r)
	}
	if len(sp.Slices[1].Links) != 2 {
		t.Fatalf("second shard brings up links %v, want the end of the slow one and the fast one", sp.Slices[1].Links)
	}
}

func TestPlanShardsLinksFirst(t *testing.T) {
	// Four links of equal cost (they differ only in their queue) in four shards: one link each,
	// no link split.
	c := Config{Pages: []string{"10x30KB"}, Links: []string{"3g", "4g", "cable", "dsl"},
		Arms: CrossArms([]string{"h2", "h3"}, []result.Mode{result.Cold}), Runs: 5}
	for i := range c.Links {
		c.Links[i] = "rate=10mbit,rtt=40ms,queue=" + string(rune('5'+i)) + "0pkt"
	}
	sp, err := planShards(c, 4)
	if err != nil {
		t.Fatal(err)
	}
	for k, p := range sp.Slices {
		if !reflect.DeepEqual(p.Links, []int{k}) {
			t.Fatalf("shard %d brings up links %v, want [%d]", k, p.Links, k)
		}
	}
}

func TestPlanShardsErrors(t *testing.T) {
	c := Config{Pages: []string{"1x5KB"}, Links: []string{"none"}, Arms: CrossArms([]string{"h2"}, []result.Mode{result.Cold}), Runs: 3}
	for _, n := range []int{0, 4, plan.MaxShards + 1} {
		if _, err := planShards(c, n); err == nil || !strings.Contains(err.Error(), "bad shard count") {
			t.Errorf("n=%d: err = %v", n, err)
		}
	}
	c.Links = []string{"rate=fast"}
	if _, err := planShards(c, 1); err == nil || !strings.Contains(err.Error(), "bad link") {
		t.Errorf("bad link: err = %v", err)
	}
}

func TestConfigHash(t *testing.T) {
	c := kakhkiLike()
	h := ConfigHash(c)
	if len(h) != 16 {
		t.Fatalf("hash %q, want 16 hex digits", h)
	}
	same := c
	same.Shard, same.Name, same.Chrome, same.SkipLinkCheck = plan.Shard{Index: 1, Count: 4}, "other", "/x/chromium", true
	if ConfigHash(same) != h {
		t.Fatal("the hash depends on the shard, name, browser or link check")
	}
	explicit := c
	explicit.Timeout, explicit.TCPCC, explicit.TLS, explicit.Device = DefaultTimeout, DefaultTCPCC, "1.3", "desktop"
	explicit.H3Stack, explicit.QUICCC = server.StackQUICGo, ""
	if ConfigHash(explicit) != h {
		t.Fatal("defaults written out change the hash")
	}
	d1, d2 := kakhkiLike(), kakhkiLike()
	d1.Device, d2.Device = "motog2013", "motog2013:cgroup" // the same device, its mechanism written out
	if ConfigHash(d1) != ConfigHash(d2) || ConfigHash(d1) == h {
		t.Error("one device spelled two ways hashes differently, or a device hashes as the desktop")
	}
	for name, change := range map[string]func(*Config){
		"runs":   func(c *Config) { c.Runs++ },
		"seed":   func(c *Config) { c.Seed++ },
		"links":  func(c *Config) { c.Links = c.Links[1:] },
		"tls":    func(c *Config) { c.TLS = "1.2" },
		"device": func(c *Config) { c.Device = "motog2013" },
		"h3":     func(c *Config) { c.H3Stack = server.StackNgtcp2 },
	} {
		d := kakhkiLike()
		change(&d)
		if ConfigHash(d) == h {
			t.Errorf("changing %s keeps the hash", name)
		}
	}
	// The ngtcp2 stack: its default controller written out hashes alike, another one apart, and
	// the plan line carries both so that a merge rebuilds the same hash.
	n1, n2, n3 := kakhkiLike(), kakhkiLike(), kakhkiLike()
	n1.H3Stack, n2.H3Stack, n2.QUICCC, n3.H3Stack, n3.QUICCC = server.StackNgtcp2, server.StackNgtcp2, server.DefaultNgtcp2CC, server.StackNgtcp2, "bbr"
	if ConfigHash(n1) != ConfigHash(n2) || ConfigHash(n1) == ConfigHash(n3) {
		t.Error("ngtcp2's default controller written out changes the hash, or bbr hashes as cubic")
	}
	if p := PlanRecord(n3, 1).Plan; p.H3Stack != server.StackNgtcp2 || p.QUICCC != "bbr" || ConfigHash(FromPlan(p)) != ConfigHash(n3) {
		t.Errorf("plan line of an ngtcp2 run: %q %q", p.H3Stack, p.QUICCC)
	}
	if st := n3.Settings(); st.H3Stack != server.StackNgtcp2 || st.QUICCC != "bbr" || c.Settings().H3Stack != "" {
		t.Errorf("settings: %+v", st)
	}
	// Every shard of a sweep is named alike without a name given.
	a, b := c, c
	a.Shard, b.Shard = plan.Shard{Index: 0, Count: 2}, plan.Shard{Index: 1, Count: 2}
	if na, nb := a.withDefaults().Name, b.withDefaults().Name; na != nb || na != "sweep-"+h {
		t.Fatalf("shard names %q and %q, want sweep-%s", na, nb, h)
	}
}

func TestPlanRecordRoundTrip(t *testing.T) {
	c := kakhkiLike()
	c.Shard = plan.Shard{Index: 1, Count: 3}
	rec := PlanRecord(c, 42)
	if rec.Kind != result.KindPlan || rec.Shard != "1/3" || rec.ConfigHash != ConfigHash(c) || rec.Plan.Loads != 42 {
		t.Fatalf("plan record %+v", rec)
	}
	if got := ConfigHash(FromPlan(rec.Plan)); got != rec.ConfigHash {
		t.Fatalf("config from the plan hashes to %s, want %s", got, rec.ConfigHash)
	}
}

func TestShardJobs(t *testing.T) {
	c := kakhkiLike()
	all, err := shardJobs(c)
	if err != nil || len(all) != len(Order(c)) {
		t.Fatalf("unsharded: %d jobs, %v", len(all), err)
	}
	n := 0
	jobs := Order(c)
	for i := range 3 {
		c.Shard = plan.Shard{Index: i, Count: 3}
		part, err := shardJobs(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range part {
			if !jobs[j].Warmup {
				n++
			}
		}
	}
	if want := len(c.Links) * len(c.Pages) * len(c.Arms) * c.Runs; n != want {
		t.Fatalf("shards hold %d measured jobs, want %d", n, want)
	}
	p, err := NewSchedule(unsharded(c))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Select(c.Shard, "", []int{1, 2}, nil); err != nil || !reflect.DeepEqual(p.Mine, []int{1, 2}) {
		t.Fatalf("selected: %v, %v", p.Mine, err)
	}
	if err := p.Select(c.Shard, "", []int{len(jobs)}, nil); err == nil {
		t.Fatal("a selection outside the schedule: no error")
	}
}

func TestEstimateLoad(t *testing.T) {
	c := Config{Pages: []string{"1x10MB", "1x5KB"}, Links: []string{"rate=5mbit,rtt=0ms", "rate=100mbit,rtt=0ms"},
		Arms: CrossArms([]string{"h2"}, []result.Mode{result.Cold}), Runs: 1}
	m, err := newCost(c)
	if err != nil {
		t.Fatal(err)
	}
	// Without an RTT there is no slow start: the bytes at the rate, and the browser's floor.
	slow, fast := m.Load(0, 0, "h2", result.Cold)-plan.LoadOverhead-plan.PLTFloor, m.Load(1, 1, "h2", result.Cold)-plan.LoadOverhead-plan.PLTFloor
	if slow != 16640*time.Millisecond {
		t.Fatalf("10 MB at 5 Mbit/s: %v, want 16.64s (16 s plus 4 %% framing)", slow)
	}
	if r := float64(slow) / float64(fast); r < 39900 || r > 40100 {
		t.Fatalf("10 MB at 5 Mbit/s vs 5 KB at 100 Mbit/s: ratio %.0f, want 40000 (2000 x the bytes at 1/20 of the rate)", r)
	}
	if w, cold := m.Load(1, 1, "h2", result.Warm), m.Load(1, 1, "h2", result.Cold); w != 2*cold-plan.LoadOverhead+plan.WarmPriming {
		t.Fatalf("warm %v, want two cold loads %v less one overhead plus WarmPriming", w, cold)
	}
	if d := plan.EstimateLoad(plan.EstimatePLT(m.Pages[0], m.Links[0], "h2", result.Cold, "1.3", 5*time.Second), result.Cold); d != 5*time.Second+plan.LoadOverhead {
		t.Fatalf("capped by the deadline: %v", d)
	}
	// The ngtcp2 stack's idle-out wait is counted per QUIC load, never for TCP.
	c.H3Stack = "ngtcp2"
	c.Arms = CrossArms([]string{"h2", "h3"}, []result.Mode{result.Cold})
	n, err := newCost(c)
	if err != nil {
		t.Fatal(err)
	}
	if n.Protocols != 2 || n.Ngtcp2Idle != server.Ngtcp2IdleTimeout {
		t.Fatalf("model %d protocols, idle %v", n.Protocols, n.Ngtcp2Idle)
	}
	h2, h3 := n.Load(1, 1, "h2", result.Cold), n.Load(1, 1, "h3", result.Cold)
	plain := plan.EstimateLoad(plan.EstimatePLT(n.Pages[1], n.Links[1], "h3", result.Cold, "", 0), result.Cold)
	if h2 != m.Load(1, 1, "h2", result.Cold) || h3 != plain+plan.Ngtcp2Wait(result.Cold, server.Ngtcp2IdleTimeout) {
		t.Fatalf("ngtcp2: h2 %v, h3 %v (without the wait %v)", h2, h3, plain)
	}
}

// TestEveryShardWarmsUpAndMeasures is the case that made a warm-up-only shard 0/2 and an
// unwarmed shard 1/2: 2 pages x 1 link x 2 arms, 1 warm-up and 2 runs.
func TestEveryShardWarmsUpAndMeasures(t *testing.T) {
	c := Config{Pages: []string{"2x10KB", "1x20KB"}, Links: []string{"none"},
		Arms: CrossArms([]string{"h1", "h2"}, []result.Mode{result.Cold}), Runs: 2, Warmup: 1}
	sp, err := planShards(c, 2)
	if err != nil {
		t.Fatal(err)
	}
	jobs := Order(c)
	for _, p := range sp.Slices {
		warm := 0
		for _, i := range p.Jobs {
			if jobs[i].Warmup {
				warm++
			}
		}
		if warm != 4 || p.Measured != 4 {
			t.Errorf("shard %s: %d warm-ups and %d measured loads, want 4 and 4", p.Shard, warm, p.Measured)
		}
	}
	if _, err := planShards(c, 3); err == nil || !strings.Contains(err.Error(), "at most 2 shards") {
		t.Errorf("3 shards of 2 measured blocks: %v, want a refusal naming 2", err)
	}
}
