// Package gcpause keeps Go's garbage collector from starting while pltlab measures, and
// collects between measurements instead.
//
// The emulator's forwarders, the server and the harness share one Go runtime. A collection
// that starts during a load stops the world to change phase, and a forwarder that wakes then
// waits for the world to start again, behind threads that share its CPU: traced on a shielded
// CPU beside a 3 GiB memory churn (docs/design.md, "What stalls the emulator beside a memory
// churn"), 11 of 13 late releases were that; side by side (scripts/bench-loads.sh, four
// rounds), 7 of 96 loads were made late before, 1 of 96 with the collector paused during each
// load and run between loads. Real-time programs do the same: no collection inside the
// time-critical window, one at a quiet point before it.
package gcpause

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Headroom is how many bytes the Go runtime's memory may grow during a pause before the
// collector runs anyway (debug.SetMemoryLimit): 1 GiB, about ten times what a page load or a
// link check allocates here (measured: pltlab's resident set stayed at 228 MB through a
// carlucci2015 run with pauses), so a measurement that allocates beyond it (a fast bulk flow)
// is collected as before rather than growing without bound. A collection it forces shows as
// the emulator's lateness, which the load's own check then judges as it judges any other.
const Headroom = 1 << 30

// pauser holds the state of nested pauses: collect runs a full collection (runtime.GC).
type pauser struct {
	collect  func()
	mu       sync.Mutex
	depth    int   // pauses begun and not ended
	oldPct   int   // the GC percent before the outermost pause
	oldLimit int64 // the memory limit before the outermost pause
}

// process is the process's pauser: the collector's settings are process-wide, so every pause
// nests in the one count.
var process = &pauser{collect: runtime.GC}

// Begin runs a full collection now (runtime.GC), then turns the collector's pacing off
// (debug.SetGCPercent(-1)) and sets a soft memory limit of the runtime's memory in use plus
// Headroom, so that no collection starts before end is called unless the program allocates
// more than Headroom meanwhile. Call it before a measurement's window opens (before the
// emulator's counters are zeroed), and end when the window closes. end restores the GC
// percent and memory limit that held before; it is idempotent. Pauses nest and may overlap
// across goroutines: only the outermost Begin collects and sets, and only its matching end
// restores.
func Begin() (end func()) { return process.begin() }

// begin is Begin on p.
func (p *pauser) begin() (end func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.depth == 0 {
		p.collect()
		p.oldPct = debug.SetGCPercent(-1)
		p.oldLimit = debug.SetMemoryLimit(limitFor(inUse()))
	}
	p.depth++
	var once sync.Once
	return func() { once.Do(p.release) }
}

// release ends one pause of p, restoring the collector's settings after the outermost.
func (p *pauser) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.depth--; p.depth == 0 {
		debug.SetGCPercent(p.oldPct)
		debug.SetMemoryLimit(p.oldLimit)
	}
}

// limitFor returns the memory limit for a pause that starts with used bytes in use: used +
// Headroom, saturating at math.MaxInt64 (no limit).
func limitFor(used uint64) int64 {
	if used > math.MaxInt64-Headroom {
		return math.MaxInt64
	}
	return int64(used) + Headroom
}

// inUse returns the bytes of the runtime's memory that count against its memory limit: all
// memory it has mapped less the heap memory it has released to the kernel (the definition
// of debug.SetMemoryLimit).
func inUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}
