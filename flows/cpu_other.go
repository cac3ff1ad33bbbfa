//go:build !unix

package flows

import "time"

// processCPU is 0 where getrusage is unknown.
func processCPU() time.Duration { return 0 }
