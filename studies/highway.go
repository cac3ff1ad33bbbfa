package studies

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pltlab/pltlab/analysis"
	"github.com/pltlab/pltlab/flows"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/plan"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
)

// Highway2023 is the name of the study "QUIC on the Highway" (IFIP Networking 2023).
const Highway2023 = "highway2023"

// highwayArm is one host-stack setting of the study: a bulk flow (flows spec) with quic-go's
// GSO, the veth offloads and the UDP buffers as given.
type highwayArm struct {
	name      string
	flow      string // flows.ParseSpec input
	noGSO     bool   // QUIC_GO_DISABLE_GSO=true in the process
	noOffload bool   // ethtool -K tso/gso/gro off on both veth ends (veth path only)
	osBuffers bool   // UDP sockets set back to the OS default buffers
	stack     string // the h3 stack of the server: "" (quic-go) or flows.StackNgtcp2
}

// highwayArms are the study's arms, in run order within a repetition.
var highwayArms = []highwayArm{
	{name: "tcp-cubic", flow: "h2:cubic"},
	{name: "tcp-bbr", flow: "h2:bbr"},
	{name: "quic", flow: "h3"},
	{name: "quic-os-buffers", flow: "h3", osBuffers: true},
	{name: "quic-no-gso", flow: "h3", noGSO: true},
	{name: "tcp-cubic-no-offload", flow: "h2:cubic", noOffload: true},
	{name: "quic-no-offload", flow: "h3", noOffload: true},
	{name: "ngtcp2-cubic", flow: "h3:cubic", stack: flows.StackNgtcp2},
	{name: "ngtcp2-bbr", flow: "h3:bbr", stack: flows.StackNgtcp2},
}

// highwayPath is where the arms run: the veth pair ("veth") or an emulated LINK spec.
type highwayPath struct {
	name, link string // link "" = veth
}

// highwayScale is the study's schedule at one scale.
type highwayScale struct {
	paths    []highwayPath
	runs     int
	duration time.Duration
}

// highwayScales: smoke is the veth path once at 2 s per arm (about 30 s); quick adds the
// emulated 1 Gbit/s link (1 ms RTT) and five 5 s repetitions per arm, enough for Welch's test
// at p < 0.01 when the arms differ; full runs 10 repetitions of 10 s and a 10 Gbit/s link.
var highwayScales = map[Scale]highwayScale{
	Smoke: {paths: []highwayPath{{"veth", ""}}, runs: 1, duration: 2 * time.Second},
	Quick: {paths: []highwayPath{{"veth", ""}, {"emu-1gbit", "rate=1gbit,rtt=1ms"}}, runs: 5, duration: 5 * time.Second},
	Full: {paths: []highwayPath{{"veth", ""}, {"emu-1gbit", "rate=1gbit,rtt=1ms"}, {"emu-10gbit", "rate=10gbit,rtt=1ms"}},
		runs: 10, duration: 10 * time.Second},
}

// highwayArmOverhead is the set-up and pause around one bulk run beyond its duration (server
// start, handshake, the flow's end, flows.DefaultPause of 1 s). Fit: plan.FitCost's
// FlowOverhead (median spacing of consecutive runs minus their duration) of the highway2023
// smoke and quick runs of 2026-12-01 (testdata/costfit; 6.0 s apart for 5 s runs, 3.0 s for
// 2 s, at load average 2-4): 1.0 s. The earlier 4.5 s (measured at load average 18) made the
// estimates twice the measured time.
const highwayArmOverhead = time.Second

// armsOn returns the arms that apply to a path: the veth offload switches only on veth. The
// ngtcp2 arms are always planned; whether gtlsserver is here is decided when they run, and an
// arm that cannot run leaves records saying why (flows.ArmSkipped).
func armsOn(p highwayPath) []highwayArm {
	var out []highwayArm
	for _, a := range highwayArms {
		if !(a.noOffload && p.link != "") {
			out = append(out, a)
		}
	}
	return out
}

func highway() *Study {
	return &Study{
		Name:         Highway2023,
		Title:        "QUIC on the Highway, IFIP Networking 2023",
		Citation:     "B. Jaeger, J. Zirngibl, M. Kempf, K. Ploch, G. Carle, \"QUIC on the Highway: Evaluating Performance on High-rate Links\", IFIP Networking Conference 2023",
		DefaultScale: Quick,
		plan:         highwayPlan,
		Findings:     highwayFindings,
		Sections:     highwaySections,
		Differences:  highwayDifferences,
	}
}

// highwayPlan is the study's plan at a scale: no page loads, its own schedule of bulk runs.
func highwayPlan(sc Scale, _ Host) Plan {
	hs := highwayScales[sc]
	n := 0
	for _, p := range hs.paths {
		n += len(armsOn(p)) * hs.runs
	}
	p := Plan{Study: Highway2023, Scale: sc,
		ScaledDown: []string{
			"two QUIC implementations (quic-go, and ngtcp2 with CUBIC and BBR) instead of the paper's client/server pairs",
		},
		NotRun: []string{"AES-NI on and off: see the finding \"aesni\""},
	}
	if sc != Full {
		p.ScaledDown = append(p.ScaledDown, "no emulated 10 Gbit/s path (full scale only)")
	}
	var units []CustomUnit
	for _, hp := range hs.paths {
		units = append(units, CustomUnit{Name: hp.name, Experiment: PartExperiment(Highway2023, hp.name), Arms: len(armsOn(hp))})
	}
	p.Custom = &CustomPart{Reps: hs.runs, Arms: n / hs.runs, RunCost: hs.duration + highwayArmOverhead, Units: units,
		Run: func(ctx context.Context, reps int, paths []int, o RunOptions, w *result.Writer) error {
			h := hs
			h.runs = reps
			return runHighway(ctx, h, paths, o, w)
		},
		Keys: func(reps int) []string {
			h := hs
			h.runs = reps
			return highwayKeys(h)
		},
		KeyOf: highwayKeyOf,
		Note: func(reps int) string {
			return fmt.Sprintf("%d repetition(s) of %s per arm and path (the paper: 10 s transfers, repeated)", reps, hs.duration)
		}}
	return p
}

// highwayKeys lists the runs of the schedule hs, one key per (path, arm, repetition) in run
// order (highwayKeyOf of its record).
func highwayKeys(hs highwayScale) []string {
	var out []string
	for _, p := range hs.paths {
		for run := range hs.runs {
			for _, a := range armsOn(p) {
				out = append(out, highwayKey(p.key(), a.name, run))
			}
		}
	}
	return out
}

// highwayKey is a run's key: "PATH|ARM|RUN".
func highwayKey(path, arm string, run int) string { return fmt.Sprint(path, "|", arm, "|", run) }

// highwayKeyOf is the key of a highway2023 flow record ("" for any other line).
func highwayKeyOf(r *result.Record) string {
	if !r.IsFlow() || r.Stack == nil || r.Experiment != PartExperiment(Highway2023, pathName(r.Stack.Path)) {
		return ""
	}
	return highwayKey(r.Stack.Path, r.Stack.Arm, r.Run)
}

// pathName is the name of the path whose key is k.
func pathName(k string) string {
	for _, sc := range highwayScales {
		for _, p := range sc.paths {
			if p.key() == k {
				return p.name
			}
		}
	}
	return k
}

// key is how the path is named in the records (Stack.Path): the LINK spec, or "veth".
func (p highwayPath) key() string {
	return cmp.Or(p.link, p.name)
}

// runHighway runs every arm on every path through the flows package's arms runner
// (flows.ExecuteArms), hs.runs times (the plan's repetitions as applied: --runs replaces them),
// arms in order within a repetition, each record with the full env and the schedule's length
// (Scheduled), so that a resume (o.Resume) makes only the runs not yet made and a re-judge knows
// what the run owed. paths are the indexes into hs.paths to run (a shard's; nil: all). A path
// that fails does not stop the next.
func runHighway(ctx context.Context, hs highwayScale, paths []int, o RunOptions, w *result.Writer) error {
	o.Logger = cmp.Or(o.Logger, slog.Default())
	// The (path, arm, run) keys already in o.Resume.
	done := plan.Made(o.Resume, keyed(highwayKeyOf))
	shard := o.Shard.String() // "" unsharded
	emit := func(r *result.Record) error {
		r.Shard, r.ShardUnits = shard, o.units
		return w.Write(r)
	}
	execute := o.executeArms
	if execute == nil {
		execute = flows.ExecuteArms
	}
	var errs []error
	for i, p := range hs.paths {
		if paths != nil && !slices.Contains(paths, i) {
			continue // another shard's path
		}
		arms := make([]flows.Arm, 0, len(highwayArms))
		for _, a := range armsOn(p) {
			arms = append(arms, a.flowsArm(o))
		}
		err := execute(ctx, flows.ArmExperiment{Path: p.key(), Arms: arms, Runs: hs.runs, Duration: hs.duration,
			Seed: o.Seed, Version: o.Version, Experiment: PartExperiment(Highway2023, p.name), Scheduled: len(highwayKeys(hs)),
			SkipLinkCheck: o.SkipLinkCheck, Logger: o.Logger,
			Done: func(arm string, run int) bool { return done[highwayKey(p.key(), arm, run)] }}, emit)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			o.Logger.Warn("highway path failed", "path", p.name, "err", err)
			errs = append(errs, fmt.Errorf("path %s: %w", p.name, err))
		}
	}
	return errors.Join(errs...)
}

// flowsArm is the arm for the flows package's arms runner. What the host lacks is decided when
// it runs and recorded (flows.ArmSkipped): the ngtcp2 arms need gtlsserver, a TCP arm its
// congestion control (flows.ParseSpec reads the kernel's list). setup makes the host settings.
func (a highwayArm) flowsArm(o RunOptions) flows.Arm {
	spec, err := flows.ParseSpec(a.flow)
	fa := flows.Arm{Name: a.name, Mix: []flows.Spec{spec}, H3Stack: a.stack, OSBuffers: a.osBuffers,
		Setup: func(ctx context.Context, l shaping.Link) (func(*result.Record), error) { return a.setup(ctx, l, o) }}
	switch {
	case err != nil:
		fa.Requires = func() error { return err }
	case a.stack == flows.StackNgtcp2:
		fa.Requires = func() error { return flows.CheckStack(flows.StackNgtcp2) }
	}
	return fa
}

// setup makes arm a's host settings before a run: the veth offloads off, quic-go's GSO off (a
// process-wide setting cmd makes: RunOptions.Process), quic-go's log captured. The teardown it
// returns undoes them and completes the run's record with what the arm varied.
func (a highwayArm) setup(ctx context.Context, l shaping.Link, o RunOptions) (func(*result.Record), error) {
	var undo []func()
	undoAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	if a.noOffload {
		veth, ok := l.(*shaping.VethLink)
		if !ok {
			return nil, errors.New("the arm switches the veth offloads: its path is not the veth pair")
		}
		if err := veth.SetOffloads(ctx, false); err != nil {
			return nil, err
		}
		undo = append(undo, func() { veth.SetOffloads(context.Background(), true) })
	}
	if a.noGSO {
		// quic-go reads it whenever it wraps a UDP socket: the server's at Start, the client's
		// at its dial, both inside the run.
		if o.Process == nil {
			undoAll()
			return nil, errors.New("the arm needs quic-go's GSO switched off, a process-wide setting this run was not given (studies.RunOptions.Process)")
		}
		undo = append(undo, o.Process.DisableQUICGSO())
	}
	qlog := &quicGoLog{}
	if o.Process != nil {
		undo = append(undo, o.Process.CaptureLog(qlog))
	}
	return func(r *result.Record) {
		if r != nil && r.Stack != nil {
			st := r.Stack
			st.QUICGSO, st.Offloads = !a.noGSO, !a.noOffload
			if r.Protocol == "h3" {
				st.UDPBuffers = "raised"
				if a.osBuffers {
					st.UDPBuffers = "os-default"
				}
			}
			qlog.mu.Lock()
			st.QUICWarning = strings.TrimSpace(qlog.buf.String())
			qlog.mu.Unlock()
		}
		undoAll()
	}, nil
}

// quicGoLog collects what quic-go logs through the standard log package (its buffer warning),
// given to ProcessSettings.CaptureLog.
type quicGoLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (q *quicGoLog) Write(b []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.buf.Write(b)
}

// highwayRuns returns the goodputs (Mbit/s) and CPU-s per GB of arm on path from the records.
func highwayRuns(e *Support, path, arm string) (mbps, cpuGB []float64) {
	for _, r := range e.Records {
		if !r.IsFlow() || r.Stack == nil || r.Stack.Path != path || r.Stack.Arm != arm || !r.Valid {
			continue
		}
		mbps = append(mbps, r.GoodputBps/1e6)
		cpuGB = append(cpuGB, r.Stack.CPUSPerGB)
	}
	return mbps, cpuGB
}

// highwaySkipped is why the records say arm could not run on path on the host that made them
// (flows.ArmSkipped), "" when they say nothing of it.
func highwaySkipped(e *Support, path, arm string) string {
	for _, r := range e.Records {
		if r.IsFlow() && r.Stack != nil && r.Stack.Path == path && r.Stack.Arm == arm {
			if why, ok := strings.CutPrefix(r.InvalidReason, flows.ArmSkipped); ok {
				return why
			}
		}
	}
	return ""
}

// gainUndecided says, for a gain d (gain) that is not significant, the smallest difference these
// runs detect with analysis.Power (WelchDetectable) and the runs per arm that would decide the
// observed one (WelchPerArm).
func gainUndecided(d Diff) string {
	det := WelchDetectable(d.SD, d.RefSD, d.N, d.NRef)
	need := WelchPerArm(d.SD, d.RefSD, d.Mean-d.RefMean)
	needS := "no number of runs would decide a zero difference"
	if need < math.MaxInt32 {
		needS = fmt.Sprintf("%d runs per arm would decide the observed %.0f Mbit/s (reproduce highway2023 --runs %d)", need, d.Mean-d.RefMean, need)
	}
	return fmt.Sprintf("%d+%d runs detect a difference of %.0f Mbit/s with %.0f %% power; %s", d.N, d.NRef, det, analysis.Power*100, needS)
}

// gainText gives a gain d (gain) as "+32.2 % (1314 vs 779 Mbit/s, p=0.004)", with ", n.s."
// when not significant and ", too few runs to test" when untested (Diff.notSignificant).
func gainText(d Diff) string {
	return fmt.Sprintf("%s (%.0f vs %.0f Mbit/s, p=%s%s)", quantity.FormatPct(d.Pct), d.Mean, d.RefMean, quantity.FormatP(d.P), d.notSignificant("runs"))
}

// gainDiff is a.Pct - b.Pct, the difference of two independent arms' relative gains, with its
// (1 - alpha) normal interval from each gain's delta-method variance (pctVar).
func gainDiff(a, b Diff, alpha float64) (est, lo, hi float64) {
	return analysis.NormalCI(a.Pct-b.Pct, pctVar(a)+pctVar(b), alpha)
}

// gain compares arm on against arm off on the veth path (CompareMeans(on, off): Mean and SD are
// on's goodput in Mbit/s, RefMean and RefSD off's, Pct the relative gain of on over off in
// percent, P Welch's two-sided p-value); ok false with fewer than HighwayMinRuns runs an arm.
func gain(e *Support, on, off string) (d Diff, ok bool) {
	a, _ := highwayRuns(e, "veth", off)
	b, _ := highwayRuns(e, "veth", on)
	return CompareMeans(b, a), len(a) >= HighwayMinRuns && len(b) >= HighwayMinRuns
}

// implFactor is the goodput ratio beyond which two implementations "vary widely": 1.5. The paper's
// spread is a factor of 54 (90 to 4900 Mbit/s) across its pairs; a factor of 1.5 between two is
// far below that and well above run-to-run noise (quic-go's goodput on veth varies by 5-10 %
// between runs here), so a ratio inside it says these two do not vary widely.
const implFactor = 1.5

const implFactorText = "1.5"

// logRatio returns ln(mean(b) / mean(a)) and its two-sided (1 - alpha) interval by the delta
// method: var(ln mean) = sd^2 / (n mean^2) for each sample (Casella and Berger, section 5.5.4).
func logRatio(a, b []float64, alpha float64) (est, lo, hi float64) {
	ma, sa := analysis.MeanSD(a)
	mb, sb := analysis.MeanSD(b)
	return analysis.NormalCI(math.Log(mb/ma), sa*sa/(float64(len(a))*ma*ma)+sb*sb/(float64(len(b))*mb*mb), alpha)
}

// judgeImplementations judges "goodput varies widely between implementations" from quic-go's and
// ngtcp2's goodput on the veth path: the interval of the log ratio of the means against
// +-ln(implFactor). The emulated path and ngtcp2 with BBR are reported beside it, not judged.
func judgeImplementations(e *Support) Judgement {
	q, qcpu := highwayRuns(e, "veth", "quic")
	n, ncpu := highwayRuns(e, "veth", "ngtcp2-cubic")
	see, cells := []string{"Goodput per arm"}, []string{"veth: quic vs ngtcp2-cubic"}
	if len(q) < HighwayMinRuns || len(n) < HighwayMinRuns {
		if why := highwaySkipped(e, "veth", "ngtcp2-cubic"); why != "" && len(n) == 0 {
			return Judgement{Verdict: NotTestable, See: see, Cells: cells,
				Evidence: "one QUIC stack on this machine (quic-go): " + why}
		}
		return notRun(fmt.Sprintf("too few valid runs on the veth path (quic-go %d, ngtcp2 %d; need %d an arm)", len(q), len(n), HighwayMinRuns))
	}
	est, lo, hi := logRatio(q, n, Alpha)
	r, rlo, rhi := math.Exp(est), math.Exp(lo), math.Exp(hi)
	w := math.Log(implFactor)
	ev := fmt.Sprintf("veth: quic-go %.0f Mbit/s (%.2f CPU-s per GB, %d runs), ngtcp2 CUBIC %.0f Mbit/s (%.2f CPU-s per GB, %d runs): ratio ngtcp2/quic-go %s (99 %% interval), against a factor of %s either way",
		meanOf(q), meanOf(qcpu), len(q), meanOf(n), meanOf(ncpu), len(n), quantity.FormatInterval("%.2f", r, rlo, rhi), implFactorText)
	if b, _ := highwayRuns(e, "veth", "ngtcp2-bbr"); len(b) > 0 {
		ev += fmt.Sprintf("; ngtcp2 BBR %.0f Mbit/s", meanOf(b))
	}
	for _, p := range highwayPathsOf(e) {
		if p == "veth" {
			continue
		}
		pq, _ := highwayRuns(e, p, "quic")
		pn, _ := highwayRuns(e, p, "ngtcp2-cubic")
		if len(pq) > 0 && len(pn) > 0 {
			ev += fmt.Sprintf("; %s: quic-go %.0f, ngtcp2 CUBIC %.0f Mbit/s", p, meanOf(pq), meanOf(pn))
		}
	}
	ev += "; the paper: 90-4900 Mbit/s across its pairs"
	v, _ := fold(every, Alpha, outside(lo, hi, Region{-w, w}))
	ev += map[Verdict]string{Contradicted: ": these two implementations are within that factor of each other",
		Inconclusive: ": the interval crosses the factor; more runs decide it"}[v]
	return Judgement{Verdict: v, Evidence: ev, See: see, Cells: cells}
}

// HighwayMinRuns is the fewest runs per arm for which a highway2023 finding is judged: with
// fewer, Welch's test on goodputs has too few degrees of freedom to reach p < 0.01 unless the
// arms differ by many standard deviations.
const HighwayMinRuns = 3

var highwayFindings = []Finding{
	{ID: "implementations", Source: "abstract; section 5 (goodput per client/server pair on 10 Gbit/s links)",
		Claim:     "QUIC goodput \"varies widely between client and server implementations from 90 Mbit/s to 4900 Mbit/s\"",
		Criterion: "two implementations here, quic-go (NewReno) and ngtcp2 (CUBIC), each serving and a quic-go client: on the veth path the ratio of their mean goodputs is judged by its interval (delta method on the log ratio, 99 %): reproduced when it lies beyond a factor of " + implFactorText + " either way (wide variation), contradicted when it lies within that factor, inconclusive otherwise",
		Judge:     judgeImplementations},
	{ID: "buffers", Source: "abstract; section 5.2 (UDP socket buffer sizes)",
		Claim:     "\"the OS generally sets the default buffer size too small, which should be increased by at least an order of magnitude\"",
		Criterion: "quic-go's goodput on veth with its raised UDP buffers (7 MiB asked) is significantly higher (Welch, p < 0.01) than with the OS default buffers (rmem_default)",
		Judge: func(e *Support) Judgement {
			d, ok := gain(e, "quic", "quic-os-buffers")
			if !ok {
				return notRun(fmt.Sprintf("too few runs at this scale (%d and %d, need %d an arm)", d.N, d.NRef, HighwayMinRuns))
			}
			ev := "quic-go on veth, raised buffers (7 MiB asked) over the OS default: " + gainText(d)
			v, _ := fold(every, Alpha, testClaim(d.P, d.Mean-d.RefMean))
			ev += map[Verdict]string{Contradicted: " (the default was faster)", Inconclusive: ": " + gainUndecided(d)}[v]
			return Judgement{Verdict: v, Evidence: ev, See: []string{"Goodput per arm"}, Cells: []string{"veth: quic vs quic-os-buffers"}}
		}},
	{ID: "offload", Source: "abstract; section 5.3 (NIC offloading)",
		Claim:     "\"QUIC benefits less from NIC offloading ... while [it improves] the goodput of TCP to around 8000 Mbit/s\"",
		Criterion: "on veth, TCP's relative goodput gain from TSO/GSO/GRO (on vs off) is significantly positive and larger than QUIC's gain from the same offloads and than its gain from quic-go's GSO (quic vs quic-no-offload and quic-no-gso), each difference by its interval; Bonferroni over the three",
		Judge: func(e *Support) Judgement {
			tcp, ok1 := gain(e, "tcp-cubic", "tcp-cubic-no-offload")
			qo, ok2 := gain(e, "quic", "quic-no-offload")
			qg, ok3 := gain(e, "quic", "quic-no-gso")
			if !ok1 || !ok2 || !ok3 {
				return notRun(fmt.Sprintf("too few runs at this scale (need %d an arm)", HighwayMinRuns))
			}
			// Three sub-claims, a third of Alpha each (Bonferroni): TCP gains, and gains more than
			// QUIC from the offloads and more than QUIC from its GSO (intervals of the differences
			// of the gains, delta method: gainDiff).
			a := Alpha / 3
			d1, lo1, hi1 := gainDiff(tcp, qo, a)
			d2, lo2, hi2 := gainDiff(tcp, qg, a)
			level := fmt.Sprintf("%.4g %%", 100*(1-a))
			ev := fmt.Sprintf("gain from the veth offloads: TCP cubic %s, QUIC %s; gain from quic-go's GSO: %s; TCP's gain minus QUIC's: offloads %s pp, GSO %s pp (%s intervals)",
				gainText(tcp), gainText(qo), gainText(qg), quantity.FormatInterval("%+.1f", d1, lo1, hi1), quantity.FormatInterval("%+.1f", d2, lo2, hi2), level)
			up := Region{0, math.Inf(1)}
			v, vs := fold(every, a, testClaim(tcp.P, tcp.Pct), within(lo1, hi1, up), within(lo2, hi2, up))
			ev += map[Verdict]string{Contradicted: ": the offloads made TCP slower",
				Inconclusive: fmt.Sprintf(": TCP's gain is not significant at %.4g: %s", a, gainUndecided(tcp))}[vs[0]]
			return Judgement{Verdict: v, Evidence: ev, See: []string{"Goodput per arm"},
				Cells: []string{"veth: tcp-cubic vs tcp-cubic-no-offload", "veth: quic vs quic-no-offload", "veth: quic vs quic-no-gso"}}
		}},
	{ID: "aesni", Source: "abstract; section 5.3 (AES-NI)",
		Claim:     "QUIC benefits less from \"AES NI hardware acceleration\" than TCP",
		Criterion: "AES-NI on and off for both stacks",
		Judge: func(e *Support) Judgement {
			return Judgement{Verdict: NotTestable, Evidence: "not testable here: Go's crypto/aes uses AES-NI whenever the CPU has it; the only switch " +
				"(GODEBUG=cpu.aes=off) is read once at program start, and both endpoints of every run share this one process, " +
				"so AES-NI cannot be turned off for one arm against another within a run"}
		}},
}

// highwayPaths lists the paths present in the records, veth first.
func highwayPathsOf(e *Support) []string {
	var out []string
	for _, r := range e.Records {
		if r.IsFlow() && r.Stack != nil && !slices.Contains(out, r.Stack.Path) {
			out = append(out, r.Stack.Path)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int {
		if a == "veth" {
			return -1
		}
		if b == "veth" {
			return 1
		}
		return strings.Compare(a, b)
	})
	return out
}

func highwaySections(e *Support) []Section {
	t := Table{Caption: "Mean goodput over each flow's steady state, and the process's CPU time per GB received (both endpoints; the emulator's threads apart)",
		Header: []string{"path", "arm", "runs", "goodput (Mbit/s)", "min-max", "CPU-s per GB", "emulator CPU-s per GB", "UDP rcvbuf (B)", "quic-go warning"}}
	for _, p := range highwayPathsOf(e) {
		for _, a := range highwayArms {
			var mb, cg, eg []float64
			rcv, warn := 0, ""
			for _, r := range e.Records {
				if !r.IsFlow() || r.Stack == nil || r.Stack.Path != p || r.Stack.Arm != a.name || !r.Valid {
					continue
				}
				mb = append(mb, r.GoodputBps/1e6)
				cg = append(cg, r.Stack.CPUSPerGB)
				if r.Bytes > 0 && r.Stack.EmulatorCPUSeconds > 0 {
					eg = append(eg, r.Stack.EmulatorCPUSeconds/(float64(r.Bytes)/1e9))
				}
				rcv = max(rcv, r.Stack.UDPRecvBuf)
				warn = cmp.Or(r.Stack.QUICWarning, warn)
			}
			if len(mb) == 0 {
				continue
			}
			emuCell, rcvCell := "-", "-"
			if len(eg) > 0 {
				emuCell = fmt.Sprintf("%.2f", meanOf(eg))
			}
			if rcv > 0 {
				rcvCell = strconv.Itoa(rcv)
			}
			warn = cmp.Or(warn, "-")
			t.Rows = append(t.Rows, []string{p, a.name, strconv.Itoa(len(mb)), fmt.Sprintf("%.0f", meanOf(mb)),
				fmt.Sprintf("%.0f-%.0f", slices.Min(mb), slices.Max(mb)), fmt.Sprintf("%.2f", meanOf(cg)), emuCell, rcvCell, warn})
		}
	}
	paper := Table{Caption: "The paper's figures (abstract) beside ours on the veth path",
		Header: []string{"quantity", "paper (10 Gbit/s NICs, two hosts)", "here (veth, one host)"}}
	q, _ := highwayRuns(e, "veth", "quic")
	ng, _ := highwayRuns(e, "veth", "ngtcp2-cubic")
	ngb, _ := highwayRuns(e, "veth", "ngtcp2-bbr")
	tc, _ := highwayRuns(e, "veth", "tcp-cubic")
	tn, _ := highwayRuns(e, "veth", "tcp-cubic-no-offload")
	paper.Rows = [][]string{
		{"QUIC goodput", "90-4900 Mbit/s across implementations", fmtMbps(q) + " (quic-go), " + fmtMbps(ng) + " (ngtcp2 CUBIC), " + fmtMbps(ngb) + " (ngtcp2 BBR)"},
		{"TCP goodput with offloads (and AES-NI)", "about 8000 Mbit/s", fmtMbps(tc) + " (TLS 1.3 over TCP, HTTP/2)"},
		{"TCP goodput without offloads", "lower (figure in section 5.3)", fmtMbps(tn)},
	}
	if len(e.Records) == 0 {
		return []Section{{ID: "goodput", Title: "Goodput per arm", Text: []string{"No bulk run was recorded."}}}
	}
	return []Section{
		{ID: "goodput", Title: "Goodput per arm", Text: []string{
			"Each arm is one bulk download (pltlab's server, HTTP/2 over TLS 1.3 over TCP or HTTP/3 over QUIC) from the host namespace into a client namespace; " +
				"\"os-buffers\" sets every UDP socket of the run back to net.core.rmem_default/wmem_default after quic-go raised them, " +
				"\"no-gso\" runs with QUIC_GO_DISABLE_GSO=true, \"no-offload\" turns TSO, GSO and GRO off on both veth ends (ethtool -K); " +
				"\"ngtcp2-cubic\" and \"ngtcp2-bbr\" are served by ngtcp2's gtlsserver (Debian's ngtcp2 0.12, single-threaded, its qlog on) with that controller, to the same quic-go client; " +
				"their CPU time adds the gtlsserver process's (/proc/PID/stat) and leaves out pltlab's reading of its qlog (counters_cpu_s)."},
			Tables: []Table{t, paper}},
	}
}

// fmtMbps formats the mean of xs in Mbit/s with the run count ("-" when empty).
func fmtMbps(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f Mbit/s (%d runs)", meanOf(xs), len(xs))
}

func highwayDifferences(e *Support) []string {
	cpus := runtime.NumCPU()
	for _, r := range e.Records {
		if r.Env != nil && r.Env.CPUs > 0 {
			cpus = r.Env.CPUs
			break
		}
	}
	return []string{
		fmt.Sprintf("one host with %d cores (recorded) runs both endpoints, instead of two dedicated servers: sender and receiver compete for the same cores", cpus),
		"a veth pair between two namespaces instead of 10 Gbit/s NICs: no wire rate limit, offloads are the kernel's software TSO/GSO/GRO, not the NIC's",
		"two QUIC stacks (quic-go with NewReno; ngtcp2 0.12's example server with CUBIC or BBR, to the quic-go client) and one TCP stack (Linux) instead of the paper's implementation pairs",
		"HTTP/2 and HTTP/3 bulk downloads from pltlab's server instead of the QUIC Interop Runner's file transfers",
		"CPU time is the whole process's (both endpoints in one process; for the ngtcp2 arms plus the gtlsserver process), not per side; the emulator's threads are reported apart",
		"AES-NI stays on (see the finding \"aesni\")",
	}
}
