package studies

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/pltlab/pltlab/interop"
	"github.com/pltlab/pltlab/interop/matrix"
)

// suspect is a cell that looks like a regression and has not been run twice: a quic-go
// release's grid column whose every judged run failed, one run, after an earlier release
// passed it. The study runs it again (confirmRegressions) before any verdict reads it.
type suspect struct {
	// subject is the release's endpoint (matrix.ReleaseName), column its grid column (a probe
	// case, or "CASE as client" or "CASE as server").
	subject, column string
	// passed is the latest earlier release whose runs of the column all passed.
	passed string
}

// why is the re-run record's Rerun: what it re-runs and why.
func (s suspect) why() string {
	v, _ := matrix.Release(s.subject)
	return fmt.Sprintf("a confirmation of a suspected regression: %s failed at %s in its one run, after passing at %s", s.column, v, s.passed)
}

// cell is the client, the server and the case of the suspect's column; probe is true for a
// probe case (the client is then pltlab's probe).
func (s suspect) cell() (client, server, c string, probe bool) {
	if c, ok := strings.CutSuffix(s.column, " "+asClient); ok {
		return s.subject, EvolutionFixed, c, false
	}
	if c, ok := strings.CutSuffix(s.column, " "+asServer); ok {
		return EvolutionFixed, s.subject, c, false
	}
	return interop.ProbeClient, s.subject, s.column, true
}

// suspects lists the cells of d that look like regressions and were run once, in grid order
// (per column, the releases oldest first): a release's column whose one judged run failed
// while an earlier release's runs of it all passed. A cell run twice or more is judged as it
// stands (judgeRegression); ngtcp2 has no releases here and is never a suspect.
func suspects(d evoData) []suspect {
	var out []suspect
	for _, c := range evolutionColumns() {
		lastPass := ""
		for _, v := range d.releases {
			s := matrix.ReleaseName(v)
			switch d.outcome(s, c) {
			case interop.Pass:
				lastPass = v
			case interop.Fail:
				if lastPass != "" && len(d.byServer[s][c]) == 1 {
					out = append(out, suspect{subject: s, column: c, passed: lastPass})
				}
			}
		}
	}
	return out
}

// cellRunner makes one run of one cell for the confirmation re-runs: evoRunner against the
// real endpoints; a test's fake returns outcomes without running anything.
type cellRunner interface {
	// probe runs probe case c against server and returns its record (outcome error when the
	// server did not start).
	probe(ctx context.Context, server string, c interop.Case) interop.Record
	// exchange runs exchange case c between client and server and returns its record
	// (outcome error when a peer did not open) and the error that made it so.
	exchange(ctx context.Context, client, server string, c matrix.Exchange) (interop.Record, error)
}

// confirmRegressions runs once more every cell of d that looks like a
// regression run once (suspects), among the subjects (nil: every endpoint), through r, and
// writes each re-run's record, its Rerun saying what it confirms, as run runOf(client, server,
// case): the cell's number of scheduled runs, a run of no repetition (outside the schedule's
// keys: evolutionKeyOf). judgeRegression then reads the cell's two runs: a regression when
// both failed, "not reproduced on the re-run" when the re-run passed. It returns the errors of
// cells that could not be run, joined, and stops at ctx's end or a write's error.
func confirmRegressions(ctx context.Context, d evoData, subjects []string, r cellRunner, runOf func(client, server, c string) int, log *slog.Logger, write func(int, interop.Record) error) error {
	var errs []error
	for _, s := range suspects(d) {
		if subjects != nil && !slices.Contains(subjects, s.subject) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
		client, server, name, probe := s.cell()
		log.Info("evolution: re-running a suspected regression", "case", s.column, "endpoint", s.subject, "passed at", s.passed)
		var rec interop.Record
		if probe {
			i := slices.IndexFunc(interop.Cases, func(c interop.Case) bool { return c.Name == name })
			if i < 0 {
				continue
			}
			rec = r.probe(ctx, server, interop.Cases[i])
		} else {
			c, ok := matrix.LookupExchange(name)
			if !ok {
				continue
			}
			var err error
			if rec, err = r.exchange(ctx, client, server, c); err != nil {
				errs = append(errs, fmt.Errorf("%s > %s: %w", client, server, err))
			}
		}
		rec.Rerun = s.why()
		if err := write(runOf(client, server, name), rec); err != nil {
			return errors.Join(append(errs, err)...)
		}
	}
	return errors.Join(errs...)
}

// evoRunner runs cells against the real endpoints: a release's endpoint built (or taken from
// the cache) on first use, each exchange peer opened once and kept in peers.
type evoRunner struct {
	peers   map[string]matrix.Peer
	log     *slog.Logger
	version string // pltlab's version, for the probe client's record
}

var _ cellRunner = (*evoRunner)(nil)

// open returns the peer called name, opening it on first use.
func (e *evoRunner) open(ctx context.Context, name string) (matrix.Peer, error) {
	if p, ok := e.peers[name]; ok {
		return p, nil
	}
	p, err := matrix.OpenPeer(ctx, name, matrix.Options{Progress: func(l string) { e.log.Info(l) }})
	if err == nil {
		e.peers[name] = p
	}
	return p, err
}

// exchange runs case c from client to server (cellRunner): a peer that does not open gives an
// error record (evidence of nothing) and the error.
func (e *evoRunner) exchange(ctx context.Context, client, server string, c matrix.Exchange) (interop.Record, error) {
	cp, cerr := e.open(ctx, client)
	sp, serr := e.open(ctx, server)
	if err := errors.Join(cerr, serr); err != nil {
		return interop.Record{V: interop.RecordVersion, Kind: interop.RecordKind, Time: time.Now().UTC().Format(time.RFC3339),
			Case: c.Name, Rule: c.Rule, Client: client, Server: server, Link: c.Link,
			Outcome: interop.Error, Reason: "a peer did not open: " + err.Error()}, err
	}
	return matrix.RunExchange(ctx, c, cp, sp, e.log), nil
}

// probe runs probe case c against server (cellRunner), the server started and stopped for it.
func (e *evoRunner) probe(ctx context.Context, server string, c interop.Case) interop.Record {
	var got []interop.Record
	err := e.probes(ctx, server, []interop.Case{c}, func(rec interop.Record) error { got = append(got, rec); return nil })
	if len(got) == 0 {
		reason := "the probe gave no record"
		if err != nil {
			reason += ": " + err.Error()
		}
		return probeError(server, c, e.version, reason)
	}
	return got[0]
}

// probes runs cases against server, started once (a release's endpoint built first, progress to
// the logger) and stopped after, each record to each. A server that does not start gets an
// error record per case (no evidence of anything); the error is returned either way.
func (e *evoRunner) probes(ctx context.Context, server string, cases []interop.Case, each func(interop.Record) error) error {
	t, err := matrix.Start(ctx, server, matrix.Options{Logger: e.log, Progress: func(l string) { e.log.Info(l) }})
	if err != nil {
		for _, c := range cases {
			if werr := each(probeError(server, c, e.version, "the server did not start: "+err.Error())); werr != nil {
				return errors.Join(err, werr)
			}
		}
		return err
	}
	_, err = t.Run(ctx, cases, 0, 0, e.version, each)
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	return err
}

// probeError is the error record of probe case c against server: reason says why no evidence
// was gathered.
func probeError(server string, c interop.Case, version, reason string) interop.Record {
	return interop.Record{V: interop.RecordVersion, Kind: interop.RecordKind, Time: time.Now().UTC().Format(time.RFC3339),
		Case: c.Name, Rule: c.Rule, Client: interop.ProbeClient, Server: server, Link: "loopback",
		Versions: map[string]string{"client": interop.ProbeVersion(version)},
		Outcome:  interop.Error, Reason: reason}
}
