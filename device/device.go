// Package device emulates a slower client device for page loads: a CPU budget for Chromium's whole
// process tree (a cgroup's CFS bandwidth: cgroup v2 cpu.max or v1 cpu.cfs_quota_us over
// cpu.cfs_period_us), optionally DevTools' renderer-only CPU throttling
// (Emulation.setCPUThrottlingRate, as Lighthouse, browsertime and WebPageTest use it), and a
// phone's viewport and user agent.
//
// What it models: a device whose cores are Slowdown times slower than this machine's, running
// the browser's work one core at a time. A CFS budget caps the group's total CPU time, not each
// thread's speed, so work the phone would run in parallel on its other cores shares the one
// budget here (the emulation overstates the slowdown of parallel work), and the kernel's TCP
// processing happens outside the group (TCP's CPU cost escapes the budget while QUIC's, in
// Chromium's network service, is charged: the emulation overstates QUIC's penalty against TCP).
// Memory, storage, GPU and the radio are not modelled. docs/design.md, "Slow devices".
package device

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Mechanism names how a device's slowdown is applied.
type Mechanism string

const (
	// Cgroup is a CPU budget for the whole browser tree (cgroup CFS bandwidth).
	Cgroup Mechanism = "cgroup"
	// CDP is DevTools' Emulation.setCPUThrottlingRate: the renderer's main thread only.
	CDP Mechanism = "cdp"
	// Both is the budget plus CDP throttling of the renderer at CDPRate on top of it (the two
	// slowdowns compound on the renderer's main thread).
	Both Mechanism = "cgroup+cdp"
)

// Device is one emulated client device. The zero value and Desktop are this machine unchanged.
type Device struct {
	// Name is the preset's name ("desktop", "motog2013", ...) or "custom".
	Name string `json:"name"`
	// Slowdown is how many times slower the device's CPU is than a desktop of the presets'
	// reference (Source); 1 for the desktop. The budget is 1/Slowdown of one core.
	Slowdown float64 `json:"slowdown"`
	// Mechanism is how the slowdown is applied; "" for the desktop.
	Mechanism Mechanism `json:"mechanism,omitempty"`
	// CDPRate is the Emulation.setCPUThrottlingRate given to every tab (1 = none); set with
	// Mechanism CDP (= Slowdown) or Both (= Slowdown, compounding with the budget).
	CDPRate float64 `json:"cdp_rate,omitempty"`
	// Mobile, Width, Height, DPR and UserAgent are the phone's screen (CSS px, device pixel
	// ratio) and user agent (Emulation.setDeviceMetricsOverride, setUserAgentOverride); Width 0
	// keeps the browser's own. UserAgent's "%s" is replaced by the browser's version.
	Mobile    bool    `json:"mobile,omitempty"`
	Width     int     `json:"width,omitempty"`
	Height    int     `json:"height,omitempty"`
	DPR       float64 `json:"dpr,omitempty"`
	UserAgent string  `json:"user_agent,omitempty"`
	// Source cites where Slowdown comes from.
	Source string `json:"source,omitempty"`
}

// Desktop is this machine as it is: no budget, no throttling, the browser's own screen.
var Desktop = Device{Name: "desktop", Slowdown: 1}

// desktopRef is the reference desktop of the Geekbench-based presets: Geekbench 3 single-core
// about 3,500 (a 2014-2016 Intel Core i5/i7 desktop, the class of machine the 2015-2017 papers'
// desktop clients were).
const desktopRef = 3500.0

// Presets are the devices the papers name, by name. Slowdowns are single-core CPU benchmark
// ratios against a desktop (Source); the budget assumes this machine's core is such a desktop's
// (the record's measured slowdown and host index let a reader rescale).
var Presets = map[string]Device{
	"desktop": Desktop,
	// Kakhki et al. (IMC 2017), mobile-device experiments: the 2013 Moto G (Snapdragon 400,
	// 4 x Cortex-A7 at 1.2 GHz, 1 GB) was one of the two phones on which QUIC's gains shrank.
	"motog2013": {Name: "motog2013", Slowdown: math.Round(desktopRef/350*10) / 10, Mobile: true, Width: 360, Height: 640, DPR: 2,
		UserAgent: "Mozilla/5.0 (Linux; Android 4.4.4; XT1032) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%s Mobile Safari/537.36",
		Source:    "Geekbench 3 single-core: Moto G (2013) about 350 against a desktop's about 3,500 (Geekbench browser); Kakhki et al. IMC 2017 (mobile devices)"},
	// Kakhki et al. (IMC 2017), mobile-device experiments: the late-2014 Nexus 6 (Snapdragon 805, 4 x Krait 450
	// at 2.7 GHz, 3 GB).
	"nexus6": {Name: "nexus6", Slowdown: math.Round(desktopRef/1040*10) / 10, Mobile: true, Width: 412, Height: 732, DPR: 3.5,
		UserAgent: "Mozilla/5.0 (Linux; Android 7.1.1; Nexus 6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%s Mobile Safari/537.36",
		Source:    "Geekbench 3.2 single-core: Nexus 6 1,040 (Geekbench browser, October 2014) against a desktop's about 3,500; Kakhki et al. IMC 2017 (mobile devices)"},
	// Lighthouse's mobile emulation: a 4x CPU multiplier calibrated to make a desktop behave like
	// a Moto G4 (Lighthouse docs/throttling.md, "CPU throttling").
	"motog4": {Name: "motog4", Slowdown: 4, Mobile: true, Width: 360, Height: 640, DPR: 3,
		UserAgent: "Mozilla/5.0 (Linux; Android 7.0; Moto G (4)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%s Mobile Safari/537.36",
		Source:    "Lighthouse's default mobile CPU multiplier, 4x, calibrated against a Moto G4 (Lighthouse docs/throttling.md)"},
}

// MaxSlowdown bounds a custom slowdown: beyond it the budget is under 1/MaxSlowdown of a core and
// the browser's own start-up outlasts the launch timeout.
const MaxSlowdown = 20.0

// Names returns the preset names, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(Presets))
}

// Parse reads a device spec: "desktop", a preset name ("motog2013"), or "cpu=X" (a custom
// slowdown X, 1 < X <= MaxSlowdown, desktop screen), each optionally followed by
// ":cgroup" (the default), ":cdp" or ":cgroup+cdp" for the mechanism. "" is the desktop.
// Errors name the bad value and what is accepted.
func Parse(spec string) (Device, error) {
	s := strings.TrimSpace(spec)
	if s == "" {
		return Desktop, nil
	}
	name, mech, hasMech := strings.Cut(s, ":")
	var d Device
	if v, ok := strings.CutPrefix(name, "cpu="); ok {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || x <= 1 || x > MaxSlowdown {
			return Device{}, fmt.Errorf("bad device %q: cpu=X needs a slowdown X above 1 and at most %g", spec, MaxSlowdown)
		}
		d = Device{Name: "custom", Slowdown: x, Source: "custom slowdown (--device cpu=X)"}
	} else {
		p, ok := Presets[name]
		if !ok {
			return Device{}, fmt.Errorf("bad device %q: accepted %s, or cpu=X (a slowdown), each optionally :cgroup, :cdp or :cgroup+cdp", spec, strings.Join(Names(), ", "))
		}
		d = p
	}
	if d.Name == "desktop" {
		if hasMech {
			return Device{}, fmt.Errorf("bad device %q: the desktop has no slowdown to apply (drop %q)", spec, ":"+mech)
		}
		return d, nil
	}
	switch Mechanism(mech) {
	case "":
		if hasMech {
			return Device{}, fmt.Errorf("bad device %q: an empty mechanism after ':': accepted cgroup, cdp, cgroup+cdp, or no ':'", spec)
		}
		d.Mechanism = Cgroup
	case Cgroup:
		d.Mechanism = Cgroup
	case CDP:
		d.Mechanism, d.CDPRate = CDP, d.Slowdown
	case Both:
		d.Mechanism, d.CDPRate = Both, d.Slowdown
	default:
		return Device{}, fmt.Errorf("bad device %q: mechanism %q: accepted cgroup, cdp, cgroup+cdp", spec, mech)
	}
	return d, nil
}

// String is the device's spec as Parse reads it back ("motog2013:cgroup", "cpu=3:cdp", "desktop").
func (d Device) String() string {
	if d.IsDesktop() {
		return "desktop"
	}
	name := d.Name
	if name == "custom" {
		name = "cpu=" + strconv.FormatFloat(d.Slowdown, 'g', -1, 64)
	}
	return name + ":" + string(d.Mechanism)
}

// IsDesktop reports whether d changes nothing (the zero Device or Desktop).
func (d Device) IsDesktop() bool { return d.Name == "" || d.Name == "desktop" }

// Budgeted reports whether d needs a CPU budget (a cgroup).
func (d Device) Budgeted() bool { return d.Mechanism == Cgroup || d.Mechanism == Both }

// ExpectedSlowdown is the slowdown a single-threaded script in the page should see: Slowdown for
// a budget or CDP throttling, their product for both, 1 for the desktop.
func (d Device) ExpectedSlowdown() float64 {
	switch d.Mechanism {
	case Cgroup, CDP:
		return d.Slowdown
	case Both:
		return d.Slowdown * d.CDPRate
	}
	return 1
}

// MinQuota is the smallest CFS quota the kernel accepts (1 ms, kernel/sched/core.c
// min_cfs_quota_period's companion, cfs_quota_us >= 1000).
const MinQuota = 1000 // µs

// BasePeriod is the CFS period of a budget (10 ms): short, so that an exhausted budget holds a
// thread back for at most a few ms at a time instead of turning into a 100 ms stall (the
// kernel's default period), lengthened only as far as MinQuota needs.
const BasePeriod = 10000 // µs

// Budget returns the CFS period and quota (µs) of a budget of cpus cores: quota/period = cpus,
// period BasePeriod or, when the quota would fall under MinQuota, the shortest period that keeps
// it at MinQuota. cpus must be in (0, 64].
func Budget(cpus float64) (periodUs, quotaUs int) {
	periodUs = BasePeriod
	quotaUs = int(math.Round(cpus * BasePeriod))
	if quotaUs < MinQuota {
		periodUs = int(math.Ceil(MinQuota / cpus))
		quotaUs = MinQuota
	}
	return periodUs, quotaUs
}

// CPUs is the budget of d in cores: 1/Slowdown (0 when d has no budget).
func (d Device) CPUs() float64 {
	if !d.Budgeted() {
		return 0
	}
	return 1 / d.Slowdown
}
