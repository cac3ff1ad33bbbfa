package gcpause

import (
	"math"
	"runtime/debug"
	"testing"
)

// settings reads the GC percent and memory limit without changing them.
func settings() (pct int, limit int64) {
	pct = debug.SetGCPercent(-1)
	debug.SetGCPercent(pct)
	return pct, debug.SetMemoryLimit(-1)
}

func TestBeginEnd(t *testing.T) {
	collections := 0
	p := &pauser{collect: func() { collections++ }}
	debug.SetGCPercent(100)
	defer debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)

	end := p.begin()
	pct, limit := settings()
	if pct != -1 {
		t.Errorf("GC percent during a pause = %d, want -1 (off)", pct)
	}
	if used := int64(inUse()); limit < used+Headroom-(64<<20) || limit > used+Headroom {
		t.Errorf("memory limit during a pause = %d, want the memory in use (%d) plus Headroom", limit, used)
	}
	inner := p.begin() // nested: no second collection, settings kept
	inner()
	if pct, _ := settings(); pct != -1 || collections != 1 {
		t.Errorf("after a nested pause ended: GC percent %d, %d collections; want -1 and 1", pct, collections)
	}
	end()
	end() // idempotent: must not end a pause begun later
	if pct, limit := settings(); pct != 100 || limit != math.MaxInt64 {
		t.Errorf("after the pause: GC percent %d, limit %d; want 100 and no limit", pct, limit)
	}
	later := p.begin()
	end()
	if pct, _ := settings(); pct != -1 {
		t.Errorf("a second end of an earlier pause ended a later one (GC percent %d)", pct)
	}
	later()
	if collections != 2 || p.depth != 0 {
		t.Errorf("%d collections and depth %d after two pauses; want 2 and 0", collections, p.depth)
	}
}

func TestLimitFor(t *testing.T) {
	for _, c := range []struct {
		used uint64
		want int64
	}{{0, Headroom}, {100 << 20, 100<<20 + Headroom}, {math.MaxUint64, math.MaxInt64}, {math.MaxInt64 - Headroom + 1, math.MaxInt64}} {
		if got := limitFor(c.used); got != c.want {
			t.Errorf("limitFor(%d) = %d, want %d", c.used, got, c.want)
		}
	}
}
