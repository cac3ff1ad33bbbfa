package emu

import (
	"encoding/binary"
	"runtime"
	"testing"
	"time"
)

// benchConfigs are the disciplines and processes whose per-packet cost BenchmarkDiscipline
// measures: 1500-byte packets offered 1 % faster than 1 Gbit/s drains them (so queues stay
// busy and the AQMs work), 25 ms delay, fake clock.
var benchConfigs = []struct {
	name string
	cfg  Config
}{
	{"droptail", Config{QueueBytes: 1 << 20}},
	{"drophead", Config{QueueBytes: 1 << 20, AQM: DropHead}},
	{"codel", Config{QueuePackets: 1000, AQM: CoDel}},
	{"codel_ecn", Config{QueuePackets: 1000, AQM: CoDel, ECN: true}},
	{"pie", Config{QueuePackets: 1000, AQM: PIE}},
	{"fq_codel", Config{QueuePackets: 10240, AQM: FQCoDel}},
	{"ge_loss", Config{QueueBytes: 1 << 20, GE: GilbertElliott{P: 0.01, R: 0.25, H1: 1}}},
	{"delayvar", Config{QueueBytes: 1 << 20, DelayVar: 10 * time.Millisecond}},
	{"reorder", Config{QueueBytes: 1 << 20, ReorderProb: 0.01, ReorderDelay: time.Millisecond}},
	{"outage_hold", Config{QueueBytes: 1 << 20, Outage: Outage{On: time.Second, Off: 10 * time.Millisecond, Hold: true}}},
	{"trace", Config{QueueBytes: 1 << 20}},
}

// benchStep returns a function offering one packet and popping what is due.
func benchStep(p *Pipe) func() {
	now := time.Duration(0)
	i := uint32(0)
	return func() {
		now += 11880 * time.Nanosecond
		i++
		b := p.Buffer()[:1500]
		b[0], b[1], b[9] = 0x45, 2, 17
		binary.BigEndian.PutUint16(b[20:22], uint16(i%64)) // 64 flows
		p.Offer(now, b)
		for pkt, ok := p.Pop(now); ok; pkt, ok = p.Pop(now) {
			p.Recycle(pkt)
		}
	}
}

func benchPipe(name string, cfg Config) *Pipe {
	cfg.Rate, cfg.Delay, cfg.BufSize, cfg.Seed = 1e9, 25*time.Millisecond, 1500, 1
	if name == "trace" {
		// 83 opportunities per ms = 998.528 Mbit/s.
		ms := make([]int64, 0, 8300)
		for t := int64(1); t <= 100; t++ {
			for j := 0; j < 83; j++ {
				ms = append(ms, t)
			}
		}
		cfg.Rate, cfg.Trace = 0, must(NewTrace(ms))
	}
	return NewPipe(cfg)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// BenchmarkDiscipline measures the per-packet cost (offer + release) of each discipline. Besides
// ns/op (wall time) it reports cpu-ns/op, the benchmark thread's CPU time per packet
// (RUSAGE_THREAD), which a loaded machine inflates far less.
func BenchmarkDiscipline(b *testing.B) {
	for _, bc := range benchConfigs {
		b.Run(bc.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			step := benchStep(benchPipe(bc.name, bc.cfg))
			for range 100000 {
				step()
			}
			b.SetBytes(1500)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := threadCPU()
			for range b.N {
				step()
			}
			b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestNoAllocDisciplines checks 0 allocations per packet in steady state for every discipline.
func TestNoAllocDisciplines(t *testing.T) {
	for _, bc := range benchConfigs {
		step := benchStep(benchPipe(bc.name, bc.cfg))
		for range 5000 { // 60 ms of traffic: the 25 ms delay line and the queues reach their size
			step()
		}
		if a := testing.AllocsPerRun(500, step); a != 0 {
			t.Errorf("%s: %v allocations per packet in steady state", bc.name, a)
		}
	}
}
