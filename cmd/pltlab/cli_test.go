package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/shaping"
)

// runCLI runs the pltlab command line in-process and returns the exit code main would use,
// stdout, and stderr followed by the line main would print.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLIWith(t, startIdlePoll, args...)
}

// runCLIWith is runCLI with startIdle starting the idle-poll spinners (newRootCmdWith).
func runCLIWith(t *testing.T, startIdle func(*cobra.Command, idlepoll.Mode) error, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCLISetup(t, measureSetup{start: startIdle, probe: shaping.Available}, args...)
}

// runCLISetup is runCLI with the command's set-up given: its idle-poll start and its link probe
// (newRootCmdWith).
func runCLISetup(t *testing.T, setup measureSetup, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	defer stopIdlePoll() // as main does after the command
	cmd := newRootCmdWith(setup)
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	ctx := context.Background()
	code, msg := exitCode(ctx, cmd.ExecuteContext(ctx))
	if msg != "" {
		errOut.WriteString("pltlab: " + msg + "\n")
	}
	return code, out.String(), errOut.String()
}
