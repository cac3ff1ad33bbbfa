package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/pltlab/pltlab/device"
	"github.com/pltlab/pltlab/internal/hostload"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/result"
)

// WithDevice emulates a slower client device (package device): a CPU budget for Chromium's whole
// process tree, CDP throttling of the renderer, or both, and the device's screen and user agent
// in every tab. Launch checks the slowdown before any load (calibrate) and fails when it did not
// hold; every record carries the device (result.Record.Device). The default is the desktop.
func WithDevice(d device.Device) Option { return func(c *config) { c.device = d } }

// SlowdownTolerance is how far the slowdown a calibration script measures may be from the
// device's expected slowdown, as a share of it (0.25: a 10x device passes between 7.5x and 12.5x).
// A budget that does not hold (a process outside the group, a kernel that ignores the quota, a
// busy machine that slows the desktop baseline as much as the device) fails the launch.
const SlowdownTolerance = 0.25

// calibrationRuns is how many times the calibration script is timed at each speed, after one
// untimed run that lets V8 compile it. The fastest run counts: a run's time is the script's work
// at the speed given plus whatever else ran meanwhile (the browser's own start-up is still
// settling when the check runs), and the least disturbed run is the one nearest the work alone.
const calibrationRuns = 5

// Before calibrating, the check waits until the browser's tree went idle: idleWindows windows
// of idleWindow in a row in which the tree spent at most one tick of CPU, for at most
// idleWait. Chromium's start-up work (the GPU and network processes' initialisation) goes on
// for about a second after it answers, and on the budget's one CPU it slowed the desktop-speed
// timing by a third (134 ms against 97 ms once idle).
const (
	idleWindow  = 100 * time.Millisecond
	idleWindows = 2
	idleWait    = 5 * time.Second
)

// waitIdle waits until the tree of root is idle (see idleWindow) or idleWait passed.
func waitIdle(root int) {
	deadline := time.Now().Add(idleWait)
	prev := device.Tree(root)
	for quiet := 0; quiet < idleWindows && time.Now().Before(deadline); {
		time.Sleep(idleWindow)
		cur := device.Tree(root)
		if device.Between(prev, cur).Total() <= device.TickMs {
			quiet++
		} else {
			quiet = 0
		}
		prev = cur
	}
}

// calibrationJS is a fixed single-threaded workload (a linear congruential generator, 2^22
// steps, about 110 ms on this project's 2-core machines), returning the ms it took by
// performance.now(). Its result feeds the return value so that V8 cannot drop the loop.
const calibrationJS = `(() => { const t0 = performance.now(); let x = 1;
for (let i = 0; i < 4194304; i++) { x = (x * 1103515245 + 12345) % 2147483648; }
const t1 = performance.now(); return (t1 - t0) + (x < 0 ? 1 : 0); })()`

// deviceRecord is what the records say of the configured device before calibration.
func (c *config) deviceRecord() *result.Device {
	d := c.device
	if d.IsDesktop() {
		return nil
	}
	return &result.Device{Name: d.Name, Spec: d.String(), Slowdown: d.Slowdown, CDPRate: d.CDPRate,
		Mobile: d.Mobile, Width: d.Width, Height: d.Height, DPR: d.DPR, Source: d.Source,
		ExpectedSlowdown: d.ExpectedSlowdown(), SlowdownTolerance: SlowdownTolerance}
}

// userAgent is the device's user agent with the browser's version in it ("" for none).
func (b *Browser) userAgent() string {
	ua := b.cfg.device.UserAgent
	if ua == "" {
		return ""
	}
	_, ver, _ := strings.Cut(b.version, "/")
	return strings.ReplaceAll(ua, "%s", ver)
}

// emulate applies the device's CDP settings (throttling, screen, user agent) to one tab.
func (b *Browser) emulate(ctx context.Context, t *chromedp.Target) error {
	d := b.cfg.device
	if d.CDPRate > 1 {
		if _, err := cdp.Call(ctx, t, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: d.CDPRate}); err != nil {
			return fmt.Errorf("device %s: CPU throttling: %w", d.Name, err)
		}
	}
	if d.Width > 0 {
		if _, err := cdp.Call(ctx, t, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: int64(d.Width), Height: int64(d.Height), DeviceScaleFactor: d.DPR, Mobile: d.Mobile}); err != nil {
			return fmt.Errorf("device %s: screen: %w", d.Name, err)
		}
	}
	if ua := b.userAgent(); ua != "" {
		if _, err := cdp.Call(ctx, t, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua}); err != nil {
			return fmt.Errorf("device %s: user agent: %w", d.Name, err)
		}
	}
	return nil
}

// calibrate applies the device's slowdown to a launched browser and checks that it holds: the
// calibration script is timed in the first tab before and after, and every process of the tree
// must be in the budget's group. It fills b.device. Errors say by how much the slowdown missed.
func (b *Browser) calibrate(p *process) error {
	d := b.cfg.device
	rec := b.cfg.deviceRecord()
	ctx, cancel := context.WithTimeout(p.ctx, 2*time.Minute)
	defer cancel()
	load := hostload.Start()
	desk, slow, err := slowdownAttempts(rec, func() (float64, float64, error) { return b.timeSlowdown(ctx, p, rec) },
		b.cfg.logger.With("device", d.Name))
	if err != nil {
		return err
	}
	rec.CalibrationDeviceMs = round2(slow)
	rec.MeasuredSlowdown = round2(slow / desk)
	rec.UserAgent = b.userAgent()
	if p.group != nil {
		tree := device.Tree(pid(p.cdp))
		for _, pr := range tree {
			if !pr.Zombie() && !p.group.Has(pr.PID) {
				return fmt.Errorf("device %s: the budget does not hold: Chromium's %s process %d is outside cgroup %s", d.Name, pr.Type, pr.PID, p.group.Dir)
			}
			if pr.Type == device.TypeNetwork {
				rec.NetworkServiceInBudget = true
			}
		}
	}
	if err := checkSlowdown(rec.MeasuredSlowdown, rec.ExpectedSlowdown); err != nil {
		return fmt.Errorf("device %s: the slowdown did not hold on %d checks: %w (last check: calibration script %.1f ms at desktop speed (wall %.1f ms, renderer CPU %.1f ms), %.1f ms on the device; %s)",
			d.Name, rec.CalibrationAttempt, err, desk, rec.CalibrationDesktopMs, rec.CalibrationDesktopCPUMs, slow, hostload.Describe(load.End()))
	}
	b.device = rec
	b.cfg.logger.Info("device emulated", "device", rec.Spec, "mechanism", rec.Mechanism, "cpus", rec.CPUs,
		"expected_slowdown", rec.ExpectedSlowdown, "measured_slowdown", rec.MeasuredSlowdown, "network_service_in_budget", rec.NetworkServiceInBudget)
	return nil
}

// slowdownAttempts times rec's slowdown with timeOnce (desktop and device ms) by the one retry
// rule (result.Retry): a timing whose slowdown misses rec.ExpectedSlowdown by more than
// SlowdownTolerance is made once more, since one busy moment of the machine can slow either
// timing, while a budget that does not hold misses both. It sets rec.CalibrationAttempt to the
// last attempt's number and returns that attempt's timings, or timeOnce's error.
func slowdownAttempts(rec *result.Device, timeOnce func() (desk, slow float64, err error), log *slog.Logger) (desk, slow float64, err error) {
	_, err = result.Retry(func(attempt int) (again bool, err error) {
		if desk, slow, err = timeOnce(); err != nil {
			return false, err
		}
		rec.CalibrationAttempt = attempt
		cerr := checkSlowdown(round2(slow/desk), rec.ExpectedSlowdown)
		if cerr == nil || attempt >= result.Attempts {
			return false, nil
		}
		log.Warn("device calibration missed: checking once more", "err", cerr, "desktop_ms", round2(desk), "device_ms", round2(slow))
		return true, nil
	})
	return desk, slow, err
}

// timeSlowdown times the calibration script at desktop speed (the budget lifted, no CDP
// throttling) and then with the device's slowdown applied, filling rec's budget and mechanism.
func (b *Browser) timeSlowdown(ctx context.Context, p *process, rec *result.Device) (desk, slow float64, err error) {
	d := b.cfg.device
	if p.group != nil {
		if _, _, err := p.group.SetBudget(0); err != nil {
			return 0, 0, fmt.Errorf("device %s: lift the CPU budget: %w", d.Name, err)
		}
	}
	if err := setCDPRate(ctx, d.CDPRate, 1); err != nil {
		return 0, 0, fmt.Errorf("device %s: CPU throttling: %w", d.Name, err)
	}
	waitIdle(pid(p.cdp))
	deskWall, deskCPU, err := timeScript(ctx, pid(p.cdp))
	if err != nil {
		return 0, 0, fmt.Errorf("device %s: calibration at desktop speed: %w", d.Name, err)
	}
	desk = desktopSpeed(deskWall, deskCPU)
	rec.CalibrationDesktopMs, rec.CalibrationDesktopCPUMs = round2(deskWall), round2(deskCPU)
	var mech []string
	if p.group != nil {
		set := b.cfg.setBudget
		if set == nil {
			set = (*device.Group).SetBudget
		}
		period, quota, err := set(p.group, d.CPUs())
		if err != nil {
			return 0, 0, fmt.Errorf("device %s: set the CPU budget: %w", d.Name, err)
		}
		rec.CPUs, rec.PeriodUs, rec.QuotaUs = d.CPUs(), period, quota
		mech = append(mech, p.group.Mechanism())
	}
	if d.CDPRate > 1 {
		if err := setCDPRate(ctx, d.CDPRate, d.CDPRate); err != nil {
			return 0, 0, fmt.Errorf("device %s: CPU throttling: %w", d.Name, err)
		}
		mech = append(mech, "cdp Emulation.setCPUThrottlingRate")
	}
	rec.Mechanism = strings.Join(mech, " + ")
	if slow, _, err = timeScript(ctx, pid(p.cdp)); err != nil {
		return 0, 0, fmt.Errorf("device %s: calibration at device speed: %w", d.Name, err)
	}
	return desk, slow, nil
}

// setCDPRate sets the first tab's CDP throttling to rate when the device uses CDP throttling
// (devRate > 1); it does nothing otherwise.
func setCDPRate(ctx context.Context, devRate, rate float64) error {
	if devRate <= 1 {
		return nil
	}
	return chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetCPUThrottlingRate, emulation.SetCPUThrottlingRateParams{Rate: rate})
		return err
	}))
}

// checkSlowdown fails when measured is outside expected x (1 +- SlowdownTolerance).
func checkSlowdown(measured, expected float64) error {
	if math.IsNaN(measured) || math.Abs(measured/expected-1) > SlowdownTolerance {
		return fmt.Errorf("a calibration script ran %.2fx slower, %.3gx expected (accepted %.3gx to %.3gx)",
			measured, expected, expected*(1-SlowdownTolerance), expected*(1+SlowdownTolerance))
	}
	return nil
}

// timeScript runs calibrationJS once untimed, then calibrationRuns times, and returns the fastest
// run's ms (wall time, by the script's performance.now()) and the CPU time of the renderer main
// thread that ran it over that run (ms, scriptCPU; 0 when unknown).
func timeScript(ctx context.Context, root int) (wall, cpu float64, err error) {
	wall = math.Inf(1)
	for i := range calibrationRuns + 1 {
		before := rendererCPU(root)
		v, err := chromedp.Run(ctx, chromedp.Evaluate[float64](calibrationJS))
		if err != nil {
			return 0, 0, err
		}
		if i > 0 && v < wall {
			wall, cpu = v, scriptCPU(before, rendererCPU(root))
		}
	}
	if wall <= 0 {
		return 0, 0, errors.New("the script took no measurable time")
	}
	return wall, cpu, nil
}

// rendererCPU reads the main-thread CPU time (device.MainThreadCPU) of every renderer process in
// root's tree, by PID.
func rendererCPU(root int) map[int]time.Duration {
	out := map[int]time.Duration{}
	for pid, pr := range device.Tree(root) {
		if pr.Type != device.TypeRenderer {
			continue
		}
		if d, err := device.MainThreadCPU(pid); err == nil {
			out[pid] = d
		}
	}
	return out
}

// scriptCPU is the CPU time (ms) of the renderer main thread that ran a script between two
// readings of rendererCPU: the largest growth among the renderers read both times (the tab's;
// a spare renderer idles). 0 when none was.
func scriptCPU(before, after map[int]time.Duration) float64 {
	var most time.Duration
	for pid, a := range after {
		if b, ok := before[pid]; ok {
			most = max(most, a-b)
		}
	}
	return quantity.Ms(most)
}

// desktopSpeed is the desktop timing the slowdown is taken against: the fastest run's wall time,
// or the renderer's CPU time over it when that is smaller (other work shared its CPU: the wall
// time then holds the other work's share, the CPU time the script's work alone). cpu 0 (no
// schedstat) leaves the wall time.
func desktopSpeed(wall, cpu float64) float64 {
	if cpu > 0 && cpu < wall {
		return cpu
	}
	return wall
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// cpuWatch samples the browser's CPU time around a measured load.
type cpuWatch struct {
	root   int
	group  *device.Group
	tree   map[int]device.Proc
	group0 float64
	thr0   device.Throttling
	self0  float64
	t0     time.Time
}

// watchCPU takes the first sample of a load (the browser tree, its group, the harness).
func (b *Browser) watchCPU() *cpuWatch {
	w := &cpuWatch{root: pid(b.proc.cdp), group: b.proc.group}
	w.tree = device.Tree(w.root)
	w.self0 = device.Self()
	if w.group != nil {
		w.thr0, _ = w.group.Throttling()
		w.group0, _ = w.group.UsageMs()
	}
	w.t0 = time.Now() // right after the group's usage: the budget's window holds the usage's
	return w
}

// budgetSlackPeriods is how many CFS periods' quota a load's group may spend above
// CPUs x its wall time: the period in progress when the load began and the one when it ended.
const budgetSlackPeriods = 2

// finish takes the second sample, fills rec.CPU and, with a budget, makes rec invalid when the
// group spent more than the budget allows or a process of the tree ran outside the group.
func (w *cpuWatch) finish(rec *result.Record, dev *result.Device) {
	var g1 float64
	var gerr error
	if w.group != nil {
		g1, gerr = w.group.UsageMs()
	}
	wall := time.Since(w.t0) // right after the group's usage (see watchCPU)
	after := device.Tree(w.root)
	self := device.Self()
	u := device.Between(w.tree, after)
	c := &result.CPU{BrowserMs: u.Browser, RendererMs: u.Renderer, NetworkMs: u.Network, GPUMs: u.GPU, OtherMs: u.Other,
		TreeMs: u.Total(), HarnessMs: round2(self - w.self0), Exited: u.Exited}
	rec.CPU = c
	if w.group == nil || dev == nil || dev.QuotaUs <= 0 {
		return
	}
	thr1, _ := w.group.Throttling()
	c.GroupMs = round2(g1 - w.group0)
	c.ThrottledMs = round2(thr1.ThrottledMs - w.thr0.ThrottledMs)
	c.BudgetMs = round2(dev.CPUs*float64(wall)/float64(time.Millisecond) + budgetSlackPeriods*float64(dev.QuotaUs)/1000)
	var why string
	switch {
	case gerr != nil:
		why = fmt.Sprintf("device budget not measured: %v", gerr)
	case c.GroupMs > c.BudgetMs:
		why = fmt.Sprintf("device budget exceeded: the browser's group spent %.1f ms of CPU, the budget allows %.1f ms", c.GroupMs, c.BudgetMs)
	default:
		for _, p := range after {
			if !p.Zombie() && !w.group.Has(p.PID) {
				if alivePID(p.PID) {
					why = fmt.Sprintf("device budget escaped: Chromium's %s process %d ran outside the group", p.Type, p.PID)
					break
				}
			}
		}
	}
	if why != "" {
		rec.Valid = false
		if rec.InvalidReason != "" {
			why += "; " + rec.InvalidReason
		}
		rec.InvalidReason = why
	}
}

// alivePID reports whether the process still exists (a process that exited has no cgroup to show).
func alivePID(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// deviceCopy is a copy of the calibrated device for one record (nil for the desktop).
func (b *Browser) deviceCopy() *result.Device {
	if b.device == nil {
		return nil
	}
	d := *b.device
	return &d
}
