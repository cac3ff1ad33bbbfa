package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pltlab/pltlab/result"
)

func TestReadMatrix(t *testing.T) {
	in := `
name: grid
pages: [carlucci2015, 10x30KB]
links: [carlucci2015, "rate=10mbit,rtt=100ms"]
protocols: [h2, h3]
modes: [cold, warm]
runs: 20
warmup: 1
timeout: 30s
seed: 9
tcp_cc: reno
tls: "1.2"
`
	c, err := ReadMatrix(strings.NewReader(in), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "grid" || len(c.Pages) != 2 || c.Links[1] != "rate=10mbit,rtt=100ms" || c.Runs != 20 ||
		c.Warmup != 1 || c.Timeout != 30*time.Second || c.Seed != 9 || c.TCPCC != "reno" || c.TLS != "1.2" {
		t.Fatalf("config = %+v", c)
	}
	want := []Arm{{"h2", result.Cold}, {"h3", result.Cold}, {"h2", result.Warm}, {"h3", result.Warm}}
	if len(c.Arms) != len(want) {
		t.Fatalf("arms = %v", c.Arms)
	}
	for i := range want {
		if c.Arms[i] != want[i] {
			t.Fatalf("arms = %v, want %v", c.Arms, want)
		}
	}
}

func TestReadMatrixDefaults(t *testing.T) {
	c, err := ReadMatrix(strings.NewReader("pages: [p]\nlinks: [l]\n"), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Arms) != 3 || c.Arms[0] != (Arm{"h1", result.Cold}) {
		t.Fatalf("arms = %v", c.Arms)
	}
	if c.Warmup != DefaultWarmup {
		t.Errorf("warmup %d, want the flag's default %d", c.Warmup, DefaultWarmup)
	}
}

func TestReadMatrixErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "matrix m.yaml is empty: it needs at least pages and links"},
		{"unknown key", "pages: [p]\nlinks: [l]\nrepeats: 3\n", `line 3: unknown key "repeats": accepted name, pages, links`},
		{"bad mode", "pages: [p]\nlinks: [l]\nmodes: [hot]\n", `bad mode "hot": accepted cold, warm`},
		{"bad timeout", "pages: [p]\nlinks: [l]\ntimeout: soon\n", `bad timeout "soon"`},
		{"no links", "pages: [p]\n", "no link"},
		{"bad protocol", "pages: [p]\nlinks: [l]\nprotocols: [quic]\n", `bad protocol "quic"`},
		{"not yaml", "pages: [p\n", "matrix m.yaml: line 1: did not find expected"},
		{"zero runs", "pages: [p]\nlinks: [l]\nruns: 0\n", "bad runs 0"},
		{"zero timeout", "pages: [p]\nlinks: [l]\ntimeout: 0s\n", `bad timeout "0s"`},
		{"page twice", "pages: [p, p]\nlinks: [l]\n", `page "p" given twice`},
		{"runs not a number", "pages: [p]\nlinks: [l]\nruns: abc\n", "line 3: abc is not a whole number: accepted a count such as 20"},
		{"pages not a list", "pages: p\nlinks: [l]\n", "where a list such as [a, b] is accepted"},
		{"not a mapping", "[a, b]\n", "where a matrix of key: value lines is accepted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadMatrix(strings.NewReader(tt.in), "m.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "experiment.") || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %q shows Go internals or spans lines", err)
			}
		})
	}
}

// TestMatrixRefusals: a matrix that is not a regular file (/dev/zero read forever on 8436f4a),
// one over MaxMatrixBytes, runs of 2.5 (truncated to 2 on 8436f4a) or "2", and a second YAML
// document (ignored on 8436f4a) are refused, each in one line naming it.
func TestMatrixRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := "pages: [2x10KB]\nlinks: [none]\n"
	for _, tc := range []struct {
		name, path, want string
	}{
		{"a device", "/dev/zero", "is not a regular file"},
		{"too large", write("big.yaml", base+"# "+strings.Repeat("x", MaxMatrixBytes)+"\n"), "is larger than"},
		{"fractional runs", write("frac.yaml", base+"runs: 2.5\n"), "2.5 is not a whole number"},
		{"quoted runs", write("str.yaml", base+"runs: \"2\"\n"), "2 is not a whole number"},
		{"fractional warmup", write("warm.yaml", base+"warmup: 0.5\n"), "0.5 is not a whole number"},
		{"two documents", write("two.yaml", base+"---\n"+base), "more than one YAML document"},
	} {
		if _, err := OpenMatrix(tc.path, nil); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", tc.name, err, tc.want)
		}
	}
	c, err := OpenMatrix(write("ok.yaml", base+"runs: 3\nwarmup: 0\n"), nil)
	if err != nil || c.Runs != 3 || c.Warmup != 0 {
		t.Errorf("a good matrix: %+v, %v", c, err)
	}
}
