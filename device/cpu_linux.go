package device

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Tree returns root and every descendant of it, by PID, read from /proc. A process that exits
// while it is read is left out.
func Tree(root int) map[int]Proc {
	all := map[int]Proc{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, err := readProc(pid); err == nil {
			all[pid] = p
		}
	}
	out := map[int]Proc{}
	if p, ok := all[root]; ok {
		out[root] = p
	} else {
		return out
	}
	for grew := true; grew; {
		grew = false
		for pid, p := range all {
			if _, in := out[pid]; in {
				continue
			}
			if _, parentIn := out[p.PPID]; parentIn {
				out[pid] = p
				grew = true
			}
		}
	}
	for pid, p := range out {
		p.Type = procType(pid)
		out[pid] = p
	}
	return out
}

// readProc reads /proc/PID/stat: the parent, utime + stime and the start time.
func readProc(pid int) (Proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Proc{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15, starttime 22.
	if len(f) < 20 {
		return Proc{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ppid, _ := strconv.Atoi(f[1])
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	start, _ := strconv.ParseInt(f[19], 10, 64)
	return Proc{PID: pid, PPID: ppid, CPUMs: float64(ut+st) * TickMs, Start: start, State: f[0][0]}, nil
}

// procType classifies a Chromium process by its command line.
func procType(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return TypeOther
	}
	typ, sub := "", ""
	// Chromium rewrites its children's argv into one space-separated string (setproctitle):
	// split on NULs and spaces alike.
	for _, a := range strings.FieldsFunc(string(b), func(r rune) bool { return r == 0 || r == ' ' }) {
		if v, ok := strings.CutPrefix(a, "--type="); ok {
			typ = v
		}
		if v, ok := strings.CutPrefix(a, "--utility-sub-type="); ok {
			sub = v
		}
	}
	switch {
	case typ == "":
		return TypeBrowser
	case typ == "renderer":
		return TypeRenderer
	case typ == "gpu-process":
		return TypeGPU
	case typ == "utility" && sub == "network.mojom.NetworkService":
		return TypeNetwork
	}
	return TypeOther
}

// Self returns this process's user plus system CPU time so far (getrusage RUSAGE_SELF), in ms:
// the harness's own cost (server, emulator and runner together, which share the process).
func Self() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// MainThreadCPU returns the time the main thread of process pid has spent on a CPU so far
// (the first field of /proc/PID/schedstat, ns precision; the thread-group leader's own, not
// its other threads'). A renderer's main thread runs the page's JavaScript, so the difference
// of two readings around a script is the script's CPU time whatever else ran on its CPU.
// Errors when the process is gone or the kernel keeps no schedstat (CONFIG_SCHED_INFO).
func MainThreadCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/schedstat")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, fmt.Errorf("/proc/%d/schedstat: empty", pid)
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/schedstat: %w", pid, err)
	}
	return time.Duration(ns), nil
}
