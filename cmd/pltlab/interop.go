package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/browser"
	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/matrix"
	"github.com/pltlab/pltlab/server"
)

// interopFlags are the flags of `pltlab interop`.
type interopFlags struct {
	servers string
	clients string
	cases   string
	out     string
	force   bool
	quiet   time.Duration
	window  time.Duration
}

func newInteropCmd() *cobra.Command {
	var f interopFlags
	cmd := &cobra.Command{
		Use:   "interop --server SERVER[,SERVER] [--client CLIENT[,CLIENT]] [--cases CASE,...] [--out FILE.jsonl]",
		Short: "Probe QUIC servers with a raw client, and run clients against them through emulated links; judge both from the wire (issue 52)",
		Long: `interop starts the project's HTTP/3 server on each --server stack (quic-go in this process,
ngtcp2: Debian's gtlsserver), or the interop endpoint of a quic-go release (quic-go@v0.40.1: built
on demand from the Go module proxy into the user's cache, its progress on stderr; the record
carries the release, API era, Go toolchain, module sum and binary digest) on loopback and runs each case against it with pltlab's own raw QUIC
client, which builds its packets from RFC 9000/9001 and records every datagram it sent and
received. Each case's outcome (pass, fail, unsupported, error) is judged from those datagrams,
never from an exit code. Probe cases:
` + caseHelp() + `
Exchange cases (in the manner of the QUIC Interop Runner) run each --client program against
each --server program through the case's emulated link (the client in the link's namespace:
needs root), while the link records a capture; tshark decrypts it with both endpoints' TLS key
logs, and each case is judged from those packets and from the bytes the client saved. Servers
and clients: quic-go (the interop endpoint built with the quic-go release pltlab links),
quic-go@vX.Y.Z, ngtcp2 (Debian's gtlsserver and gtlsclient); a client only: chromium (the
browser pltlab measures with, launched in the link's namespace and forced onto HTTP/3 on the
server's origin, its TLS keys logged; it loads a page of that origin whose fetch() reads each
file, and pltlab saves the bytes it read). A case an endpoint cannot do is unsupported, with
the reason. Exchange cases:
` + exchangeHelp() + `
One JSON line per case, client and server goes to --out (client, server, their exact versions,
outcome, reason, evidence) and a table for people to stdout (to stderr when the lines go to
stdout). Exit 0 when every case reached a verdict (pass, fail or unsupported: a fail is a finding), 1 when
some case ended in error (the probe could not tell), 2 on bad input (before anything starts).`,
		Example: `  ./bin/pltlab interop --server quic-go --out /tmp/interop-quic-go.jsonl --force
  ./bin/pltlab interop --server quic-go,ngtcp2 --cases amplification-limit,version-negotiation --out /tmp/interop.jsonl --force
  ./bin/pltlab interop --server ngtcp2 --cases initial-under-1200 --quiet 2s
  ./bin/pltlab interop --server quic-go@v0.40.1,quic-go@v0.66.0 --out /tmp/interop-releases.jsonl --force
  sudo ./bin/pltlab interop --server quic-go,ngtcp2 --client quic-go,ngtcp2 --cases handshake,retry,keyupdate --out /tmp/interop-exchange.jsonl --force
  sudo ./bin/pltlab interop --server quic-go,ngtcp2 --client chromium --cases handshake,http3,resumption,zerortt --out /tmp/interop-chromium.jsonl --force
  sudo ./bin/pltlab interop --server quic-go,ngtcp2 --client quic-go,ngtcp2 --cases rebind-port,rebind-addr,connectionmigration --out /tmp/interop-rebind.jsonl --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runInterop(cmd, f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.servers, "server", server.StackQUICGo, "servers, comma-separated: "+strings.Join(server.H3Stacks, ", ")+
		", or quic-go@vX.Y.Z (a release v0.33.0 to v0.66.x, its endpoint built on demand from the module proxy)")
	fl.StringVar(&f.clients, "client", server.StackQUICGo, "clients of the exchange cases, comma-separated: "+strings.Join(server.H3Stacks, ", ")+", "+matrix.Chromium+", or quic-go@vX.Y.Z")
	fl.StringVar(&f.cases, "cases", "all", "cases, comma-separated: all, "+strings.Join(interop.CaseNames(), ", ")+", "+strings.Join(matrix.ExchangeNames(), ", "))
	fl.StringVar(&f.out, "out", "-", "JSON Lines output file, - for stdout")
	fl.BoolVar(&f.force, "force", false, "replace an existing --out file")
	fl.DurationVar(&f.quiet, "quiet", interop.DefaultQuiet, "silence after which a case concludes the server did not answer")
	fl.DurationVar(&f.window, "window", interop.DefaultWindow, "how long amplification-limit counts the server's bytes, and how long ack-only and flow-control give the handshake and the answer")
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

// exchangeHelp lists the exchange cases with their links and rules for the help text.
func exchangeHelp() string {
	var b strings.Builder
	for _, c := range matrix.Exchanges {
		fmt.Fprintf(&b, "  %s (link %s): %s\n", c.Name, c.Link, c.Rule)
	}
	return b.String()
}

// interopPlan is what the flags ask for, checked.
type interopPlan struct {
	servers, clients []string
	probes           []interop.Case
	exchanges        []matrix.Exchange
}

// parse checks every flag and returns the plan, refusing bad input with a usage error (exit 2)
// before anything is started or written.
func (f interopFlags) parse() (interopPlan, error) {
	var p interopPlan
	var err error
	if p.servers, err = matrix.ParseServers(f.servers); err != nil {
		return p, usagef("bad --server %v", err)
	}
	if p.clients, err = matrix.ParseClients(f.clients); err != nil {
		return p, usagef("bad --client %v", err)
	}
	if p.probes, p.exchanges, err = matrix.ParseCases(f.cases); err != nil {
		return p, usagef("bad --cases: %v", err)
	}
	if f.quiet <= 0 || f.window <= 0 {
		return p, usagef("bad --quiet %v / --window %v: both must be positive durations", f.quiet, f.window)
	}
	return p, nil
}

// runInterop checks the flags, opens --out, then per stack starts an h3-only server on
// loopback, runs the cases against it and writes one record per case.
func runInterop(cmd *cobra.Command, f interopFlags) error {
	p, err := f.parse()
	if err != nil {
		return err
	}
	if slices.Contains(p.servers, matrix.Ngtcp2) {
		if err := matrix.Ngtcp2Missing(); err != nil {
			return fmt.Errorf("--server %s: %w", matrix.Ngtcp2, err)
		}
	}
	if len(p.exchanges) > 0 && slices.Contains(p.clients, matrix.Ngtcp2) {
		if err := matrix.Ngtcp2ClientMissing(); err != nil {
			return fmt.Errorf("--client %s: %w", matrix.Ngtcp2, err)
		}
	}
	if len(p.exchanges) > 0 && slices.Contains(p.clients, matrix.Chromium) {
		if _, err := browser.FindChromium(""); err != nil {
			return fmt.Errorf("--client %s: %w", matrix.Chromium, err)
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
	if len(p.exchanges) > 0 {
		raiseProcsForLink() // the exchange cases' links: forwarders with Ps of their own
	}
	enc := json.NewEncoder(out)
	write := func(r interop.Record) error {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("write record: %w", err)
		}
		return nil
	}
	var recs []interop.Record
	for _, stack := range p.servers {
		var rs []interop.Record
		var err error
		if len(p.probes) > 0 {
			rs, err = interopStack(cmd, stack, p.probes, f, write)
		}
		if err == nil && len(p.exchanges) > 0 {
			var xs []interop.Record
			xs, err = interopExchanges(cmd, stack, p.clients, p.exchanges, write)
			rs = append(rs, xs...)
		}
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
func interopStack(cmd *cobra.Command, stack string, cases []interop.Case, f interopFlags, write func(interop.Record) error) ([]interop.Record, error) {
	progress := func(line string) { fmt.Fprintln(cmd.ErrOrStderr(), line) }
	t, err := matrix.Start(cmd.Context(), stack, matrix.Options{Progress: progress, Logger: slog.Default()})
	if err != nil {
		return nil, err
	}
	recs, err := t.Run(cmd.Context(), cases, f.quiet, f.window, pltlabVersion(), write)
	return recs, errors.Join(err, t.Close())
}

// interopExchanges runs the exchange cases with server stack and each client in turn (their
// programs built or found first, progress on stderr) and writes their records.
func interopExchanges(cmd *cobra.Command, stack string, clients []string, cases []matrix.Exchange, write func(interop.Record) error) ([]interop.Record, error) {
	o := matrix.Options{Progress: func(line string) { fmt.Fprintln(cmd.ErrOrStderr(), line) }}
	srv, err := matrix.OpenPeer(cmd.Context(), stack, o)
	if err != nil {
		return nil, err
	}
	var recs []interop.Record
	for _, name := range clients {
		client, err := matrix.OpenPeer(cmd.Context(), name, o)
		if err != nil {
			return recs, fmt.Errorf("--client %s: %w", name, err)
		}
		for _, c := range cases {
			if err := cmd.Context().Err(); err != nil {
				return recs, err
			}
			r := matrix.RunExchange(cmd.Context(), c, client, srv, slog.Default())
			recs = append(recs, r)
			if err := write(r); err != nil {
				return recs, err
			}
		}
	}
	return recs, nil
}
