package studies

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/matrix"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// EvolutionFixed is the fixed peer of the study's exchange cells: the interop endpoint built with
// the quic-go release pltlab links ("quic-go"), the client of every release as a server and the
// server of every release as a client.
const EvolutionFixed = matrix.QUICGo

// exchangeSetup is the cost model's time of one attempt of an exchange cell beyond its fetch
// (exchangeCellCost): opening the emulated link (no self-check: the cell's own capture is its
// evidence), starting the server, the client's start, decrypting the capture with tshark and
// tearing down. Fit (2026-12-07, this 2-core machine, load average about 7 from other work):
// an attempt's duration less its fetch, 2.2-2.7 s for goodput (10.6 and 11.1 s a 10 MiB attempt,
// pltlab interop --cases goodput), 2.5-3.3 s for rebind-port (10.9-11.7 s a cell, docs/design.md),
// about 1-2 s for the small cases (quick's 60 cells of 2026-12-07 in about 2 min); the larger
// end, so that a run stays within its estimate.
const exchangeSetup = 2500 * time.Millisecond

// exchangeCellCost is the cost model's time of one cell of exchange case c: per attempt,
// exchangeSetup and, for each of the client's runs (Exchange.Runs), two round trips (handshake
// and request) and the files' bytes at the link's rate (shaping/linkspec of Exchange.Link; an
// outage or a loss the case meets is not counted: the study runs none of those cases); a
// measurement case (Exchange.Goodput) counts both attempts of the one retry rule
// (result.Attempts): on this shared 2-core machine a goodput run's first attempt is often late
// (6 of 15 recorded runs, docs/design.md) and made again, 21.3 s for such a run measured
// 2026-12-07 and about 23 s a run in the smoke under load, where one attempt's 13 s was
// counted before. A cell builds nothing (its release's endpoint is built for the probes, the
// fixed peer once per run) and checks no link. An unknown case, or a link that does not parse,
// costs exchangeSetup.
func exchangeCellCost(name string) time.Duration {
	c, ok := matrix.LookupExchange(name)
	if !ok {
		return exchangeSetup
	}
	attempt := exchangeSetup
	if l, err := linkspec.Parse(c.Link); err == nil && l.Down > 0 {
		bytes := 0
		for _, f := range c.Files {
			bytes += f
		}
		fetch := 2*l.RTT + time.Duration(float64(bytes)*8/float64(l.Down)*float64(time.Second))
		attempt += time.Duration(max(c.Runs, 1)) * fetch
	}
	if c.Goodput {
		return result.Attempts * attempt
	}
	return attempt
}

// Roles of a release in an exchange cell.
const (
	asClient = "as client"
	asServer = "as server"
)

// exchangeMissing says why the exchange cells cannot run here (nil when they can): their links
// are TUN devices in network namespaces (Linux, root) and their captures are decrypted by tshark
// (ProbeHost's Exchange).
func exchangeMissing() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("the exchange cases' emulated links need Linux (this is %s): %w", runtime.GOOS, errors.ErrUnsupported)
	}
	if os.Geteuid() != 0 {
		return errors.New("the exchange cases' emulated links need root (TUN devices in network namespaces)")
	}
	if _, err := exec.LookPath(matrix.Tshark); err != nil {
		return fmt.Errorf("%s not found (Debian package tshark; make setup installs it): the captures cannot be decrypted", matrix.Tshark)
	}
	return nil
}

// exCell is one exchange cell of the schedule: a case between client and server, one of which
// is EvolutionFixed; a goodput cell is the k-th of per runs of one repetition.
type exCell struct {
	client, server, c string
	k, per            int
}

// run is the cell's run number in repetition rep, its record's Run and its key's: rep itself,
// or for the k-th of per goodput runs of a repetition rep x per + k (0, 1, ... over the
// repetitions), so each run of a measurement has a key of its own.
func (x exCell) run(rep int) int { return rep*max(x.per, 1) + x.k }

// cellsCost is the cost model's time of the cells: exchangeCellCost each.
func cellsCost(cells []exCell) time.Duration {
	var d time.Duration
	for _, x := range cells {
		d += exchangeCellCost(x.c)
	}
	return d
}

// subject is the cell's endpoint under study: the one that is not EvolutionFixed.
func (x exCell) subject() string {
	if x.client == EvolutionFixed {
		return x.server
	}
	return x.client
}

// exchangeCells are the exchange cells of one repetition, in run order: per subject (the scale's
// exchange releases oldest first, then ngtcp2 when installed), per case, the subject as the
// client and then as the server. None when the exchange cases cannot run here.
func exchangeCells(es evolutionScale, h Host) []exCell {
	if h.Exchange != nil {
		return nil
	}
	var subjects []string
	for _, v := range es.exReleases {
		subjects = append(subjects, matrix.ReleaseName(v))
	}
	if h.Ngtcp2 == nil {
		subjects = append(subjects, matrix.Ngtcp2)
	}
	var out []exCell
	for _, s := range subjects {
		for _, c := range es.exchanges {
			out = append(out, exCell{client: s, server: EvolutionFixed, c: c}, exCell{client: EvolutionFixed, server: s, c: c})
		}
		if v, _ := matrix.Release(s); slices.Contains(es.goodputServers(), v) || s == matrix.Ngtcp2 && es.goodputNgtcp2 {
			for k := range es.goodputPer {
				out = append(out, exCell{client: EvolutionFixed, server: s, c: GoodputCase, k: k, per: es.goodputPer})
			}
		}
	}
	return out
}

// exchangeKey is one exchange cell's key: "CLIENT>SERVER|CASE|REP".
func exchangeKey(client, server, c string, rep int) string {
	return evolutionKey(client+">"+server, c, rep)
}

// subjectOf is the endpoint an interop record tells about and its column in the release x case
// grid: a probe record's server and its case; an exchange record's endpoint other than
// EvolutionFixed and "CASE as client" or "CASE as server".
func subjectOf(rec interop.Record) (subject, column string) {
	switch {
	case !isExchange(rec):
		return rec.Server, rec.Case
	case rec.Server == EvolutionFixed && rec.Client != EvolutionFixed:
		return rec.Client, rec.Case + " " + asClient
	}
	return rec.Server, rec.Case + " " + asServer
}

// isExchange reports a record of an exchange case (matrix.Exchanges), not a probe's.
func isExchange(rec interop.Record) bool {
	_, ok := matrix.LookupExchange(rec.Case)
	return ok
}

// exchangeColumns are the grid's exchange columns in order: each exchange case as client, then
// as server.
func exchangeColumns() []string {
	var out []string
	for _, c := range matrix.ExchangeNames() {
		out = append(out, c+" "+asClient, c+" "+asServer)
	}
	return out
}

// evolutionColumns are every column of the grid: the probe cases, then the exchange columns.
func evolutionColumns() []string {
	return append(slices.Clone(evolutionProbeNames), exchangeColumns()...)
}

// evolutionProbeNames are the probe cases the evolution study runs, the four of its schedule
// and its recorded results. The probes that complete a handshake (ack-only, flow-control) are
// not among them: adding them changes the schedule, its estimate and resumed shards' keys.
var evolutionProbeNames = []string{"version-negotiation", "initial-under-1200", "amplification-limit", "stateless-reset"}

// evolutionProbes returns the cases of interop.Cases named in evolutionProbeNames, in order.
func evolutionProbes() []interop.Case {
	var out []interop.Case
	for _, c := range interop.Cases {
		if slices.Contains(evolutionProbeNames, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// environmental reports an exchange record whose outcome says that this machine could not run
// the case (no link, no tshark): evidence of nothing about the endpoints.
func environmental(rec interop.Record) bool {
	return isExchange(rec) && rec.Outcome == interop.Unsupported &&
		(strings.HasPrefix(rec.Reason, "the case's emulated link cannot open here") || strings.HasPrefix(rec.Reason, "tshark not found"))
}

// runExchanges runs the exchange cells of one repetition that done lacks through run (each
// peer opened once and kept). A peer that does not open gets an error line per cell (evidence
// of nothing) and the run goes on; the errors are returned joined.
func runExchanges(ctx context.Context, cells []exCell, rep int, done map[string]bool, run *evoRunner, log *slog.Logger, write func(int, interop.Record) error) error {
	var errs []error
	for _, x := range cells {
		if done[exchangeKey(x.client, x.server, x.c, x.run(rep))] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		c, _ := matrix.LookupExchange(x.c)
		log.Info("evolution: exchange", "case", c.Name, "client", x.client, "server", x.server, "repetition", rep+1)
		rec, err := run.exchange(ctx, x.client, x.server, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s > %s: %w", x.client, x.server, err))
		}
		if err := write(x.run(rep), rec); err != nil {
			return errors.Join(append(errs, err)...)
		}
	}
	return errors.Join(errs...)
}

// exchangeNotRun is the plan's line for exchange cells host h cannot run ("" when it can).
func exchangeNotRun(es evolutionScale, h Host) string {
	err := h.Exchange
	if err == nil || len(es.exchanges)+es.goodputPer == 0 {
		return ""
	}
	return fmt.Sprintf("the exchange cells (%s, each of %s and ngtcp2 as client and as server against %s; the goodput runs): %v",
		strings.Join(es.exchanges, ", "), strings.Join(es.exReleases, ", "), EvolutionFixed, err)
}
