// Command pltlab measures browser page-load time per HTTP protocol over an emulated network link.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pltlab/pltlab/shaping"
)

func main() {
	// pltlab runs its own executable as the idle-poll spinners and watchers (idlepoll.Start):
	// such a child does that and exits here, before anything else.
	if code, ok := shaping.Child(); ok {
		os.Exit(code)
	}
	os.Exit(run())
}

// run executes the command line and returns the process exit code (see exitCode).
func run() int {
	// gin's mode is process-wide, so the program (not the server package) chooses it: release
	// mode prints nothing, which keeps stdout for records (run --out -).
	gin.SetMode(gin.ReleaseMode)
	// A write to a closed pipe returns EPIPE instead of killing the process, so that a run whose
	// reader went away (pltlab run --out - | head) stops in order and tears everything down.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	if os.Getenv(rootlessEnv) != "" {
		// The child of runRootless: root in its own user namespace; ready /run/netns and lo.
		if err := shaping.PrepareRootless(); err != nil {
			fmt.Fprintf(os.Stderr, "pltlab: %v\n", err)
			return 1
		}
	}
	stopProfile, err := startCPUProfile()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pltlab: %v\n", err)
		return 2
	}
	if stopProfile != nil {
		defer stopProfile()
	}
	ctx, stop := interruptContext(interruptGrace, os.Exit)
	defer stop()
	// A second interrupt exits at once: delete this process's namespaces and devices by name.
	onForcedExit(shaping.Teardown)
	onForcedExit(stopIdlePoll)
	onForcedExit(stopShield)
	err = newRootCmd().ExecuteContext(ctx)
	stopIdlePoll()
	stopShield()
	if errors.Is(err, errRootless) {
		stop()
		return runRootless()
	}
	code, msg := exitCode(ctx, err)
	if msg != "" {
		fmt.Fprintf(os.Stderr, "pltlab: %s\n", msg)
	}
	return code
}

// exitCode maps the error of a command to the process exit code and the one line to print
// ("" for none): 0 on success, 2 on a usage error, the code of an exitError, 130 after an
// interrupt, 141 (128 + SIGPIPE) when stdout's reader went away, and 1 on any other failure.
func exitCode(ctx context.Context, err error) (int, string) {
	if err == nil {
		return 0, ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			return ee.code, ee.err.Error()
		}
		return ee.code, ""
	}
	switch {
	case isUsage(err):
		return 2, err.Error()
	case ctx.Err() != nil:
		return 130, err.Error()
	case isBrokenPipe(err):
		return 141, "" // the reader of stdout went away (pltlab report ... | head): nothing to say
	}
	return 1, err.Error()
}

var (
	forcedExitMu    sync.Mutex
	forcedExitHooks []func()
)

// onForcedExit registers f to run when a second interrupt makes pltlab exit at once (for example
// to delete network namespaces). Hooks must be quick and must not block.
func onForcedExit(f func()) {
	forcedExitMu.Lock()
	defer forcedExitMu.Unlock()
	forcedExitHooks = append(forcedExitHooks, f)
}

// interruptGrace is how long pltlab cleans up after an interrupt before it exits anyway: one
// interrupt is always enough, whatever blocks (a write to a full pipe, a stuck child).
const interruptGrace = 10 * time.Second

// interruptContext returns a context cancelled by the first SIGINT or SIGTERM. A second signal,
// or grace passing after the first without the process having returned, runs the forced-exit
// hooks and calls exit(130).
func interruptContext(grace time.Duration, exit func(int)) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		fmt.Fprintln(os.Stderr, "pltlab: interrupted; cleaning up (interrupt again to exit at once)")
		cancel()
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-sigs:
		case <-timer.C:
			fmt.Fprintf(os.Stderr, "pltlab: still cleaning up %v after the interrupt; exiting\n", grace)
		case <-done:
			return
		}
		forcedExitMu.Lock()
		for _, f := range forcedExitHooks {
			f()
		}
		forcedExitMu.Unlock()
		exit(130)
	}()
	var once sync.Once
	return ctx, func() { once.Do(func() { signal.Stop(sigs); close(done); cancel() }) }
}
