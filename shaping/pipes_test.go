package shaping

import (
	"testing"
	"time"

	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/internal/quantity"
	"github.com/pltlab/pltlab/shaping/emu"
)

func TestDirectionCounters(t *testing.T) {
	d := direction(emu.Counters{PacketsOut: 100, DropsLoss: 12, LossBursts: 4, Reordered: 5, ReorderExtentSum: 15,
		ReorderExtentMax: 7, MarksCE: 3, DropsAQM: 2, DropsOutage: 9, HeldOutage: 1, QueueDelayP50: 2 * time.Millisecond}, time.Now())
	if d.LossBurstMean != 3 || d.ReorderRatio != 0.05 || d.ReorderExtentMean != 3 || d.ReorderExtentMax != 7 || d.MarksCE != 3 ||
		d.DropsAQM != 2 || d.DropsOutage != 9 || d.HeldOutage != 1 || d.QueueDelayP50Ms != 2 {
		t.Fatalf("direction = %+v", d)
	}
}

// TestHostFreezes: a late release is relieved of what a host freeze of its CPU, or of the CPU
// its forwarder slept on, explains while it waited, at most result.HostFreezeAllowanceMs; a freeze of another CPU, one outside the
// wait, an untagged release and an overflowing list explain nothing.
func TestHostFreezes(t *testing.T) {
	idlepoll.ResetFreezes()
	defer idlepoll.ResetFreezes()
	base := time.Now()
	at := func(ms float64) time.Time { return base.Add(time.Duration(ms * float64(time.Millisecond))) }
	msd := func(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
	idlepoll.AddFreeze(idlepoll.Freeze{CPU: 1, Start: at(100), End: at(108), Stolen: msd(7.9)})
	idlepoll.AddFreeze(idlepoll.Freeze{CPU: 0, Start: at(200), End: at(230), Stolen: msd(30)})
	for _, tc := range []struct {
		name        string
		late        []emu.LateRelease
		overflow    bool
		freeze, own float64
		releases    int64
	}{
		{"no late release", nil, false, 0, 0, 0},
		{"freeze of its CPU", []emu.LateRelease{{Due: msd(99), Late: msd(9.1), CPU: 1, WaitCPU: -1}}, false, 7.9, 1.2, 1},
		{"lateness 0 beyond the freeze", []emu.LateRelease{{Due: msd(100.5), Late: msd(7.4), CPU: 1, WaitCPU: -1}}, false, 7.4, 1, 1},
		{"freeze of the CPU it slept on", []emu.LateRelease{{Due: msd(99), Late: msd(9.1), CPU: 0, WaitCPU: 1}}, false, 7.9, 1.2, 1},
		{"another CPU's freeze", []emu.LateRelease{{Due: msd(99), Late: msd(9.1), CPU: 0, WaitCPU: -1}}, false, 0, 0, 0},
		{"outside the wait", []emu.LateRelease{{Due: msd(120), Late: msd(6), CPU: 1, WaitCPU: -1}}, false, 0, 0, 0},
		{"untagged", []emu.LateRelease{{Due: msd(99), Late: msd(9.1), CPU: -1, WaitCPU: -1}}, false, 0, 0, 0},
		{"beyond the allowance", []emu.LateRelease{{Due: msd(200), Late: msd(30.5), CPU: 0, WaitCPU: -1}}, false, 20, 10.5, 1},
		{"one explained, one not", []emu.LateRelease{{Due: msd(99), Late: msd(9.1), CPU: 1, WaitCPU: -1}, {Due: msd(150), Late: msd(6), CPU: 1, WaitCPU: -1}}, false, 7.9, 6, 1},
		{"list overflowed", []emu.LateRelease{{Due: msd(99), Late: msd(9.1), CPU: 1, WaitCPU: -1}}, true, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := time.Duration(0)
			for _, l := range tc.late {
				raw = max(raw, l.Late)
			}
			d := direction(emu.Counters{TimingErrMax: raw, Late: tc.late, LateOverflow: tc.overflow}, base)
			near := func(a, b float64) bool { return a-b < 1e-6 && b-a < 1e-6 }
			if !near(d.HostFreezeMs, tc.freeze) || !near(d.TimingErrOwnMaxMs, tc.own) || d.HostFreezeReleases != tc.releases ||
				!near(d.TimingErrMaxMs, quantity.Ms(raw)) {
				t.Fatalf("freeze %.3f own %.3f releases %d raw %.3f; want freeze %.3f own %.3f releases %d",
					d.HostFreezeMs, d.TimingErrOwnMaxMs, d.HostFreezeReleases, d.TimingErrMaxMs, tc.freeze, tc.own, tc.releases)
			}
			if want := quantity.Ms(raw); tc.freeze > 0 {
				want = tc.own
				if !near(d.OwnLateMs(), want) {
					t.Fatalf("OwnLateMs %.3f, want %.3f", d.OwnLateMs(), want)
				}
			} else if !near(d.OwnLateMs(), want) {
				t.Fatalf("OwnLateMs %.3f, want the raw %.3f", d.OwnLateMs(), want)
			}
		})
	}
}
