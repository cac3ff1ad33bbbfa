package result

import (
	"cmp"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// Role says what a record field is to a reader that compares loads: part of the identity of
// what was measured, a measurement, or bookkeeping of the line. Every field of Record states
// its role in a `role` struct tag next to its `json` tag; a field whose type mixes roles says
// RoleMixed and its type's fields state theirs. Readers ask SettingDiffs, SettingValues or
// FieldRole, never keep a list of their own, so that a field added to the record (or to any
// kind of line so tagged) is classified where it is declared.
type Role string

const (
	// RoleSetting marks a setting the load was made with, or a fact of the setup it ran on,
	// that can change what it measures (page, link, protocol, mode, browser, TCP congestion
	// control, device, pltlab version, ...): loads that differ in one are loads of different
	// conditions. Every field analysis groups loads by (analysis.Key) is a setting; not every
	// setting splits a group (the host's name does not, for one).
	RoleSetting Role = "setting"
	// RoleMeasure marks what was measured or observed during the load (times, validity, the
	// protocol seen, the emulator's counters, CPU, host load, attempts, connections per
	// origin, what a replayed archive answered): it differs between any two loads.
	RoleMeasure Role = "measure"
	// RoleLine marks bookkeeping of the line itself (schema version, kind, experiment name,
	// run index, start time, shard, plan and merge lines, evidence file paths, the seed of the
	// order): neither a setting nor a measurement.
	RoleLine Role = "line"
	// RoleMixed marks a struct-valued field whose own fields state their roles.
	RoleMixed Role = "mixed"
)

// Field is one leaf of the record's classification: its JSON path and its role.
type Field struct {
	// Path is the field's JSON name, dotted below a mixed field ("device.spec", "replay.hits");
	// the fields of the inlined Flow sit at the top level, as in the JSON.
	Path string
	// Role is the field's role, never RoleMixed.
	Role Role
}

// Fields lists every field of Record with its role, in declaration order, mixed fields
// replaced by their own fields. A field without a role tag is listed with Role "" (a test of
// package result refuses it).
func Fields() []Field {
	var out []Field
	walkRoles(reflect.TypeFor[Record](), "", func(path string, role Role) { out = append(out, Field{path, role}) })
	return out
}

// FieldRole returns the role of the record field at the dotted JSON path ("plt_ms",
// "link.rtt_ms", "replay.hits"): the role of the path's first ancestor that is not RoleMixed,
// so that every path below a setting (link.down.loss) is a setting; RoleMixed for a mixed field
// itself. ok is false when Record has no such field.
func FieldRole(path string) (role Role, ok bool) { return roleAt(reflect.TypeFor[Record](), path) }

// roleAt is FieldRole of a field of the struct type t (pointers and slices taken off).
func roleAt(t reflect.Type, path string) (role Role, ok bool) {
	t = structType(t)
	for name := range strings.SplitSeq(path, ".") {
		if t.Kind() != reflect.Struct {
			return "", false
		}
		f, found := fieldByJSON(t, name)
		if !found {
			return "", false
		}
		if role == "" || role == RoleMixed {
			role = Role(f.Tag.Get("role"))
		}
		t = structType(f.Type)
	}
	return role, true
}

// Diff is one setting whose values differ between two lines.
type Diff struct {
	// Path is the setting's dotted JSON path ("link.rtt_ms", "settings.h3_stack").
	Path string
	// A and B are its JSON values in the two lines ("50", `"ngtcp2"`), "-" where a line
	// lacks it.
	A, B string
}

// SettingDiffs lists, by path, the settings whose values differ between a and b: the one
// definition of what makes two measurements comparable, which view's compare and resume read
// (and report's groups follow, SettingValues). a and b are values of one struct type (a
// Record, a Settings, a pointer to one, or a kind that embeds them); its fields' role tags
// say what a setting is, so a field added to a kind is compared where it is declared.
func SettingDiffs(a, b any) []Diff {
	va, vb := SettingValues(a), SettingValues(b)
	keys := slices.Concat(slices.Collect(maps.Keys(va)), slices.Collect(maps.Keys(vb)))
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var out []Diff
	for _, k := range keys {
		if va[k] != vb[k] {
			out = append(out, Diff{k, cmp.Or(va[k], "-"), cmp.Or(vb[k], "-")})
		}
	}
	return out
}

// SettingValues returns the settings of v (see SettingDiffs) as they are encoded: each leaf of
// v's JSON object whose role is RoleSetting, by dotted path, with its JSON value. Measurements
// and the line's bookkeeping are left out; a name v's type lacks is kept, shown rather than
// hidden. A nil pointer has none.
func SettingValues(v any) map[string]string {
	out := map[string]string{}
	t := reflect.TypeOf(v)
	if t == nil {
		return out
	}
	raw, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		if role, ok := roleAt(t, path); ok && role != RoleSetting && role != RoleMixed {
			return
		}
		if obj, ok := v.(map[string]any); ok {
			for k, x := range obj {
				walk(path+"."+k, x)
			}
			return
		}
		b, _ := json.Marshal(v)
		out[path] = string(b)
	}
	for k, x := range m {
		walk(k, x)
	}
	return out
}

// walkRoles calls fn with the path and role of every leaf field of the struct type t.
func walkRoles(t reflect.Type, prefix string, fn func(string, Role)) {
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		name := jsonName(f)
		role := Role(f.Tag.Get("role"))
		switch {
		case name == "-":
		case f.Anonymous && name == "":
			walkRoles(structType(f.Type), prefix, fn) // inlined in the JSON
		case role == RoleMixed:
			walkRoles(structType(f.Type), prefix+name+".", fn)
		default:
			fn(prefix+name, role)
		}
	}
}

// fieldByJSON finds the field of struct type t whose JSON name is name, looking into inlined
// embedded structs as encoding/json does.
func fieldByJSON(t reflect.Type, name string) (reflect.StructField, bool) {
	for f := range t.Fields() {
		if !f.IsExported() {
			continue
		}
		n := jsonName(f)
		if f.Anonymous && n == "" {
			if g, ok := fieldByJSON(structType(f.Type), name); ok {
				return g, true
			}
			continue
		}
		if n == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// jsonName is f's name in the JSON: its json tag's name, else the Go name ("" for an embedded
// struct without a tag, whose fields are inlined).
func jsonName(f reflect.StructField) string {
	n, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if n != "" {
		return n
	}
	if f.Anonymous {
		return ""
	}
	return f.Name
}

// structType is t with pointers and slices taken off.
func structType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	return t
}
