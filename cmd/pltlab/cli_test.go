package main

import (
	"bytes"
	"context"
	"testing"
)

// runCLI runs the pltlab command line in-process and returns the exit code main would use,
// stdout, and stderr followed by the line main would print.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	defer stopIdlePoll() // as main does after the command
	cmd := newRootCmd()
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
