package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/shaping"
)

// rootlessEnv marks the child that rootless re-execution started inside its own user, mount and
// network namespaces; main reads it once at start.
const rootlessEnv = "PLTLAB_ROOTLESS"

// errRootless tells main that the command needs emulated links and this process is not root:
// main re-runs the same command line inside user namespaces (see runRootless).
var errRootless = errors.New("re-run in user namespaces")

// rootlessSigintGrace is how long the parent waits before it passes on a SIGINT: a Ctrl-C on a
// terminal (or a signal to the process group) reaches the child directly, and a second SIGINT
// would make it exit at once instead of in order.
const rootlessSigintGrace = 3 * time.Second

// linkCommands names the commands that open emulated links, with the flag that gives them.
var linkCommands = map[string]string{"run": "link", "shell": "link", "check": "link", "flows": "link", "reproduce": ""}

// needsRootless reports whether cmd, as parsed, will open an emulated link while this process
// lacks root: then it must run inside user namespaces. --link none needs no namespace.
func needsRootless(cmd *cobra.Command) bool {
	if os.Geteuid() == 0 || os.Getenv(rootlessEnv) != "" {
		return false
	}
	flag, ok := linkCommands[cmd.Name()]
	if !ok || (cmd.Name() == "check" && cmd.Parent().Name() != "link") {
		return false
	}
	if f := cmd.Flags().Lookup("list"); f != nil && f.Value.String() == "true" {
		return false
	}
	if flag == "" {
		return true
	}
	if f := cmd.Flags().Lookup("matrix"); f != nil && f.Value.String() != "" {
		return matrixShaped(f.Value.String())
	}
	f := cmd.Flags().Lookup(flag)
	if f == nil {
		return false
	}
	links := []string{f.Value.String()}
	if sv, ok := f.Value.(interface{ GetSlice() []string }); ok {
		links = sv.GetSlice()
	}
	return slices.ContainsFunc(links, func(l string) bool { return strings.TrimSpace(l) != "none" && l != "" })
}

// runRootless runs this program's command line again inside new user, mount and network
// namespaces where the caller is root (shaping.RootlessCommand), passes on SIGTERM at once and
// SIGINT after rootlessSigintGrace, and returns the child's exit code (128+signal if killed).
func runRootless() int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pltlab: rootless: find this program: %v\n", err)
		return 1
	}
	c := shaping.RootlessCommand(self, os.Args[1:])
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	c.Env = append(os.Environ(), rootlessEnv+"=1")
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := c.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "pltlab: rootless: start in user namespaces: %v (unprivileged user namespaces must be enabled; otherwise run as root)\n", err)
		return 1
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	for {
		select {
		case err := <-done:
			return childExitCode(err)
		case s := <-sigs:
			if s == os.Interrupt {
				go func() {
					time.Sleep(rootlessSigintGrace)
					_ = c.Process.Signal(s)
				}()
				continue
			}
			_ = c.Process.Signal(s)
		}
	}
}

// childExitCode maps a child's Wait error to an exit code: its own code, or 128+signal.
func childExitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	fmt.Fprintf(os.Stderr, "pltlab: rootless: %v\n", err)
	return 1
}

// matrixShaped reports whether the matrix file name has a shaped link (an unshaped sweep, such
// as a Kubernetes pod without privileges runs, must not need user namespaces). A file that
// cannot be read or parsed counts as shaped: the command reports its error itself.
func matrixShaped(name string) bool {
	if name == "-" {
		return true // stdin is read once, by the command itself
	}
	c, err := experiment.OpenMatrix(name, nil)
	if err != nil {
		return true
	}
	shaped, err := experiment.Shaped(c)
	return err != nil || shaped
}
