package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
)

// flowsFlags are the flags of 'pltlab flows'.
type flowsFlags struct {
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
	art      artifactFlags
}

// flowsPause is the quiet time between runs, so the next run starts on an empty queue.
const flowsPause = time.Second

func newFlowsCmd() *cobra.Command {
	var f flowsFlags
	cmd := &cobra.Command{
		Use:   "flows --link LINK --flow PROTO[:CC] ... [--mix P,P...] [--duration D] [--start 0s,10s] [--runs N] [--out FILE.jsonl]",
		Short: "Run bulk flows through an emulated link: goodput, utilization, loss ratio, fairness",
		Long: `flows runs bulk downloads from pltlab's server through the emulated link, all at once or
staggered by --start, each over its protocol (h1, h2, h3) with its congestion control (TCP: any
kernel algorithm, default cubic; h3: quic-go's NewReno, the only one it has). The client is Go,
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
in "artifacts". --artifacts-for invalid keeps only runs with an invalid flow.`,
		Example: `  sudo ./bin/pltlab flows --link carlucci2015 --flow h3 --flow h1:cubic --duration 20s --out /tmp/flows.jsonl --force
  sudo ./bin/pltlab flows --link rate=10mbit,rtt=50ms --flow h1:cubic --flow h1:cubic --start 0s,5s --duration 20s --runs 3 --out - > /tmp/fair.jsonl
  sudo ./bin/pltlab flows --link carlucci2015 --mix h3,h1:cubic --mix h1:cubic,h1:cubic --duration 10s --runs 2 --out /tmp/mixes.jsonl --force
  ./bin/pltlab report /tmp/flows.jsonl --plot /tmp/goodput.png`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			mixes, err := f.specs()
			if err != nil {
				return err
			}
			sink, closeOut, err := f.openOut(cmd)
			if err != nil {
				return err
			}
			err = runFlows(cmd, f, mixes, sink)
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
	f.art.addArtifacts(fl, "pcap,qlog")
	return cmd
}

// specs checks the flags and returns the mixes (--flow is one mix, each --mix another), as
// usage errors.
func (f *flowsFlags) specs() ([][]flows.Spec, error) {
	if f.link == "" {
		return nil, usagef("missing --link: give a LINK spec such as carlucci2015, none or rate=10mbit,rtt=50ms")
	}
	if _, err := parseLink(f.link); err != nil {
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
	for i, mix := range mixes {
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

// procsPerLink is how many Go Ps a program adds per open emulated link when it runs busy
// goroutines next to it (shaping.Open's doc: a forwarder returning from ppoll needs a P).
const procsPerLink = 2

// raiseProcs makes raiseProcsForLink act once per process.
var raiseProcs sync.Once

// raiseProcsForLink raises GOMAXPROCS by procsPerLink (once per process), for every command that
// opens emulated links (root.go calls it): the links' forwarder threads need a P on every return
// from ppoll, and without spare Ps they wait behind the server's, the browser driver's and the
// flows' goroutines, so idle-RTT probes come back late (carlucci2015's self-check failed with
// one 13-23 ms late probe in 'run' and passed in 'link check') and fast links lose rate.
func raiseProcsForLink() {
	raiseProcs.Do(func() { runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + procsPerLink) })
}

// runFlows opens the link, runs the mix --runs times, writes the records to sink and prints the
// table (to stdout, or to stderr when the records go to stdout).
func runFlows(cmd *cobra.Command, f flowsFlags, mixes [][]flows.Spec, sink io.Writer) error {
	ctx := cmd.Context()
	spec, _ := parseLink(f.link)
	if spec.Seed == 0 {
		spec.Seed = f.seed
	}
	if spec.Shaped() {
		raiseProcsForLink()
	}
	l, err := shaping.Open(ctx, spec)
	if err != nil {
		return explainSetupError(fmt.Errorf("open link: %w", err))
	}
	defer l.Close()
	ev, err := newFlowEvidence(f.art)
	if err != nil {
		return err
	}
	srv, err := flows.NewServer(ctx, l, nil, ev.serverOptions()...)
	if err != nil {
		return err
	}
	defer srv.Close()
	tableTo := cmd.OutOrStdout()
	if f.out == "-" {
		tableTo = cmd.ErrOrStderr()
	}
	w := result.NewWriter(sink)
	name := f.name
	if name == "" {
		name = "flows-" + time.Now().UTC().Format("20060102T150405Z")
	}
	env := &result.Env{Pltlab: pltlabVersion(), CPUs: runtime.NumCPU(), Seed: f.seed, QUIC: server.QUICCongestionControl()}
	env.Host, _ = os.Hostname()
	var all []*result.Record
	jobs := flows.Schedule(len(mixes), f.runs, f.seed)
	for i, j := range jobs {
		if err := ev.begin(l, name, i); err != nil {
			return err
		}
		recs, err := flows.Run(ctx, l, srv, flows.Config{Flows: mixes[j.Mix], Duration: f.duration, Bin: f.bin,
			Seed: f.seed, Run: j.Run, Experiment: name, Env: env})
		if eerr := ev.end(l, srv, recs); eerr != nil {
			slog.Warn("artifacts", "run", i, "err", eerr)
		}
		if err != nil {
			return runFlowsError(ctx, err)
		}
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				return err
			}
		}
		all = append(all, recs...)
		fmt.Fprintf(cmd.ErrOrStderr(), "pltlab: run %d/%d done (%s, repetition %d)\n", i+1, len(jobs), flows.Mix(mixes[j.Mix]), j.Run)
		if err := srv.CloseConnections(); err != nil {
			return err
		}
		if i+1 < len(jobs) && !pause(ctx, flowsPause) {
			return runFlowsError(ctx, ctx.Err())
		}
	}
	return analysis.FlowSummary(tableTo, all)
}

// runFlowsError maps an interrupt or a broken pipe to its exit code (stopError); other errors pass.
func runFlowsError(ctx context.Context, err error) error {
	return stopError(ctx, err, "the records of finished runs are kept")
}

// pause waits d; false when ctx ended first.
func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}
