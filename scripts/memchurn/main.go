// Command memchurn allocates and touches memory in a loop, returning it to the kernel after each
// pass, so every pass faults every page in again: the memory-heavy neighbour of the busy-host
// benchmark (scripts/bench-busyhost.sh; docs/design.md, "Host stalls: judged on their own").
//
//	go run ./scripts/memchurn -gib 3 -for 5m
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
	"time"
)

func main() {
	gib := flag.Float64("gib", 3, "memory to allocate and touch per pass, in GiB (> 0)")
	dur := flag.Duration("for", 0, "stop after this long (0: until killed)")
	flag.Parse()
	if *gib <= 0 || *gib > 64 {
		fmt.Fprintf(os.Stderr, "memchurn: bad -gib %v: want a size in GiB in (0, 64]\n", *gib)
		os.Exit(2)
	}
	size := int(*gib * (1 << 30))
	end := time.Now().Add(*dur)
	for pass := 0; *dur == 0 || time.Now().Before(end); pass++ {
		b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			fmt.Fprintf(os.Stderr, "memchurn: mmap %d bytes: %v\n", size, err)
			os.Exit(1)
		}
		for i := 0; i < len(b); i += 4096 {
			b[i] = byte(pass)
		}
		syscall.Munmap(b)
		debug.FreeOSMemory()
	}
}
