package shaping

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoProcessWideState checks (issue 10) that package shaping and its subpackages change no
// process-wide setting and read no environment variable: options are passed explicitly.
// Reading GOMAXPROCS (runtime.GOMAXPROCS(0), as rtwait does) changes nothing and is allowed.
// One file is exempt: emuchild_linux.go, the entry of the emulator process (Child, which only a
// program's main or TestMain calls, and runEmuChild, which owns the process it runs in: it reads
// the environment pltlab started it with and sets that process's GOMAXPROCS). A link opened in
// a program still reads no environment and changes nothing of its process.
func TestNoProcessWideState(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	more, _ := filepath.Glob("*/*.go")
	deeper, _ := filepath.Glob("*/*/*.go")
	for _, f := range append(append(files, more...), deeper...) {
		if strings.HasSuffix(f, "_test.go") || f == "emuchild_linux.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			line := strings.ReplaceAll(line, "runtime.GOMAXPROCS(0)", "")
			for _, bad := range []string{"runtime.GOMAXPROCS(", "os.Setenv(", "os.Getenv(", "os.LookupEnv("} {
				if strings.Contains(line, bad) {
					t.Errorf("%s:%d calls %s", f, i+1, bad)
				}
			}
		}
	}
}

// TestEmuImportsNothingOfOurs checks that the emulator core depends on the standard library only.
func TestEmuImportsNothingOfOurs(t *testing.T) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob("emu/*.go")
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			if p := strings.Trim(imp.Path.Value, `"`); strings.Contains(p, ".") {
				t.Errorf("%s imports %s: shaping/emu must import the standard library only", f, p)
			}
		}
	}
}
