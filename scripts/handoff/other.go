//go:build !linux

package main

import (
	"fmt"
	"os"
)

// main says that the benchmark needs Linux: it measures SCHED_FIFO threads waiting in ppoll(2).
func main() {
	fmt.Fprintln(os.Stderr, "handoff: Linux only (SCHED_FIFO threads waiting in ppoll(2))")
	os.Exit(2)
}
