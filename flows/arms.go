package flows

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pltlab/pltlab/internal/cpushield"
	"github.com/pltlab/pltlab/internal/hostenv"
	"github.com/pltlab/pltlab/internal/hostload"
	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/server"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// Arm is one host-stack setting of an arms experiment (ArmExperiment): one mix served by an h3 stack,
// with hooks around each of its runs. Its records carry a result.FlowStack naming the path and
// the arm, with the CPU time the run cost.
type Arm struct {
	// Name names the arm in the records (result.FlowStack.Arm).
	Name string
	// Mix is the arm's flows.
	Mix []Spec
	// H3Stack is the HTTP/3 stack serving its QUIC flows: "" (quic-go) or StackNgtcp2.
	H3Stack string
	// OSBuffers sets quic-go's server socket back to the OS default buffers
	// (net.core.rmem_default, wmem_default, read at run time) once quic-go has raised them
	// (server.WithUDPBuffers); the client's socket keeps what quic-go gave it.
	OSBuffers bool
	// Requires, when set, says at run time why the arm cannot run on this host (nil when it
	// can); an arm that cannot run leaves one invalid record per run naming why (ArmSkipped).
	Requires func() error
	// Setup, when set, runs before each run's server starts; the teardown it returns runs after
	// the run with the run's record (nil when the run failed) to complete it.
	Setup func(ctx context.Context, l shaping.Link) (teardown func(*result.Record), err error)
}

// mixes is the arm as a mix experiment of one mix, for the stack's server options and settings.
func (a Arm) mixes() MixExperiment { return MixExperiment{H3Stack: a.H3Stack, Mixes: [][]Spec{a.Mix}} }

// settings are the settings the arm's records carry (MixExperiment.settings).
func (a Arm) settings() *result.Settings { return a.mixes().settings(a.Mix) }

// ArmExperiment is an arms experiment: every arm run Runs times on one path, the arms in order within
// each repetition, each run on a server of its own. ExecuteArms runs it.
type ArmExperiment struct {
	// Path is the LINK spec of an emulated link, or shaping.ShaperVeth for the bare veth pair;
	// records carry it in FlowStack.Path.
	Path string
	// Arms are the settings, in run order within a repetition.
	Arms []Arm
	// Runs is the number of repetitions; Duration the length of every flow.
	Runs     int
	Duration time.Duration
	// Seed seeds the dial order; Version is written into every record's env.
	Seed    int64
	Version string
	// Experiment names the experiment in every record.
	Experiment string
	// Scheduled is written into every record (result.Record.Scheduled).
	Scheduled int
	// SkipLinkCheck skips the emulated link's self-check.
	SkipLinkCheck bool
	// Done reports whether a run is already made (a resumed execution); nil: none is.
	Done func(arm string, run int) bool
	// Pause is the quiet time after every run (DefaultPause when 0).
	Pause time.Duration
	// Logger receives diagnostics (slog.Default() when nil).
	Logger *slog.Logger
	// seams are the steps the tests replace (nil: the real ones).
	seams seams
}

// ArmSkipped starts the invalid reason of the records of an arm that could not run on the
// host (Arm.Requires).
const ArmSkipped = "not run on this host: "

// openArmPath opens an arms plan's path: the bare veth pair, or an emulated link.
func openArmPath(ctx context.Context, path string, log *slog.Logger) (shaping.Link, error) {
	if path == shaping.ShaperVeth {
		return shaping.OpenVeth(ctx, 0)
	}
	spec, err := linkspec.Parse(path)
	if err != nil {
		return nil, err
	}
	return shaping.Open(ctx, spec, shaping.WithLogger(log))
}

// ExecuteArms runs the plan: it opens the path, self-checks an emulated one (its link_check
// lines first, unless SkipLinkCheck), and makes every run not Done, each by the one retry rule
// (result.Retry: a run the emulator was late in is made once more), emitting its record with
// the complete env. It opens nothing when every run is done, fails on a path that cannot be set
// up or fails its check, a run that fails, an emit error, or when ctx ends.
func ExecuteArms(ctx context.Context, p ArmExperiment, emit func(*result.Record) error) error {
	p.Logger = cmp.Or(p.Logger, slog.Default())
	p.Pause = cmp.Or(p.Pause, DefaultPause)
	done := func(a Arm, run int) bool { return p.Done != nil && p.Done(a.Name, run) }
	left := 0
	for run := range p.Runs {
		for _, a := range p.Arms {
			if !done(a, run) {
				left++
			}
		}
	}
	if left == 0 {
		return nil
	}
	open, check := openArmPath, p.seams.armCheck
	if p.seams.openPath != nil {
		open = p.seams.openPath
	}
	if check == nil {
		check = func(ctx context.Context, l shaping.Link, name, exp string, env *result.Env, log *slog.Logger, emit func(*result.Record) error) error {
			return checkLink(ctx, l, name, exp, env, log, emit, p.seams)
		}
	}
	l, err := open(ctx, p.Path, p.Logger)
	if err != nil {
		return err
	}
	defer l.Close()
	env := hostenv.Local(p.Version, p.Seed)
	env.IdlePollCPUs = idlepoll.Active()
	env.ShieldCPU = cpushield.CPU()
	if p.Path != shaping.ShaperVeth && !p.SkipLinkCheck {
		if err := check(ctx, l, p.Path, p.Experiment, env, p.Logger, emit); err != nil {
			return err
		}
	}
	missing := map[string]error{} // decided once per execution, at run time
	for _, a := range p.Arms {
		if a.Requires != nil {
			if err := a.Requires(); err != nil {
				p.Logger.Warn("arm not run on this host", "arm", a.Name, "err", err)
				missing[a.Name] = err
			}
		}
	}
	for run := range p.Runs {
		for _, a := range p.Arms {
			if done(a, run) {
				continue // made by the interrupted execution being resumed
			}
			if err := p.runOne(ctx, l, a, run, env, missing[a.Name], emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// runOne makes run run of arm a by the one retry rule and emits its record; an arm missing on
// the host emits its invalid record at once.
func (p ArmExperiment) runOne(ctx context.Context, l shaping.Link, a Arm, run int, env *result.Env, missing error, emit func(*result.Record) error) error {
	if missing != nil {
		r := &result.Record{Kind: result.KindFlow, Experiment: p.Experiment, Run: run, Time: time.Now().UTC(), Env: env,
			Link: l.Spec().Result(), InvalidReason: ArmSkipped + missing.Error(), Scheduled: p.Scheduled,
			Flow: &result.Flow{Mix: Mix(a.Mix), Stack: &result.FlowStack{Path: p.Path, Arm: a.Name}}, Settings: a.settings()}
		r.Link.Spec = p.Path
		return emit(r)
	}
	runArmOnce := runArm
	if p.seams.runArm != nil {
		runArmOnce = p.seams.runArm
	}
	var rec *result.Record
	var earlier []result.EarlierAttempt
	_, err := result.Retry(func(attempt int) (again bool, err error) {
		host := hostload.Start()
		rec, err = runArmOnce(ctx, l, p, a, run, env)
		if err != nil {
			return false, fmt.Errorf("arm %s: %w", a.Name, err)
		}
		busy, steal := host.End()
		if attempt > 1 {
			rec.Attempt, rec.EarlierAttempts = attempt, earlier
		}
		if !result.MarkLate(hostload.Describe(busy, steal), rec) || attempt >= result.Attempts {
			return false, nil
		}
		p.Logger.Warn("emulator late during an arm's run: made again", "path", p.Path, "arm", a.Name, "run", run,
			"late_ms", rec.Emulator.LateMs(), "bound_ms", rec.Emulator.LateBound())
		earlier = append(earlier, result.Earlier(rec, busy, steal))
		if !sleepUntil(ctx, time.Now().Add(p.Pause)) {
			return false, ctx.Err()
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	rec.Scheduled = p.Scheduled
	if err := emit(rec); err != nil {
		return err
	}
	if !sleepUntil(ctx, time.Now().Add(p.Pause)) {
		return ctx.Err()
	}
	return nil
}

// runArm makes one run of arm a: its Setup, a server of its stack, the mix (Run), the CPU time
// both endpoints spent (this process's, getrusage, plus the ngtcp2 server's processes, less
// reading the ngtcp2 qlog and less the emulator's threads, reported apart) and its teardown.
func runArm(ctx context.Context, l shaping.Link, p ArmExperiment, a Arm, run int, env *result.Env) (rec *result.Record, err error) {
	if a.Setup != nil {
		teardown, err := a.Setup(ctx, l)
		if err != nil {
			return nil, err
		}
		defer func() { teardown(rec) }()
	}
	var opts []server.Option
	if a.OSBuffers {
		// The kernel doubles the value given (socket(7)): half the default gives the default.
		opts = append(opts, server.WithUDPBuffers(sysctlInt("net/core/rmem_default")/2, sysctlInt("net/core/wmem_default")/2))
	}
	srv, err := NewServer(ctx, l, p.Logger, append(a.mixes().stackOptions(), opts...)...)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	if info := srv.Info(); info.H3Stack == StackNgtcp2 {
		e := *env
		e.QUIC = info.QUICStack // read from the running server
		env = &e
	}
	emu, _ := l.(interface{ EmulatorCPU() time.Duration })
	var emu0 time.Duration
	if emu != nil {
		emu0 = emu.EmulatorCPU()
	}
	st := &result.FlowStack{Path: p.Path, Arm: a.Name}
	cpu0, stack0 := processCPU(), srv.StackCPU()
	recs, err := Run(ctx, l, srv, Config{Flows: a.Mix, Duration: p.Duration, Seed: p.Seed, Run: run,
		Experiment: p.Experiment, Env: env, Logger: p.Logger, Stack: st, Settings: a.settings()})
	cpu := processCPU() - cpu0 + srv.StackCPU() - stack0
	if err != nil {
		return nil, err
	}
	if len(recs) != 1 {
		return nil, fmt.Errorf("flows returned %d records for one flow", len(recs))
	}
	rec = recs[0]
	cpu -= time.Duration(rec.CountersCPUS * float64(time.Second)) // reading the ngtcp2 qlog: pltlab's, not the transfer's
	rec.Stack.CPUSeconds = cpu.Seconds()
	if emu != nil {
		e := emu.EmulatorCPU() - emu0
		rec.Stack.EmulatorCPUSeconds = e.Seconds()
		if p, ok := l.(interface{ Process() string }); !ok || p.Process() == shaping.ProcessShared {
			rec.Stack.CPUSeconds = (cpu - e).Seconds() // the forwarders' threads are this process's
		}
	}
	if rec.Bytes > 0 {
		rec.Stack.CPUSPerGB = rec.Stack.CPUSeconds / (float64(rec.Bytes) / 1e9)
	}
	rec.Link.Spec = p.Path
	return rec, nil
}

// sysctlInt reads an integer sysctl under /proc/sys (0 when unreadable).
func sysctlInt(key string) int {
	b, err := os.ReadFile("/proc/sys/" + key)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}
