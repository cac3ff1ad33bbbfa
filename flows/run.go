package flows

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/pltlab/pltlab/internal/gcpause"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/capture"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// Config configures one run of a flow mix through a link.
type Config struct {
	// Flows is the mix; every flow's Duration defaults to Duration.
	Flows []Spec
	// Duration is the length of flows that do not give theirs (DefaultDuration when 0).
	Duration time.Duration
	// Bin is the width of the series' bins (DefaultBin when 0).
	Bin time.Duration
	// Seed and Run seed the order in which flows that start together are connected, so that no
	// flow always gets the first handshake.
	Seed int64
	Run  int
	// Experiment names the experiment in every record.
	Experiment string
	// Env is copied into every record (may be nil).
	Env *result.Env
	// Logger receives diagnostics (slog.Default() when nil).
	Logger *slog.Logger
	// Stack, when set, is copied into every record (result.Flow.Stack), a QUIC flow's copy with
	// the buffers of quic-go's server socket as read back (server.Info; 0 for ngtcp2's).
	Stack *result.FlowStack
	// Settings, when set, is copied into every record (result.Record.Settings): the settings
	// the run was requested with beyond its mix (MixExperiment.settings).
	Settings *result.Settings
}

func (c Config) withDefaults() Config {
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Bin == 0 {
		c.Bin = DefaultBin
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	c.Flows = slices.Clone(c.Flows)
	for i := range c.Flows {
		if c.Flows[i].Duration == 0 {
			c.Flows[i].Duration = c.Duration
		}
	}
	return c
}

// NewServer starts a page-less pltlab server for flows on l's host address (h1, h2 and h3 on
// free ports; TCP listeners at DefaultTCPCC, each flow setting its own), with extra options
// after those (e.g. server.WithKeyLog, server.WithQlogDir). It stops when ctx ends.
func NewServer(ctx context.Context, l shaping.Link, log *slog.Logger, extra ...server.Option) (*server.Server, error) {
	addr := net.JoinHostPort(l.HostAddr().String(), "0")
	srv, err := server.New("", append([]server.Option{server.WithHost(Host), server.WithAddr(addr), server.WithH1Addr(addr),
		server.WithTCPCC(DefaultTCPCC), server.WithLogger(log)}, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("flows server: %w", err)
	}
	if err := srv.Start(ctx); err != nil {
		return nil, fmt.Errorf("start flows server: %w", err)
	}
	return srv, nil
}

// loadedRTT is the longest round trip a packet of the link sees: the base RTT, the down queue's
// drain time at its rate and twice the jitter; plus 10 ms for the hosts.
func loadedRTT(spec linkspec.Spec) time.Duration {
	q := spec.QueueBytes
	if q == 0 {
		q = linkspec.ByteSize(spec.QueuePackets * cmp.Or(spec.MTU, 1500))
	}
	return spec.RTT + spec.Down.Transmit(q) + 2*spec.Jitter + 10*time.Millisecond
}

// flowRun is one flow during a run.
type flowRun struct {
	spec     Spec
	tr       *transfer
	bins     *Binner
	edges    *ReadEdges // the reads the steady-state goodput is measured between
	bytes    int64
	stats    server.ConnStats
	counts   capture.FlowCounts
	counted  bool
	err      error // set-up failure or early end
	statsErr error // an ngtcp2 flow's qlog could not give its sender counters
	// countersCPU is this process's CPU time spent reading an ngtcp2 flow's qlog.
	countersCPU time.Duration
	endEarly    bool
}

// linkSeries are the link's per-bin counters, sampled from the emulator, and their totals.
type linkSeries struct {
	queueP50, queueMax, bps []float64
	total                   *result.Emulator
}

// Run runs one repetition of c's flows through l against srv (see NewServer) and returns one
// KindFlow record per flow, in the order of c.Flows. A flow that cannot connect or whose
// protocol check fails gives an invalid record; Run fails only on a bad Config or when ctx ends.
func Run(ctx context.Context, l shaping.Link, srv *server.Server, c Config) ([]*result.Record, error) {
	c = c.withDefaults()
	if len(c.Flows) == 0 {
		return nil, errors.New("flows: no flow given")
	}
	total := time.Duration(0)
	for _, f := range c.Flows {
		if f.Start < 0 || f.Duration <= 0 {
			return nil, fmt.Errorf("flow %s: bad start %v or duration %v", f, f.Start, f.Duration)
		}
		total = max(total, f.Start+f.Duration)
	}
	if err := CheckSize(len(c.Flows), total, c.Bin); err != nil {
		return nil, err
	}
	var err error
	if c.Flows, err = ResolveQUIC(c.Flows, srv.Info().H3Stack, ""); err != nil {
		return nil, err
	}
	nbins := int((total + c.Bin - 1) / c.Bin)
	var counter *capture.FlowCounter
	if fc, ok := l.(capture.FlowCounting); ok {
		counter = capture.NewFlowCounter()
		fc.CountFlows(counter)
		defer fc.CountFlows(nil)
	}
	defer gcpause.Begin()() // no collection during the run, as during a load (package gcpause)
	l.TakeCounters()
	epoch := time.Now()
	frs := make([]*flowRun, len(c.Flows))
	spec := l.Spec()
	for i, s := range c.Flows {
		w := SteadyWindow(s.Start, s.Start+s.Duration, spec.RTT, c.Bin)
		frs[i] = &flowRun{spec: s, bins: NewBinner(epoch, c.Bin, nbins),
			edges: NewReadEdges(epoch.Add(time.Duration(w.From)*c.Bin), epoch.Add(time.Duration(w.To)*c.Bin),
				float64(spec.Down), cmp.Or(spec.MTU, 1500), loadedRTT(spec))}
	}
	stopSampler := make(chan struct{})
	series := make(chan linkSeries, 1)
	go func() { series <- sampleLink(l, epoch, c.Bin, nbins, stopSampler) }()
	t := newTarget(l, srv)
	var wg sync.WaitGroup
	for _, i := range dialOrder(c) {
		fr := frs[i]
		if !sleepUntil(ctx, epoch.Add(fr.spec.Start)) {
			break
		}
		end := epoch.Add(fr.spec.Start + fr.spec.Duration)
		fr.tr, fr.err = t.dial(ctx, fr.spec)
		if fr.err != nil {
			c.Logger.Warn("flow failed to start", "flow", fr.spec.String(), "err", fr.err)
			continue
		}
		wg.Go(func() { fr.transfer(ctx, srv, counter, end) })
	}
	wg.Wait()
	close(stopSampler)
	ls := <-series
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, fr := range frs {
		if fr.tr == nil || fr.tr.odcid == "" {
			continue
		}
		// An ngtcp2 connection's counters are in its qlog, complete once it has closed.
		cpu0 := processCPU()
		fr.stats, fr.statsErr = srv.FlowStats(fr.tr.odcid)
		fr.countersCPU = processCPU() - cpu0
	}
	recs := c.records(l, epoch, frs, ls)
	if c.Stack != nil {
		info := srv.Info()
		for i, r := range recs {
			st := *c.Stack
			if isQUICSpec(frs[i].spec) {
				st.UDPRecvBuf, st.UDPSendBuf = info.UDPRcvBuf, info.UDPSndBuf
			}
			r.Stack = &st
		}
	}
	return recs, nil
}

// MaxSeriesValues bounds the values a run keeps in memory: one goodput bin per flow and three
// link series (median and maximum queueing delay, IP rate) per bin, 8 bytes each, so a run
// holds at most 128 MiB of series (and writes each flow's and the link's series into every flow
// record). 2^24 values are 4.6 days of one flow at DefaultBin, or 8 h of 50 flows.
const MaxSeriesValues = 1 << 24

// ErrTooLarge is wrapped by CheckSize's refusal.
var ErrTooLarge = errors.New("run too large")

// CheckSize returns an error wrapping ErrTooLarge, one line naming the values and what is accepted, when a run of n
// flows lasting total (the latest flow's start plus duration) in bins of bin would keep more than
// MaxSeriesValues values; callers check it before setting anything up.
func CheckSize(n int, total, bin time.Duration) error {
	if bin <= 0 || total <= 0 || n <= 0 {
		return fmt.Errorf("flows: bad run size: %d flows, %v in bins of %v: accepted at least one flow and positive times", n, total, bin)
	}
	bins := (total + bin - 1) / bin
	if values := float64(bins) * float64(n+3); values > MaxSeriesValues {
		most := time.Duration(MaxSeriesValues/(n+3)) * bin
		return fmt.Errorf("%w: %d flows over %v in %v bins need %.3g series values in memory, accepted at most %d: with %d flows and %v bins a run of at most %v (or wider bins)",
			ErrTooLarge, n, total, bin, values, MaxSeriesValues, n, bin, most.Truncate(time.Second))
	}
	return nil
}

// dialOrder returns the flow indices by start time; flows that start together are shuffled
// with a generator seeded by (Seed, Run).
func dialOrder(c Config) []int {
	idx := make([]int, len(c.Flows))
	for i := range idx {
		idx[i] = i
	}
	rng := rand.New(rand.NewPCG(uint64(c.Seed), uint64(c.Run)))
	rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(c.Flows[a].Start, c.Flows[b].Start) })
	return idx
}

// sleepUntil waits until t; false when ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// transfer reads the flow's body until end, then reads the server's and the emulator's facts
// and closes the connection.
func (fr *flowRun) transfer(ctx context.Context, srv *server.Server, counter *capture.FlowCounter, end time.Time) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 256<<10)
		for {
			n, err := fr.tr.body.Read(buf)
			if n > 0 {
				now := time.Now()
				fr.bins.Add(now, n)
				fr.bytes += int64(n)
				fr.edges.Note(now, fr.bytes)
			}
			if err != nil {
				select {
				case <-stop:
				default:
					fr.err, fr.endEarly = fmt.Errorf("transfer ended early: %w", err), true
				}
				return
			}
		}
	}()
	select {
	case <-ctx.Done():
	case <-done:
	case <-time.After(time.Until(end)):
	}
	if fr.tr.odcid == "" {
		fr.stats, _ = srv.ConnStats(fr.tr.connID)
	}
	if counter != nil {
		fr.counts, _ = counter.Counts(fr.tr.key)
		fr.counted = true
	}
	close(stop)
	fr.tr.close()
	<-done
}

// sampleLink takes the link's counters once per bin until stop is closed.
func sampleLink(l shaping.Link, epoch time.Time, bin time.Duration, n int, stop <-chan struct{}) linkSeries {
	ls := linkSeries{queueP50: make([]float64, n), queueMax: make([]float64, n), bps: make([]float64, n)}
	tick := time.NewTicker(bin)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return ls
		case now := <-tick.C:
			e := l.TakeCounters()
			i := int(math.Round(float64(now.Sub(epoch))/float64(bin))) - 1
			if e == nil {
				continue
			}
			if ls.total == nil {
				ls.total = &result.Emulator{}
			}
			ls.total.Add(*e)
			if i < 0 || i >= n {
				continue
			}
			ls.queueP50[i], ls.queueMax[i] = e.Down.QueueDelayP50Ms, e.Down.QueueDelayMaxMs
			ls.bps[i] = float64(e.Down.BytesOut) * 8 / bin.Seconds()
		}
	}
}
