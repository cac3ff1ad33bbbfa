package analysis

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pltlab/pltlab/result"
)

// TestGroupKeyReadsSettingsOnly: every record field that a group's Key is made of (the page
// and link labels, mode, protocol and the settings label, settingsIndex.of) is one that
// package result classes as a setting (result.FieldRole), the one definition the view's
// comparison also follows; a measurement never splits or joins a group.
func TestGroupKeyReadsSettingsOnly(t *testing.T) {
	for _, path := range []string{
		"page.spec", "replay.digest", // Record.PageLabel
		"link.spec", "link.inputs", // Link.Label
		"mode", "protocol",
		"settings.tcp_cc", "settings.tls", "tcp_cc", "tls_version", "browser", "env.pltlab", "cross",
		"settings.device", "device.spec", "settings.h3_stack", "settings.quic_cc", // settingsIndex.of
	} {
		if role, ok := result.FieldRole(path); !ok || role != result.RoleSetting {
			t.Errorf("the group key reads %s, whose role is %q (known %v); want %q", path, role, ok, result.RoleSetting)
		}
	}
}

// TestEverySettingSplitsGroups: two loads that differ in one requested setting (a field of
// result.Settings whose role is setting, timeout_ms apart, see labelled) fall in two groups,
// so that a setting added to result.Settings is never pooled, with no change in this package.
func TestEverySettingSplitsGroups(t *testing.T) {
	for f := range reflect.TypeFor[result.Settings]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if role, _ := result.FieldRole("settings." + name); role != result.RoleSetting || name == "timeout_ms" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			a := &result.Record{V: 1, Experiment: "e", Protocol: "h2", Valid: true, PLTMs: 100, Settings: &result.Settings{}}
			b := *a
			b.Settings = &result.Settings{}
			v := reflect.ValueOf(b.Settings).Elem().FieldByIndex(f.Index)
			switch v.Kind() {
			case reflect.String:
				v.SetString("changed")
			case reflect.Int, reflect.Int64:
				v.SetInt(7)
			case reflect.Float64:
				v.SetFloat(7)
			case reflect.Bool:
				v.SetBool(true)
			default:
				t.Fatalf("settings.%s is a %s: teach this test to change it", name, v.Kind())
			}
			if gs := groupRecords([]*result.Record{a, &b}, PLT); len(gs) != 2 || gs[0].Settings == gs[1].Settings {
				t.Errorf("loads differing in settings.%s: %d groups, settings labels %q", name, len(gs), gs[0].Settings)
			}
		})
	}
}
