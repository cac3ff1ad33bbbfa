package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// cpuProfileEnv names a file to write a CPU profile of the whole run to (go tool pprof reads
// it), e.g. `PLTLAB_CPUPROFILE=/tmp/cpu.pprof pltlab shell --link rate=1gbit -- iperf3 ...`:
// the emulator's forwarder threads are sampled with the rest of the process.
const cpuProfileEnv = "PLTLAB_CPUPROFILE"

// startCPUProfile starts the CPU profile named by cpuProfileEnv, if set; the returned stop
// completes the file (nil when no profile was asked for).
func startCPUProfile() (stop func(), err error) {
	path := os.Getenv(cpuProfileEnv)
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cpuProfileEnv, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("%s=%s: %w", cpuProfileEnv, path, err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
