package view

import (
	"reflect"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestSettingsDiffLeavesMeasurementsOut: two loads that differ only in what was measured
// (host load, CPU, attempts, connections per origin, what the archive answered) have no
// settings that differ; a setting that differs (the link, the archive, the HTTP/3 stack) is
// listed.
func TestSettingsDiffLeavesMeasurementsOut(t *testing.T) {
	a := &result.Record{V: 1, Protocol: "h2", Link: result.Link{Spec: "carlucci2015", RTTMs: 50}, Browser: "Chromium/156",
		Replay: &result.Replay{Archive: "a.har", Digest: "ab", Hits: 10}, Device: &result.Device{Spec: "motog2013:cgroup", MeasuredSlowdown: 3.9}}
	b := *a
	b.Replay = &result.Replay{Archive: "a.har", Digest: "ab", Hits: 9, Misses: 1, Missed: []string{"GET https://x/"}}
	b.HostBusyPct, b.HostStealPct, b.BrowserProcs, b.Browsers = 95, 7, 12, 3
	b.CPU = &result.CPU{TreeMs: 120}
	b.Attempt, b.EarlierAttempts = 2, []result.EarlierAttempt{{}}
	b.Origins, b.Coalesced = []result.OriginConns{{Host: "plt.test", Conns: 2}}, true
	b.Device = &result.Device{Spec: "motog2013:cgroup", MeasuredSlowdown: 4.1, CalibrationAttempt: 2}
	b.Env = &result.Env{Seed: 7}
	if d := settingsDiff(a, &b); len(d) != 0 {
		t.Errorf("settingsDiff of loads differing only in measurements = %v; want none", d)
	}
	b.Link.RTTMs, b.Replay.Digest = 100, "cd"
	b.Settings = &result.Settings{H3Stack: "ngtcp2"}
	d := settingsDiff(a, &b)
	want := [][3]string{{"link.rtt_ms", "50", "100"}, {"replay.digest", `"ab"`, `"cd"`}, {"settings.h3_stack", "-", `"ngtcp2"`}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("settingsDiff = %v; want %v", d, want)
	}
}

// futureLoad is a kind of line this package has never seen: a load with a setting and a
// measurement added, as a new field would be added to one kind in package result.
type futureLoad struct {
	result.Record
	Knob    string `json:"knob,omitempty" role:"setting"`
	Counter int    `json:"counter,omitempty" role:"measure"`
}

// TestSettingsDiffOfANewKind: a field added to one kind of line shows up in the comparison as a
// setting that differs when its role tag says setting, and not when it says measure, with no
// change in this package.
func TestSettingsDiffOfANewKind(t *testing.T) {
	a := futureLoad{Record: result.Record{V: 1, Protocol: "h3", Link: result.Link{RTTMs: 50}}, Knob: "x", Counter: 1}
	b := a
	b.Counter = 2
	if d := settingsDiff(&a, &b); len(d) != 0 {
		t.Errorf("settingsDiff of lines differing in a new measurement = %v; want none", d)
	}
	b.Knob, b.Link.RTTMs = "y", 100
	want := [][3]string{{"knob", `"x"`, `"y"`}, {"link.rtt_ms", "50", "100"}}
	if d := settingsDiff(&a, &b); !reflect.DeepEqual(d, want) {
		t.Errorf("settingsDiff of lines differing in a new setting = %v; want %v", d, want)
	}
}
