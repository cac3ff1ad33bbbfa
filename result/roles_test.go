package result

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestEveryFieldHasARole walks Record's fields (and those of its mixed fields): each states
// whether it is a setting, a measurement or bookkeeping, so that a field added to the record
// is classified where it is declared and every reader (view's compare, the grouping) follows.
func TestEveryFieldHasARole(t *testing.T) {
	fields := Fields()
	if len(fields) < 60 {
		t.Fatalf("Fields: %d fields; want every field of Record", len(fields))
	}
	for _, f := range fields {
		switch f.Role {
		case RoleSetting, RoleMeasure, RoleLine:
		default:
			t.Errorf("field %s has role %q: give it a `role:\"setting|measure|line\"` tag (or mixed, with its type's fields tagged)", f.Path, f.Role)
		}
	}
}

// TestEveryJSONKeyHasARole: every key of a record with every field set, as encoded, resolves to
// a role (FieldRole), down to its leaves.
func TestEveryJSONKeyHasARole(t *testing.T) {
	r := Record{V: 1, Replay: &Replay{Hits: 1}, Device: &Device{Spec: "motog2013:cgroup"}, Env: &Env{Pltlab: "v1"},
		Settings: &Settings{TCPCC: "cubic"}, CPU: &CPU{TreeMs: 1}, Flow: &Flow{Mix: "h1:cubic", Stack: &FlowStack{Arm: "quic"}}}
	raw, _ := json.Marshal(&r)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if obj, ok := v.(map[string]any); ok {
			for k, x := range obj {
				walk(prefix+k+".", x)
			}
			return
		}
		p := strings.TrimSuffix(prefix, ".")
		if role, ok := FieldRole(p); !ok || role == RoleMixed || role == "" {
			t.Errorf("FieldRole(%q) = %q, %v", p, role, ok)
		}
	}
	walk("", m)
}

func TestFieldRole(t *testing.T) {
	for _, tt := range []struct {
		path string
		want Role
		ok   bool
	}{
		{"plt_ms", RoleMeasure, true},
		{"host_busy_pct", RoleMeasure, true},
		{"cpu", RoleMeasure, true},
		{"cpu.tree_ms", RoleMeasure, true},
		{"attempt", RoleMeasure, true},
		{"origins", RoleMeasure, true},
		{"replay.hits", RoleMeasure, true},
		{"replay.digest", RoleSetting, true},
		{"replay", RoleMixed, true},
		{"link.rtt_ms", RoleSetting, true},
		{"link.down.loss", RoleSetting, true},
		{"device.spec", RoleSetting, true},
		{"device.measured_slowdown", RoleMeasure, true},
		{"settings.tcp_cc", RoleSetting, true},
		{"settings.overrides", RoleLine, true},
		{"env.pltlab", RoleSetting, true},
		{"env.seed", RoleLine, true},
		{"run", RoleLine, true},
		{"goodput_bps", RoleMeasure, true}, // inlined Flow
		{"mix", RoleSetting, true},
		{"stack.arm", RoleSetting, true},
		{"no_such_field", "", false},
		{"link.no_such_field", "", false},
		{"plt_ms.x", "", false},
	} {
		t.Run(tt.path, func(t *testing.T) {
			got, ok := FieldRole(tt.path)
			if got != tt.want || ok != tt.ok {
				t.Errorf("FieldRole(%q) = %q, %v; want %q, %v", tt.path, got, ok, tt.want, tt.ok)
			}
		})
	}
	if !IsSetting("browser") || IsSetting("plt_ms") || IsSetting("nope") {
		t.Error("IsSetting")
	}
	if i := slices.IndexFunc(Fields(), func(f Field) bool { return f.Path == "device.spec" }); i < 0 {
		t.Error("Fields lacks device.spec")
	}
}
