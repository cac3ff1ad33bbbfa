package artifacts

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseKinds(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Kind
		ok   bool
	}{
		{"har", []Kind{HAR}, true},
		{"pcap, har,pcap", []Kind{Pcap, HAR}, true},
		{"all", All, true},
		{"har,tcpdump", nil, false},
		{"", nil, false},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseKinds(c.in)
			if (err == nil) != c.ok || !reflect.DeepEqual(got, c.want) {
				t.Errorf("ParseKinds(%q) = %v, %v; want %v (ok %v)", c.in, got, err, c.want, c.ok)
			}
		})
	}
}

func TestParseFilter(t *testing.T) {
	for _, s := range []string{"all", "invalid", "slowest"} {
		if f, err := ParseFilter(s); err != nil || string(f) != s {
			t.Errorf("ParseFilter(%q) = %q, %v", s, f, err)
		}
	}
	if _, err := ParseFilter("fastest"); err == nil {
		t.Error("ParseFilter(fastest) accepted")
	}
}

func TestKeeper(t *testing.T) {
	type load struct {
		cell  string
		valid bool
		plt   float64
	}
	loads := []load{{"a", true, 100}, {"a", true, 90}, {"b", true, 50}, {"a", false, 10}, {"a", true, 120}, {"a", true, 110}}
	for _, c := range []struct {
		filter Filter
		want   []bool
	}{
		{KeepAll, []bool{true, true, true, true, true, true}},
		{"", []bool{true, true, true, true, true, true}},
		{KeepInvalid, []bool{false, false, false, true, false, false}},
		{KeepSlowest, []bool{true, false, true, true, true, false}},
	} {
		t.Run(string(c.filter), func(t *testing.T) {
			k := NewKeeper(c.filter)
			for i, l := range loads {
				if got := k.Keep(l.cell, l.valid, l.plt); got != c.want[i] {
					t.Errorf("load %d %+v: keep %v, want %v", i, l, got, c.want[i])
				}
			}
		})
	}
}

func TestDirsAndList(t *testing.T) {
	root := t.TempDir()
	c := Config{Dir: root, Kinds: []Kind{HAR}}
	if !c.Enabled() || !c.Has(HAR) || c.Has(Pcap) || (Config{Kinds: All}).Enabled() {
		t.Error("Enabled/Has")
	}
	d := c.LoadDir("run 1/x", 7)
	if want := filepath.Join(root, "run_1_x", "run-0007"); d != want {
		t.Errorf("LoadDir = %s, want %s", d, want)
	}
	if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"load.har", "sub/q.sqlog"} {
		if err := os.WriteFile(filepath.Join(d, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.List(d)
	want := []string{"run_1_x/run-0007/load.har", "run_1_x/run-0007/sub/q.sqlog"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("List = %v, %v; want %v", got, err, want)
	}
	if got := c.Rel(filepath.Join(root, "missing")); len(got) != 0 {
		t.Errorf("Rel of a missing file = %v", got)
	}
	if got, err := c.List(filepath.Join(root, "none")); err != nil || len(got) != 0 {
		t.Errorf("List of a missing folder = %v, %v", got, err)
	}
}
