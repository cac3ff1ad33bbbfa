package plan

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// recordedSweep returns the lines of a 2-shard sweep of 1 page x 2 links x 1 arm, 2 runs and
// 1 warm-up, shard 0 holding link 0's blocks and shard 1 link 1's, as the runner writes them.
func recordedSweep(t *testing.T) (*result.PlanLine, [][]*result.Record) {
	t.Helper()
	p := &result.PlanLine{Pages: []string{"1x5KB"}, Links: []string{"none", "rate=10mbit"}, Arms: []result.PlanLineArm{{Protocol: "h2", Mode: result.Cold}},
		Runs: 2, Warmup: 1, Seed: 1, Settings: result.Settings{TimeoutMs: 60000, TCPCC: "cubic", TLS: "1.3"}}
	hash := LineHash(p)
	jobs := LineSchedule(p)
	var out [][]*result.Record
	for k, units := range [][]string{{"L0/B0", "L0/B1"}, {"L1/B0", "L1/B1"}} {
		sh := Shard{Index: k, Count: 2}
		lp := *p
		lp.Units = units
		owed, err := BlockJobs(p, units)
		if err != nil {
			t.Fatal(err)
		}
		lp.Loads = len(owed)
		recs := []*result.Record{{Kind: result.KindPlan, Experiment: "x", Run: -1, Shard: sh.String(), ShardUnits: Digest(units), ConfigHash: hash, Plan: &lp}}
		for _, i := range owed {
			recs = append(recs, &result.Record{Experiment: "x", Run: i, Warmup: jobs[i].Warmup, Protocol: "h2", Mode: result.Cold, Valid: true, PLTMs: 100,
				Page: result.Page{Spec: "1x5KB"}, Link: result.Link{Spec: p.Links[jobs[i].Link]}, Shard: sh.String(), ShardUnits: Digest(units), ConfigHash: hash})
		}
		out = append(out, recs)
	}
	return p, out
}

// TestCheckRecorded checks a sweep's completeness from the units its shards recorded: whole,
// a shard missing (its blocks' loads missing, the shard named), and a line of another cut.
func TestCheckRecorded(t *testing.T) {
	p, shards := recordedSweep(t)
	all := append(append([]*result.Record{}, shards[0]...), shards[1]...)
	c, recorded, err := CheckRecorded(all)
	if err != nil || !recorded || !c.Complete() || c.Loads != len(LineSchedule(p)) {
		t.Fatalf("whole sweep: %+v, %v, %v", c, recorded, err)
	}
	c, _, err = CheckRecorded(shards[0])
	if err != nil || c.Complete() || len(c.MissingShards()) != 1 || c.MissingShards()[0] != "1/2" || c.Missing != 2 || len(c.Short) != 1 || c.Short[0].Link != "rate=10mbit" {
		t.Fatalf("shard 1 missing: %+v, %v", c, err)
	}
	if lines := c.Lines(0); !strings.Contains(strings.Join(lines, "\n"), "shard 1/2 missing: no line") {
		t.Errorf("lines %q", lines)
	}
	all[len(all)-1].ShardUnits = "0123456789abcdef"
	if _, _, err := CheckRecorded(all); !errors.Is(err, ErrMixedConfigs) {
		t.Errorf("a line of another cut: %v", err)
	}
	for _, r := range shards[0] {
		r.ShardUnits = ""
		if r.Plan != nil {
			r.Plan.Units = nil
		}
	}
	if _, recorded, err := CheckRecorded(shards[0]); recorded || err != nil {
		t.Errorf("no units recorded: recorded %v, %v", recorded, err)
	}
}

// TestLineHashStands: the hashes of existing configurations do not change (they are in result
// files that merge and resume read), and every setting of result.Settings changes the hash.
func TestLineHashStands(t *testing.T) {
	base := func() *result.PlanLine {
		return &result.PlanLine{Pages: []string{"1x5KB"}, Links: []string{"none", "rate=10mbit"}, Arms: []result.PlanLineArm{{Protocol: "h2", Mode: result.Cold}},
			Runs: 2, Warmup: 1, Seed: 1, Settings: result.Settings{TimeoutMs: 60000, TCPCC: "cubic", TLS: "1.3"}}
	}
	p := base()
	if h := LineHash(p); h != "2a32696902f27c0f" {
		t.Errorf("LineHash = %s; want 2a32696902f27c0f, as before", h)
	}
	p.Cross, p.Device, p.H3Stack, p.QUICCC = "h1:cubic", "motog2013:cgroup", "ngtcp2", "bbr"
	if h := LineHash(p); h != "5702bf4c2461130d" {
		t.Errorf("LineHash = %s; want 5702bf4c2461130d, as before", h)
	}
	p.Overrides = []string{"runs=2 (matrix: 20)"} // bookkeeping, not a setting
	if h := LineHash(p); h != "5702bf4c2461130d" {
		t.Errorf("LineHash with overrides = %s; want 5702bf4c2461130d", h)
	}
	seen := map[string]string{LineHash(base()): "none"}
	for f := range reflect.TypeFor[result.Settings]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if role, _ := result.FieldRole("settings." + name); role != result.RoleSetting {
			continue
		}
		p := base()
		v := reflect.ValueOf(&p.Settings).Elem().FieldByIndex(f.Index)
		switch v.Kind() {
		case reflect.String:
			v.SetString("changed")
		case reflect.Float64:
			v.SetFloat(7)
		case reflect.Int, reflect.Int64:
			v.SetInt(7)
		case reflect.Bool:
			v.SetBool(true)
		default:
			t.Fatalf("settings.%s is a %s: teach this test to change it", name, v.Kind())
		}
		h := LineHash(p)
		if other, ok := seen[h]; ok {
			t.Errorf("settings.%s changed: hash %s, the same as with %s", name, h, other)
		}
		seen[h] = name
	}
}

// TestOldPlanLineReads: a plan line as pltlab wrote it before the plan line inlined
// result.Settings reads back whole and hashes to the config_hash it was written with.
func TestOldPlanLineReads(t *testing.T) {
	const line = `{"v":1,"kind":"plan","experiment":"x","run":-1,"time":"2026-12-01T10:00:00Z","shard":"0/2","config_hash":"5702bf4c2461130d",` +
		`"plan":{"pages":["1x5KB"],"links":["none","rate=10mbit"],"arms":[{"protocol":"h2","mode":"cold"}],"runs":2,"warmup":1,"timeout_ms":60000,` +
		`"seed":1,"tcp_cc":"cubic","tls":"1.3","cross":"h1:cubic","device":"motog2013:cgroup","h3_stack":"ngtcp2","quic_cc":"bbr","loads":3}}` + "\n"
	r, err := result.NewReader(strings.NewReader(line), "old.jsonl").Next()
	if err != nil {
		t.Fatal(err)
	}
	want := result.Settings{TimeoutMs: 60000, TCPCC: "cubic", TLS: "1.3", Device: "motog2013:cgroup", H3Stack: "ngtcp2", QUICCC: "bbr"}
	if r.Plan == nil || !reflect.DeepEqual(r.Plan.Settings, want) || r.Plan.Cross != "h1:cubic" || r.Plan.Loads != 3 {
		t.Fatalf("plan line read as %+v", r.Plan)
	}
	if h := LineHash(r.Plan); h != r.ConfigHash {
		t.Errorf("LineHash of an old plan line = %s; want its config_hash %s", h, r.ConfigHash)
	}
}
