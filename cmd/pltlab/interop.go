package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/matrix"
	"github.com/pltlab/pltlab/server"
)

// interopFlags are the flags of `pltlab interop`.
type interopFlags struct {
	servers string
	cases   string
	out     string
	force   bool
	quiet   time.Duration
	window  time.Duration
}

func newInteropCmd() *cobra.Command {
	var f interopFlags
	cmd := &cobra.Command{
		Use:   "interop --server SERVER[,SERVER] [--cases CASE,...] [--out FILE.jsonl]",
		Short: "Probe QUIC servers' behaviour with a raw client and judge it from the wire (issue 52)",
		Long: `interop starts the project's HTTP/3 server on each --server stack (quic-go in this process,
ngtcp2: Debian's gtlsserver), or the interop endpoint of a quic-go release (quic-go@v0.40.1: built
on demand from the Go module proxy into the user's cache, its progress on stderr; the record
carries the release, API era, Go toolchain, module sum and binary digest) on loopback and runs each case against it with pltlab's own raw QUIC
client, which builds its packets from RFC 9000/9001 and records every datagram it sent and
received. Each case's outcome (pass, fail, unsupported, error) is judged from those datagrams,
never from an exit code; one JSON line per case and server goes to --out (client, server, their
exact versions, outcome, reason, evidence) and a table for people to stdout (to stderr when
the lines go to stdout). Cases:
` + caseHelp() + `
Exit 0 when every case reached a verdict (pass, fail or unsupported: a fail is a finding), 1 when
some case ended in error (the probe could not tell), 2 on bad input (before anything starts).`,
		Example: `  ./bin/pltlab interop --server quic-go --out /tmp/interop-quic-go.jsonl --force
  ./bin/pltlab interop --server quic-go,ngtcp2 --cases amplification-limit,version-negotiation --out /tmp/interop.jsonl --force
  ./bin/pltlab interop --server ngtcp2 --cases initial-under-1200 --quiet 2s
  ./bin/pltlab interop --server quic-go@v0.40.1,quic-go@v0.66.0 --out /tmp/interop-releases.jsonl --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runInterop(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.servers, "server", server.StackQUICGo, "servers, comma-separated: "+strings.Join(server.H3Stacks, ", ")+
		", or quic-go@vX.Y.Z (a release v0.33.0 to v0.66.x, its endpoint built on demand from the module proxy)")
	fl.StringVar(&f.cases, "cases", "all", "cases, comma-separated: all, "+strings.Join(interop.CaseNames(), ", "))
	fl.StringVar(&f.out, "out", "-", "JSON Lines output file, - for stdout")
	fl.BoolVar(&f.force, "force", false, "replace an existing --out file")
	fl.DurationVar(&f.quiet, "quiet", interop.DefaultQuiet, "silence after which a case concludes the server did not answer")
	fl.DurationVar(&f.window, "window", interop.DefaultWindow, "how long amplification-limit counts the server's bytes")
	return cmd
}

// caseHelp lists the cases with their rules for the help text.
func caseHelp() string {
	var b strings.Builder
	for _, c := range interop.Cases {
		fmt.Fprintf(&b, "  %s: %s\n", c.Name, c.Rule)
	}
	return b.String()
}

// parse checks every flag and returns the stacks and cases, refusing bad input with a usage
// error (exit 2) before anything is started or written.
func (f interopFlags) parse() ([]string, []interop.Case, error) {
	stacks, err := matrix.ParseServers(f.servers)
	if err != nil {
		return nil, nil, usagef("bad --server %v", err)
	}
	cases, err := interop.ParseCases(f.cases)
	if err != nil {
		return nil, nil, usagef("bad --cases: %v", err)
	}
	if f.quiet <= 0 || f.window <= 0 {
		return nil, nil, usagef("bad --quiet %v / --window %v: both must be positive durations", f.quiet, f.window)
	}
	return stacks, cases, nil
}

// runInterop checks the flags, opens --out, then per stack starts an h3-only server on
// loopback, runs the cases against it and writes one record per case.
func runInterop(cmd *cobra.Command, f interopFlags) error {
	stacks, cases, err := f.parse()
	if err != nil {
		return err
	}
	if slices.Contains(stacks, matrix.Ngtcp2) {
		if err := matrix.Ngtcp2Missing(); err != nil {
			return fmt.Errorf("--server %s: %w", matrix.Ngtcp2, err)
		}
	}
	out, table := cmd.OutOrStdout(), cmd.OutOrStdout()
	if f.out == "-" {
		table = cmd.ErrOrStderr()
	} else {
		mode := outNew
		if f.force {
			mode = outReplace
		}
		o, err := openOut("--out", f.out, mode)
		if err != nil {
			return err
		}
		defer o.Close()
		out = o
	}
	var recs []interop.Record
	for _, stack := range stacks {
		rs, err := interopStack(cmd, stack, cases, f, out)
		recs = append(recs, rs...)
		if err != nil {
			return stopError(cmd.Context(), err, "the records of the cases that ran are kept")
		}
	}
	if err := interop.WriteTable(table, recs); err != nil {
		return err
	}
	n := 0
	for _, r := range recs {
		if r.Outcome == interop.Error {
			n++
		}
	}
	if n > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d cases ended in error: the probe could not tell (see their reasons)", n, len(recs))}
	}
	return nil
}

// interopStack starts the server of one stack (building a quic-go release's endpoint first,
// its progress on stderr), runs the cases and writes their records.
func interopStack(cmd *cobra.Command, stack string, cases []interop.Case, f interopFlags, out io.Writer) ([]interop.Record, error) {
	progress := func(line string) { fmt.Fprintln(cmd.ErrOrStderr(), line) }
	t, err := matrix.Start(cmd.Context(), stack, matrix.Options{Progress: progress, Logger: slog.Default()})
	if err != nil {
		return nil, err
	}
	enc := json.NewEncoder(out)
	recs, err := t.Run(cmd.Context(), cases, f.quiet, f.window, pltlabVersion(), func(r interop.Record) error {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("write record: %w", err)
		}
		return nil
	})
	return recs, errors.Join(err, t.Close())
}
