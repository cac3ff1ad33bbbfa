package result

import (
	"reflect"
	"strings"
)

// Role says what a record field is to a reader that compares loads: part of the identity of
// what was measured, a measurement, or bookkeeping of the line. Every field of Record states
// its role in a `role` struct tag next to its `json` tag; a field whose type mixes roles says
// RoleMixed and its type's fields state theirs. Readers ask FieldRole or Fields, never keep a
// list of their own, so that a field added to the record is classified where it is declared.
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
func FieldRole(path string) (role Role, ok bool) {
	t := reflect.TypeFor[Record]()
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

// IsSetting reports whether the field at the dotted JSON path is a setting (FieldRole); a path
// Record does not have is not one.
func IsSetting(path string) bool {
	r, ok := FieldRole(path)
	return ok && r == RoleSetting
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
