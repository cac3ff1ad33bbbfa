//go:build unix

package flows

import (
	"time"

	"golang.org/x/sys/unix"
)

// processCPU returns this process's CPU time so far (user + system, getrusage RUSAGE_SELF).
func processCPU() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
