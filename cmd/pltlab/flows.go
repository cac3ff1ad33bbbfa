package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/artifacts"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/selfcheck"
)

// flowsFlags are the flags of 'pltlab flows'.
type flowsFlags struct {
	setup    *measureSetup // the command's set-up and link probe (nil: the kernel's)
	link     string
	flows    []string
	mixes    []string
	starts   string
	duration time.Duration
	bin      time.Duration
	runs     int
	seed     int64
	out      string
	name     string
	force    bool
	dryRun   bool
	noCheck  bool
	h3Stack  string
	quicCC   string
	art      artifactFlags
}

// newFlowsCmd builds 'pltlab flows', making setup once the flags and --out are checked.
func newFlowsCmd(setup *measureSetup) *cobra.Command {
	f := flowsFlags{setup: setup}
	cmd := &cobra.Command{
		Use:   "flows --link LINK --flow PROTO[:CC] ... [--mix P,P...] [--duration D] [--start 0s,10s] [--runs N] [--out FILE.jsonl]",
		Short: "Run bulk flows through an emulated link: goodput, utilization, loss ratio, fairness",
		Long: `flows runs bulk downloads from pltlab's server through the emulated link, all at once or
staggered by --start, each over its protocol (h1, h2, h3) with its congestion control (TCP: any
kernel algorithm, default cubic; h3: the --h3-stack's controller, --quic-cc or h3:CC: quic-go
runs NewReno only, ngtcp2 runs cubic, reno, bbr or bbr2, one gtlsserver per controller the
mixes name, so h3:bbr and h3:cubic can share a link). The client is Go,
inside the link's client namespace; every flow's ALPN (and QUIC version) is checked. --flow
flags form one mix; each --mix adds another (flows comma-separated); every repetition (--runs)
runs each mix once, the mixes in an order shuffled from --seed.

Per flow it measures goodput every 100 ms, the mean goodput over the steady state (from the
flow's start + max(2 s, 10 RTTs) to its end), the loss ratio (the link's drops of the flow's
packets), and per run the link utilization, the queueing delay over time, Jain's fairness index
and the time to converge to a fair share. It writes one JSON line ("kind":"flow") per flow and
run and prints a table (medians with 95% CIs across --runs). 'pltlab report' reads the lines and
draws the goodput over time with --plot. Links other than "none" need root.

With --artifacts DIR, each run (repetition of a mix) keeps DIR/EXPERIMENT/run-NNNN with
link.pcapng (both directions of the link, TLS secrets embedded; ~1.2 MB per second of a
10 Mbit/s link) and h3-server-ODCID.sqlog per QUIC connection; the run's flow records list them
in "artifacts" (a file not written whole is listed in "artifacts_failed" with the error, and
the exit code is 3). --artifacts-for invalid keeps only runs with an invalid flow.

Before the flows, a shaped link is self-checked (idle RTT, rate, loss; a "kind":"link_check"
line; a failed check is repeated once, then the link is refused). A flow that connects but
reads no byte is "starved": not valid, and counted apart in the table. --dry-run prints the
schedule and the estimated time and sets nothing up.`,
		Example: `  sudo ./bin/pltlab flows --link carlucci2015 --flow h3 --flow h1:cubic --duration 20s --out /tmp/flows.jsonl --force
  sudo ./bin/pltlab flows --link rate=10mbit,rtt=50ms --flow h1:cubic --flow h1:cubic --start 0s,5s --duration 20s --runs 3 --out - > /tmp/fair.jsonl
  sudo ./bin/pltlab flows --link carlucci2015 --mix h3,h1:cubic --mix h1:cubic,h1:cubic --duration 10s --runs 2 --out /tmp/mixes.jsonl --force
  sudo ./bin/pltlab flows --link rate=10mbit,rtt=36ms --h3-stack ngtcp2 --mix h3:bbr,h3:cubic --duration 20s --out /tmp/bbr-cubic.jsonl --force
  ./bin/pltlab report /tmp/flows.jsonl --plot /tmp/goodput.png`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := f.plan()
			if err != nil {
				return err
			}
			if f.dryRun {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "%sestimated %s\n", p.Describe(), quantity.FormatEstimate(estimateFlows(p)))
				return err
			}
			if p.Artifacts, err = f.art.config(artifacts.Pcap, artifacts.Qlog); err != nil {
				return err
			}
			if err := p.Check(); err != nil {
				return usagef("%v", err)
			}
			sink, closeOut, err := f.openOut(cmd)
			if err != nil {
				return err
			}
			if err := setup.begin(cmd); err != nil {
				return errors.Join(err, closeOut())
			}
			err = runFlows(cmd, f, p, sink)
			return errors.Join(err, closeOut())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.link, "link", "", "LINK spec: a preset or key=value items (required)")
	fl.StringArrayVar(&f.flows, "flow", nil, "a flow PROTO[:CC], e.g. h1:cubic, h2:bbr, h3; repeat for several (one mix; required unless --mix)")
	fl.StringArrayVar(&f.mixes, "mix", nil, "another flow mix, its flows comma-separated (e.g. h3,h1:cubic); repeat; mixes run in a seeded order in every repetition")
	fl.StringVar(&f.starts, "start", "", "start offsets of the flows of every mix in order, comma-separated (default all 0s), e.g. 0s,10s")
	fl.DurationVar(&f.duration, "duration", flows.DefaultDuration, "how long each flow runs")
	fl.DurationVar(&f.bin, "bin", flows.DefaultBin, "width of the goodput and queueing-delay bins")
	fl.IntVar(&f.runs, "runs", 1, "repetitions of every mix")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the order of the mixes in each repetition, of the order in which flows that start together connect, and of random loss")
	fl.StringVar(&f.out, "out", "-", "JSON Lines output file, - for stdout (the table then goes to stderr)")
	fl.StringVar(&f.name, "name", "", "experiment name in every record (default flows-<UTC time>)")
	fl.BoolVar(&f.force, "force", false, "overwrite an existing --out file")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the schedule of runs and the estimated time and exit (nothing is set up)")
	fl.BoolVar(&f.noCheck, "no-link-check", false, "do not self-check the link before the flows (the check is recorded otherwise)")
	fl.StringVar(&f.h3Stack, "h3-stack", "quic-go", "HTTP/3 stack serving the h3 flows: quic-go or ngtcp2 (gtlsserver)")
	fl.StringVar(&f.quicCC, "quic-cc", "", "congestion control of h3 flows given without one: newreno for quic-go (its only one); cubic (default), reno, bbr, bbr2 for ngtcp2")
	f.art.addArtifacts(fl, "pcap,qlog")
	return cmd
}

// specs checks the flags and returns the mixes (--flow is one mix, each --mix another), as
// usage errors.
func (f *flowsFlags) specs() ([][]flows.Spec, error) {
	if f.link == "" {
		return nil, usagef("missing --link: give a LINK spec such as carlucci2015, none or rate=10mbit,rtt=50ms")
	}
	if _, err := parseLink(f.setup, f.link); err != nil {
		return nil, err
	}
	if len(f.flows) == 0 && len(f.mixes) == 0 {
		return nil, usagef("missing --flow: give at least one PROTO[:CC] such as h1:cubic or h3 (or a --mix)")
	}
	if f.duration < time.Second {
		return nil, usagef("bad --duration %v: accepted 1s or more", f.duration)
	}
	if f.bin < time.Millisecond || f.bin > f.duration {
		return nil, usagef("bad --bin %v: accepted 1ms up to --duration", f.bin)
	}
	if f.runs < 1 {
		return nil, usagef("bad --runs %d: accepted 1 or more", f.runs)
	}
	starts, err := f.startOffsets()
	if err != nil {
		return nil, err
	}
	var mixes [][]flows.Spec
	if len(f.flows) > 0 {
		mix, err := flows.ParseMix(strings.Join(f.flows, ","))
		if err != nil {
			return nil, usagef("bad --flow: %v", err)
		}
		mixes = append(mixes, mix)
	}
	for _, m := range f.mixes {
		mix, err := flows.ParseMix(m)
		if err != nil {
			return nil, usagef("bad --mix: %v", err)
		}
		mixes = append(mixes, mix)
	}
	if err := server.CheckH3Stack(f.h3Stack, f.quicCC); err != nil {
		return nil, usagef("bad --h3-stack/--quic-cc: %v", err)
	}
	for i, mix := range mixes {
		if mix, err = flows.ResolveQUIC(mix, f.h3Stack, f.quicCC); err != nil {
			return nil, usagef("%v", err)
		}
		mixes[i] = mix
		if slices.ContainsFunc(mixes[:i], func(m []flows.Spec) bool { return flows.Mix(m) == flows.Mix(mix) }) {
			return nil, usagef("mix %s given twice: accepted each mix once", flows.Mix(mix))
		}
		for j := range min(len(starts), len(mix)) { // a smaller mix takes the first offsets
			mix[j].Start = starts[j]
		}
		for _, fs := range mix {
			if err := flows.CheckCC(fs); err != nil {
				return nil, usagef("bad --flow %s: %v", fs, err)
			}
		}
	}
	if n := slices.Max(lens(mixes)); len(starts) > n {
		return nil, usagef("bad --start %q: %d offsets for at most %d flows in a mix: accepted at most one per flow", f.starts, len(starts), n)
	}
	return mixes, nil
}

// plan checks the flags and returns the flows plan (usage errors), the artifacts not yet set.
func (f *flowsFlags) plan() (flows.MixExperiment, error) {
	mixes, err := f.specs()
	if err != nil {
		return flows.MixExperiment{}, err
	}
	name := cmp.Or(f.name, "flows-"+time.Now().UTC().Format("20060102T150405Z"))
	p := flows.MixExperiment{Link: f.link, Mixes: mixes, Runs: f.runs, Duration: f.duration, Bin: f.bin, Seed: f.seed,
		Experiment: name, Version: pltlabVersion(), SkipLinkCheck: f.noCheck, Logger: slog.Default(),
		H3Stack: f.h3Stack, QUICCC: f.quicCC}
	if err := p.Check(); errors.Is(err, flows.ErrTooLarge) {
		return flows.MixExperiment{}, usagef("bad --duration %v with --bin %v: %v", f.duration, f.bin, err)
	} else if err != nil {
		return flows.MixExperiment{}, usagef("%v", err)
	}
	return p, nil
}

// estimateFlows is the cost model's time of plan p (plan.EstimateFlows: the link's
// bring-up and self-check, and per run its set-up and teardown), plus every run's length.
func estimateFlows(p flows.MixExperiment) time.Duration {
	jobs := p.Jobs()
	d, _ := plan.EstimateFlows(len(jobs), 0, p.Link) // the link was parsed before
	for _, j := range jobs {
		d += p.RunLength(j)
	}
	return d
}

// lens returns the number of flows of every mix.
func lens(mixes [][]flows.Spec) []int {
	out := make([]int, len(mixes))
	for i, m := range mixes {
		out[i] = len(m)
	}
	return out
}

// startOffsets parses --start.
func (f *flowsFlags) startOffsets() ([]time.Duration, error) {
	if f.starts == "" {
		return nil, nil
	}
	var out []time.Duration
	for _, s := range strings.Split(f.starts, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d < 0 {
			return nil, usagef("bad --start offset %q: accepted a duration >= 0 such as 0s or 10s", s)
		}
		out = append(out, d)
	}
	return out, nil
}

// openOut opens --out (checked and locked before any work; "-" is stdout) and returns the
// writer and its closer.
func (f *flowsFlags) openOut(cmd *cobra.Command) (io.Writer, func() error, error) {
	if f.out == "-" {
		return cmd.OutOrStdout(), func() error { return nil }, nil
	}
	mode := outNew
	if f.force {
		mode = outReplace
	}
	of, err := openOut("--out", f.out, mode)
	if err != nil {
		return nil, nil, err
	}
	return of, of.Close, nil
}

// procsPerLink is how many Go Ps a program adds per open emulated link: one per forwarder
// thread (shaping.ProcsPerLink) and the link check's probe threads (selfcheck.ProbeProcs). Each
// holds its P while it waits, so that it never waits through the Go scheduler (docs/design.md,
// "The emulator's stalls"); without spare Ps they wait through it and may stall.
const procsPerLink = shaping.ProcsPerLink + selfcheck.ProbeProcs

// raiseProcs makes raiseProcsForLink act once per process.
var raiseProcs sync.Once

// raiseProcsForLink raises GOMAXPROCS by procsPerLink (once per process), for every command that
// opens emulated links (root.go calls it): the links' forwarder threads and the link check's
// probe threads each keep a P while they wait, and the server's, the browser driver's and the
// flows' goroutines keep as many as the machine has CPUs.
func raiseProcsForLink() {
	raiseProcs.Do(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + procsPerLink) })
}

// runFlows runs plan p (flows.Execute), writes the records to sink, reports each run on
// stderr and prints the table (to stdout, or to stderr when the records go to stdout). A run
// whose artifacts were not all written whole makes the exit code 3 (after every run).
func runFlows(cmd *cobra.Command, f flowsFlags, p flows.MixExperiment, sink io.Writer) error {
	ctx := cmd.Context()
	if spec, _ := parseLink(f.setup, f.link); spec.Shaped() {
		raiseProcsForLink()
	}
	tableTo := cmd.OutOrStdout()
	if f.out == "-" {
		tableTo = cmd.ErrOrStderr()
	}
	w := result.NewWriter(sink)
	var all []*result.Record
	p.Progress = func(done, total int, j flows.Job, recs []*result.Record) {
		fmt.Fprintf(cmd.ErrOrStderr(), "pltlab: run %d/%d done (%s, repetition %d)\n", done, total, flows.Mix(p.Mixes[j.Mix]), j.Run)
	}
	sum, err := flows.Execute(ctx, p, func(r *result.Record) error {
		if r.IsFlow() {
			all = append(all, r)
		}
		return w.Write(r)
	})
	line := fmt.Sprintf("%d runs, %d flows (%d valid, %d starved, %d otherwise invalid)", sum.Runs, sum.Flows, sum.Valid, sum.Starved, sum.Flows-sum.Valid-sum.Starved)
	if sum.Redone > 0 {
		line += fmt.Sprintf(", %d made again after the emulator was late (earlier_attempts)", sum.Redone)
	}
	if sum.ArtifactsFailed > 0 {
		line += fmt.Sprintf(", %d artifacts not written whole (artifacts_failed)", sum.ArtifactsFailed)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "pltlab: %s\n", line)
	if err := stopError(ctx, err, "the records of finished runs are kept"); err != nil {
		return explainSetupError(err)
	}
	if err := analysis.FlowSummary(tableTo, all); err != nil {
		return err
	}
	return artifactsExit(nil, sum.ArtifactsFailed)
}
