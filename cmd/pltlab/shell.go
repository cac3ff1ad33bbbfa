package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/pltlab/pltlab/shaping"
	"github.com/spf13/cobra"
)

// newShellCmd builds 'pltlab shell': run a command behind an emulated link, like mm-link.
func newShellCmd(setup *measureSetup) *cobra.Command {
	var linkSpec, counters string
	c := &cobra.Command{
		Use:   "shell --link LINK [--counters FILE] -- COMMAND [ARG...]",
		Short: "Run a command inside a network namespace behind an emulated link (like mm-link)",
		Long: `shell opens the link, runs COMMAND inside the link's client namespace with
PLTLAB_HOST_ADDR set to the host-side address (servers in the host namespace listen there),
waits for it, tears the link down and exits with the command's exit status. A quoted
'$PLTLAB_HOST_ADDR' in COMMAND's arguments is replaced by the address. Ctrl-C reaches the
command; the link is removed once it exits.`,
		Example: `  sudo ./bin/pltlab shell --link rate=3mbit,rtt=50ms -- ping -c 5 '$PLTLAB_HOST_ADDR'
  sudo ./bin/pltlab shell --link carlucci2015 -- sh -c 'ping -c 5 $PLTLAB_HOST_ADDR'
  sudo ./bin/pltlab shell --link cable -- ip -brief addr`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("missing command: accepted pltlab shell --link LINK -- COMMAND [ARG...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := exec.LookPath(args[0]); err != nil {
				return &exitError{code: 127, err: fmt.Errorf("%s: command not found", args[0])} // the shell's convention
			}
			l, err := openLink(cmd, setup, linkSpec)
			if err != nil {
				return err
			}
			l.TakeCounters()
			code, runErr := runInLink(cmd, l, args)
			if counters != "" {
				b, _ := json.Marshal(l.TakeCounters())
				runErr = errors.Join(runErr, os.WriteFile(counters, append(b, '\n'), 0o644))
			}
			if err := errors.Join(runErr, l.Close()); err != nil {
				return err
			}
			if code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	c.Flags().StringVar(&linkSpec, "link", "", "LINK spec: a preset or key=value items (required)")
	c.Flags().StringVar(&counters, "counters", "", "write the link's counters over the command's run (packets, bytes, drops by cause, queueing delay; JSON, the records' emulator field) to FILE")
	return c
}

// runInLink runs args inside l and returns the command's exit code (128+signal when killed).
// On interrupt the command gets SIGINT (it usually got it from the terminal already), then
// SIGKILL after 5 s.
func runInLink(cmd *cobra.Command, l shaping.Link, args []string) (int, error) {
	host := l.HostAddr().String()
	argv := make([]string, len(args))
	for i, a := range args {
		a = strings.ReplaceAll(a, "${"+shaping.EnvHostAddr+"}", host)
		argv[i] = strings.ReplaceAll(a, "$"+shaping.EnvHostAddr, host)
	}
	c := shaping.Command(cmd.Context(), l, argv[0], argv[1:]...)
	c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	c.Cancel = func() error { return c.Process.Signal(os.Interrupt) }
	c.WaitDelay = 5 * time.Second
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}
