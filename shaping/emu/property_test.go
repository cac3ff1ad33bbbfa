package emu

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"
)

// TestPropertiesRandomConfigs drives random configurations with random traffic and checks that
// no packet is delivered twice or before it was offered, that every packet offered is
// delivered or dropped for a counted cause, and that the counters add up.
func TestPropertiesRandomConfigs(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	tr, _ := NewTrace([]int64{1, 1, 2, 4, 4, 4, 7, 9})
	runs := 300
	if short() {
		runs = 30
	}
	for run := 0; run < runs; run++ {
		cfg := Config{Seed: rng.Int64(), Delay: time.Duration(rng.IntN(20)) * ms1}
		switch rng.IntN(3) {
		case 0:
			cfg.Rate = int64(1e6 + rng.IntN(50e6))
		case 1:
			cfg.Trace = tr
		}
		cfg.AQM = AQM(rng.IntN(5))
		if rng.IntN(2) == 0 {
			cfg.QueuePackets = 1 + rng.IntN(50)
		} else {
			cfg.QueueBytes = int64(1500 + rng.IntN(60000))
		}
		if rng.IntN(3) == 0 {
			cfg.Loss = rng.Float64() / 5
		} else if rng.IntN(3) == 0 {
			cfg.GE, _ = Simple(rng.Float64()/5, 1+rng.Float64()*5)
		}
		if rng.IntN(3) == 0 {
			cfg.DelayVar = cfg.Delay / 2
		}
		if rng.IntN(3) == 0 {
			cfg.Jitter, cfg.Reorder = time.Duration(rng.IntN(3))*ms1, rng.IntN(2) == 0
		}
		if rng.IntN(3) == 0 {
			cfg.ReorderProb, cfg.ReorderDelay = rng.Float64(), time.Duration(rng.IntN(10))*ms1
		}
		if rng.IntN(3) == 0 {
			cfg.Outage = Outage{On: 50 * ms1, Off: 20 * ms1, Random: rng.IntN(2) == 0, Hold: rng.IntN(2) == 0, Seed: 3}
		}
		cfg.ECN = rng.IntN(2) == 0
		checkProperties(t, cfg, rng)
	}
}

func checkProperties(t *testing.T, cfg Config, rng *rand.Rand) {
	t.Helper()
	p := newTestPipe(cfg)
	sent := map[uint32]time.Duration{}
	got := map[uint32]bool{}
	now := time.Duration(0)
	var delivered int64
	pop := func(at time.Duration) {
		for b, ok := p.Pop(at); ok; b, ok = p.Pop(at) {
			id := binary.BigEndian.Uint32(b[24:28])
			if got[id] {
				t.Fatalf("%+v: packet %d delivered twice", cfg, id)
			}
			if at < sent[id] {
				t.Fatalf("%+v: packet %d delivered at %v before it was sent at %v", cfg, id, at, sent[id])
			}
			got[id] = true
			delivered++
			p.Recycle(b)
		}
	}
	for i := uint32(0); i < 2000; i++ {
		now += time.Duration(rng.Int64N(int64(2 * ms1)))
		for due, ok := p.Next(); ok && due <= now; due, ok = p.Next() {
			pop(due)
		}
		b := ipv4(p.Buffer(), byte(rng.IntN(4)), uint16(rng.IntN(4)), 80)[:40+rng.IntN(1461)]
		binary.BigEndian.PutUint32(b[24:28], i)
		sent[i] = now
		p.Offer(now, b)
	}
	for due, ok := p.Next(); ok; due, ok = p.Next() {
		pop(due)
	}
	c := p.Take()
	drops := c.DropsLoss + c.DropsQueue + c.DropsAQM + c.DropsOutage + c.DropsOther
	if c.PacketsIn != 2000 || c.PacketsOut != delivered || c.PacketsOut+drops != c.PacketsIn || p.Len() != 0 {
		t.Fatalf("%+v: in %d, out %d (seen %d), drops %d, left %d: %+v", cfg, c.PacketsIn, c.PacketsOut, delivered, drops, p.Len(), c)
	}
	if c.Reordered > c.PacketsOut || (c.DropsLoss > 0) != (c.LossBursts > 0) || c.LossBursts > c.DropsLoss {
		t.Fatalf("%+v: inconsistent counters %+v", cfg, c)
	}
}
