package device

// TickMs is the resolution of CPU times read from /proc (ms): /proc/PID/stat's utime and stime
// count USER_HZ ticks, 100 a second on Linux.
const TickMs = 10.0

// Process types of a Chromium tree, from its --type switch (and, for utility processes, the
// service they run).
const (
	TypeBrowser  = "browser"  // the main process (no --type)
	TypeRenderer = "renderer" // --type=renderer
	TypeNetwork  = "network"  // --type=utility --utility-sub-type=network.mojom.NetworkService
	TypeGPU      = "gpu"      // --type=gpu-process
	TypeOther    = "other"    // zygotes, other utility processes (storage, audio), crashpad
)

// Proc is one process of a tree at one moment.
type Proc struct {
	PID, PPID int
	// Type is one of the Type constants.
	Type string
	// CPUMs is the process's user plus system CPU time so far (all its threads, dead ones
	// included), in ms, to TickMs.
	CPUMs float64
	// Start is the process's start time in clock ticks after boot: with PID it tells a new
	// process from an old one whose PID was reused.
	Start int64
	// State is the process state letter of /proc/PID/stat ('R', 'S', 'Z', ...).
	State byte
}

// Zombie reports whether the process has exited and waits to be reaped: the kernel shows it in
// the root cgroup then, and its CPU time is final.
func (p Proc) Zombie() bool { return p.State == 'Z' || p.State == 'X' }

// Use is the CPU time a tree spent between two snapshots, by process type, in ms (to TickMs):
// a process present in both counts its difference, one that started in between counts all of
// its time, one that exited in between is lost (Exited counts them).
type Use struct {
	Browser, Renderer, Network, GPU, Other float64
	// Exited is the number of processes of the first snapshot gone from the second.
	Exited int
}

// Total is the sum over the types, in ms.
func (u Use) Total() float64 { return u.Browser + u.Renderer + u.Network + u.GPU + u.Other }

// Between returns the CPU time the tree spent from before to after (two Tree snapshots).
func Between(before, after map[int]Proc) Use {
	var u Use
	for pid, a := range after {
		d := a.CPUMs
		if b, ok := before[pid]; ok && b.Start == a.Start {
			d -= b.CPUMs
		}
		switch a.Type {
		case TypeBrowser:
			u.Browser += d
		case TypeRenderer:
			u.Renderer += d
		case TypeNetwork:
			u.Network += d
		case TypeGPU:
			u.GPU += d
		default:
			u.Other += d
		}
	}
	for pid, b := range before {
		if a, ok := after[pid]; !ok || a.Start != b.Start {
			u.Exited++
		}
	}
	return u
}
