package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReproduceList(t *testing.T) {
	code, out, errOut := runCLI(t, "reproduce", "--list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"carlucci2015", "kakhki2017", "muthuraj2024", "carlucci2015 --calibrate", "smoke", "quick (default)", "full", "ESTIMATED TIME", " min"} {
		if !strings.Contains(out, want) {
			t.Errorf("--list lacks %q:\n%s", want, out)
		}
	}
}

func TestRunAndReproduceUsageErrors(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "exists.jsonl")
	if err := os.WriteFile(existing, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notEmpty := filepath.Join(dir, "full")
	if err := os.MkdirAll(notEmpty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notEmpty, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	matrix := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(matrix, []byte("pages: [10x30KB]\nlinks: [none]\nmodes: [lukewarm]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no page", []string{"run", "--link", "none"}, "missing --page"},
		{"no link", []string{"run", "--page", "10x30KB"}, "missing --link"},
		{"bad page", []string{"run", "--page", "0x10KB", "--link", "none"}, `bad page "0x10KB"`},
		{"bad link", []string{"run", "--page", "10x30KB", "--link", "rate=-3mbit"}, `bad link "rate=-3mbit"`},
		{"bad protocol", []string{"run", "--page", "1x1KB", "--link", "none", "--protocols", "h2,quic"}, `bad protocol "quic"`},
		{"bad mode", []string{"run", "--page", "1x1KB", "--link", "none", "--mode", "hot"}, `bad mode "hot"`},
		{"bad runs", []string{"run", "--page", "1x1KB", "--link", "none", "--runs", "0"}, "bad --runs 0"},
		{"bad tcp-cc", []string{"run", "--page", "1x1KB", "--link", "none", "--tcp-cc", "vegas"}, `bad tcp-cc "vegas"`},
		{"bad tls", []string{"run", "--page", "1x1KB", "--link", "none", "--tls", "1.1"}, `bad tls "1.1"`},
		{"bad timeout", []string{"run", "--page", "1x1KB", "--link", "none", "--timeout", "10ms"}, "bad --timeout 10ms"},
		{"bad device", []string{"run", "--page", "1x1KB", "--link", "none", "--device", "iphone"}, `bad device "iphone": accepted desktop, motog2013, motog4, nexus6, or cpu=X`},
		{"quic-go has one controller", []string{"run", "--page", "1x1KB", "--link", "none", "--quic-cc", "bbr"}, `QUIC congestion control "bbr": quic-go runs newreno only`},
		{"bad h3 stack", []string{"run", "--page", "1x1KB", "--link", "none", "--h3-stack", "lsquic"}, `HTTP/3 stack "lsquic": accepted: quic-go, ngtcp2`},
		{"bad ngtcp2 controller", []string{"run", "--page", "1x1KB", "--link", "none", "--h3-stack", "ngtcp2", "--quic-cc", "vegas"}, `QUIC congestion control "vegas" for ngtcp2: accepted: cubic, reno, bbr, bbr2`},
		{"ngtcp2 keeps no qlog", []string{"run", "--page", "1x1KB", "--link", "none", "--h3-stack", "ngtcp2", "--artifacts", filepath.Join(dir, "a"), "--artifacts-kinds", "qlog"}, `qlog artifacts are kept for quic-go only`},
		{"bad device slowdown", []string{"run", "--page", "1x1KB", "--link", "none", "--device", "cpu=0.5"}, `bad device "cpu=0.5": cpu=X needs a slowdown X above 1`},
		{"zero timeout", []string{"run", "--page", "1x1KB", "--link", "none", "--timeout", "0"}, "bad --timeout 0s"},
		{"out in missing dir", []string{"run", "--page", "1x1KB", "--link", "none", "--out", filepath.Join(dir, "no", "x.jsonl")}, "does not exist"},
		{"out is a dir", []string{"run", "--page", "1x1KB", "--link", "none", "--out", dir, "--force"}, "a directory"},
		{"page twice", []string{"run", "--page", "1x1KB", "--page", "1x1KB", "--link", "none"}, `page "1x1KB" given twice`},
		{"mode twice", []string{"run", "--page", "1x1KB", "--link", "none", "--mode", "cold,cold"}, "given twice"},
		{"none with rate", []string{"run", "--page", "1x1KB", "--link", "none,rate=1mbit"}, "shapes nothing"},
		{"no chromium", []string{"run", "--page", "1x1KB", "--link", "none", "--chrome", filepath.Join(dir, "no-chrome")}, "no-chrome"},
		{"out exists", []string{"run", "--page", "1x1KB", "--link", "none", "--out", existing}, "exists: remove it or add --force"},
		{"matrix and page", []string{"run", "--matrix", matrix, "--page", "1x1KB"}, "replaces --page and --link"},
		{"bad matrix", []string{"run", "--matrix", matrix}, `bad mode "lukewarm"`},
		{"missing matrix", []string{"run", "--matrix", filepath.Join(dir, "nope.yaml")}, "bad --matrix"},
		{"stray arg", []string{"run", "extra"}, "unknown command"},
		{"unknown flag", []string{"run", "--pages", "x"}, "unknown flag: --pages"},
		{"reproduce nothing", []string{"reproduce"}, "accepted carlucci2015, kakhki2017, muthuraj2024"},
		{"reproduce other", []string{"reproduce", "smith1999"}, `unknown study "smith1999": accepted carlucci2015, kakhki2017, muthuraj2024`},
		{"reproduce runs", []string{"reproduce", "carlucci2015", "--runs", "-1"}, "bad --runs -1"},
		{"reproduce scale", []string{"reproduce", "kakhki2017", "--scale", "huge"}, `bad scale "huge": accepted smoke, quick, full`},
		{"reproduce calibrate other", []string{"reproduce", "kakhki2017", "--calibrate"}, "--calibrate is for carlucci2015 only"},
		{"reproduce list with study", []string{"reproduce", "--list", "kakhki2017"}, "--list takes no study"},
		{"reproduce resume and force", []string{"reproduce", "carlucci2015", "--resume", "--force", "--out", notEmpty}, "give one"},
		{"reproduce out not empty", []string{"reproduce", "carlucci2015", "--out", notEmpty}, "is not empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, tt.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2 (stderr %q)", code, errOut)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q does not contain %q", errOut, tt.want)
			}
			if n := strings.Count(strings.TrimSpace(errOut), "\n"); n != 0 {
				t.Errorf("error is %d lines, want one: %q", n+1, errOut)
			}
		})
	}
}
