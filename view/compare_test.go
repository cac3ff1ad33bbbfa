package view

import (
	"reflect"
	"slices"
	"strings"
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

// TestSettingsDiffFollowsTheRecord: every field of the record is shown as a setting that
// differs exactly when package result classes it as one (result.Fields), so a field added to
// the record needs no change here.
func TestSettingsDiffFollowsTheRecord(t *testing.T) {
	for _, f := range result.Fields() {
		a := recordMap(&result.Record{V: 1})
		b := recordMap(&result.Record{V: 1})
		setPath(b, f.Path, "changed")
		d := diffSettings(a, b)
		shown := len(d) > 0 && !slices.ContainsFunc(d, func(x [3]string) bool { return !strings.HasPrefix(x[0], f.Path) })
		if want := f.Role == result.RoleSetting; shown != want || (!want && len(d) != 0) {
			t.Errorf("field %s (role %s) changed: settings that differ %v", f.Path, f.Role, d)
		}
	}
}

// setPath sets the dotted path of the JSON object m to v, making the objects on its way.
func setPath(m map[string]any, path string, v any) {
	names := strings.Split(path, ".")
	for _, n := range names[:len(names)-1] {
		next, ok := m[n].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[n] = next
		}
		m = next
	}
	m[names[len(names)-1]] = v
}
