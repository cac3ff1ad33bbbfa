package result

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
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
	if i := slices.IndexFunc(Fields(), func(f Field) bool { return f.Path == "device.spec" }); i < 0 {
		t.Error("Fields lacks device.spec")
	}
}

// TestSettingDiffsFollowTheRecord: every field of the record is a setting that differs
// (SettingDiffs) exactly when its role tag says it is a setting, so a field added to the
// record needs no change in any reader.
func TestSettingDiffsFollowTheRecord(t *testing.T) {
	for _, f := range Fields() {
		var a, b Record
		setLeaf(reflect.ValueOf(&a).Elem(), strings.Split(f.Path, "."), false)
		setLeaf(reflect.ValueOf(&b).Elem(), strings.Split(f.Path, "."), true)
		d := SettingDiffs(&a, &b)
		shown := len(d) > 0 && !slices.ContainsFunc(d, func(x Diff) bool { return !strings.HasPrefix(x.Path, f.Path) })
		if want := f.Role == RoleSetting; shown != want || (!want && len(d) != 0) {
			t.Errorf("field %s (role %s) changed: settings that differ %v", f.Path, f.Role, d)
		}
	}
	if d := SettingDiffs((*Settings)(nil), &Settings{H3Stack: "ngtcp2", Overrides: []string{"runs=3"}}); !reflect.DeepEqual(d, []Diff{{"h3_stack", "-", `"ngtcp2"`}}) {
		t.Errorf("SettingDiffs(nil, Settings) = %v; want h3_stack only", d)
	}
	if v := SettingValues(nil); len(v) != 0 {
		t.Errorf("SettingValues(nil) = %v", v)
	}
}

// setLeaf sets the field of the struct value v at the JSON path names to a value that is not
// zero (only allocating the pointers and embedded structs on its way unless set).
func setLeaf(v reflect.Value, names []string, set bool) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	if len(names) == 0 && !set {
		return
	}
	if len(names) == 0 {
		switch v.Interface().(type) {
		case time.Time:
			v.Set(reflect.ValueOf(time.Unix(7, 0)))
			return
		case json.RawMessage:
			v.SetBytes([]byte(`{"changed":7}`))
			return
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString("changed")
		case reflect.Int, reflect.Int64, reflect.Int32:
			v.SetInt(7)
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			v.SetUint(7)
		case reflect.Float64, reflect.Float32:
			v.SetFloat(7)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Slice:
			e := reflect.New(v.Type().Elem()).Elem()
			setLeaf(e, nil, true)
			v.Set(reflect.Append(v, e))
		case reflect.Struct:
			i := slices.IndexFunc(slices.Collect(v.Type().Fields()), reflect.StructField.IsExported)
			setLeaf(v, []string{jsonName(v.Type().Field(i))}, true)
		case reflect.Map:
			v.Set(reflect.MakeMap(v.Type()))
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			setLeaf(k, nil, true)
			setLeaf(e, nil, true)
			v.SetMapIndex(k, e)
		}
		return
	}
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if !f.IsExported() {
			continue
		}
		if n := jsonName(f); n == names[0] {
			setLeaf(v.Field(i), names[1:], set)
			return
		} else if n == "" && f.Anonymous {
			if _, ok := fieldByJSON(structType(f.Type), names[0]); ok {
				setLeaf(v.Field(i), names, set)
				return
			}
		}
	}
	panic("no field " + names[0] + " in " + v.Type().String())
}
