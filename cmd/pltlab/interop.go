package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/interop"
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
		Use:   "interop --server STACK[,STACK] [--cases CASE,...] [--out FILE.jsonl]",
		Short: "Probe QUIC servers' behaviour with a raw client and judge it from the wire (issue 52)",
		Long: `interop starts the project's HTTP/3 server on each --server stack (quic-go in this process,
ngtcp2: Debian's gtlsserver) on loopback and runs each case against it with pltlab's own raw QUIC
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
  ./bin/pltlab interop --server ngtcp2 --cases initial-under-1200 --quiet 2s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runInterop(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.servers, "server", server.StackQUICGo, "server stacks, comma-separated: "+strings.Join(server.H3Stacks, ", "))
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
	var stacks []string
	for _, s := range strings.Split(f.servers, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(server.H3Stacks, s) {
			return nil, nil, usagef("bad --server %q: accepted %s, comma-separated", s, strings.Join(server.H3Stacks, ", "))
		}
		if slices.Contains(stacks, s) {
			return nil, nil, usagef("bad --server %q: given twice", s)
		}
		stacks = append(stacks, s)
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
	if slices.Contains(stacks, server.StackNgtcp2) {
		if _, err := exec.LookPath(server.Ngtcp2Binary); err != nil {
			return fmt.Errorf("--server %s needs %s (Debian package ngtcp2-server; make setup installs it): %w", server.StackNgtcp2, server.Ngtcp2Binary, err)
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

// interopStack starts the server of one stack, runs the cases and writes their records.
func interopStack(cmd *cobra.Command, stack string, cases []interop.Case, f interopFlags, out io.Writer) ([]interop.Record, error) {
	srv, err := server.New("", server.WithAddr("127.0.0.1:0"), server.WithProtocols("h3"),
		server.WithH3Stack(stack, ""), server.WithLogger(slog.Default()))
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", stack, err)
	}
	if err := srv.Start(cmd.Context()); err != nil {
		return nil, fmt.Errorf("start server %s: %w", stack, err)
	}
	info := srv.Info()
	t := interop.Target{Addr: info.Addr("h3"), ServerName: info.Host, Quiet: f.quiet, Window: f.window}
	enc := json.NewEncoder(out)
	var recs []interop.Record
	for _, c := range cases {
		if err := cmd.Context().Err(); err != nil {
			return recs, errors.Join(err, srv.Close())
		}
		r := interop.Run(cmd.Context(), c, t)
		rec := interop.NewRecord(r, c, interop.ProbeClient, interop.ProbeVersion(pltlabVersion()), stack, info.QUICStack, t.Addr, "loopback")
		recs = append(recs, rec)
		if err := enc.Encode(rec); err != nil {
			return recs, errors.Join(fmt.Errorf("write record: %w", err), srv.Close())
		}
	}
	return recs, srv.Close()
}
