// Command vmrun runs a shell command in a qemu guest on Debian's kernel with the host's root
// filesystem read-only (package vmtest) and exits with the command's exit status.
//
//	go run ./internal/vmtest/vmrun -check
//	go run ./internal/vmtest/vmrun [-dir DIR] [-work DIR] [-timeout 10m] [-cpus 2] [-mem 2048] [-nice N] [-env K=V,...] -- COMMAND...
//
// The words of COMMAND are joined with spaces and run by /bin/sh in the guest. It prints the
// guest's serial console on standard error (or, with -console=false, the command's output on
// standard output at the end); it
// exits 3 when the guest could not run the command to its end and 2 on bad usage.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/pltlab/pltlab/internal/vmtest"
)

func main() {
	dir := flag.String("dir", "", "working directory of the command in the guest (default: the current directory)")
	work := flag.String("work", "", "host directory shared writable at "+vmtest.GuestDir+" (default: a temporary one)")
	timeout := flag.Duration("timeout", 10*time.Minute, "bound on the whole run, boot included")
	cpus := flag.Int("cpus", 2, "guest vCPUs")
	mem := flag.Int("mem", 2048, "guest memory in MiB")
	nice := flag.Int("nice", 0, "nice value of qemu (negative: ahead of other work; root only)")
	env := flag.String("env", "", "comma-separated NAME=VALUE entries (or NAME, taking the host's value) for the command")
	console := flag.Bool("console", true, "stream the guest's serial console (kernel messages and the command's output) to standard error; false: print the command's output on standard output at the end")
	check := flag.Bool("check", false, "only report whether a guest can run here (exit 0) or why not (exit 3)")
	flag.Parse()
	if *check {
		if err := vmtest.Available(); err != nil {
			fmt.Fprintln(os.Stderr, "vmrun:", err)
			os.Exit(3)
		}
		fmt.Println("vmrun: qemu, a kernel with modules and busybox-static are installed")
		os.Exit(0)
	}
	if flag.NArg() == 0 || *cpus < 1 || *mem < 256 {
		fmt.Fprintln(os.Stderr, "usage: vmrun [-dir DIR] [-work DIR] [-timeout D] [-cpus N>=1] [-mem MiB>=256] [-env K=V,...] -- COMMAND...")
		os.Exit(2)
	}
	if *dir == "" {
		*dir, _ = os.Getwd()
	}
	var envs []string
	for _, e := range strings.Split(*env, ",") {
		if e == "" {
			continue
		}
		if !strings.Contains(e, "=") {
			v, ok := os.LookupEnv(e)
			if !ok {
				continue
			}
			e += "=" + v
		}
		envs = append(envs, e)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	o := vmtest.Options{Command: strings.Join(flag.Args(), " "), Dir: *dir, Env: envs,
		WorkDir: *work, Nice: *nice, CPUs: *cpus, MemMB: *mem, Timeout: *timeout}
	if *console {
		o.Console = os.Stderr
	}
	res, err := vmtest.Run(ctx, o)
	if !*console {
		os.Stdout.Write(res.Output)
	}
	fmt.Fprintf(os.Stderr, "vmrun: boot %s, total %s\n", res.Boot.Round(time.Second), res.Total.Round(time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, "vmrun:", err)
		os.Exit(3)
	}
	os.Exit(res.ExitCode)
}
