// Command gensynth writes a seeded synthetic result file, for trying `pltlab report` and the
// plots without a browser: go run ./analysis/internal/synth/gensynth [-grid] -out FILE.jsonl
// (-out - writes to stdout).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/pltlab/pltlab/analysis/internal/synth"
	"github.com/pltlab/pltlab/result"
)

func main() {
	out := flag.String("out", "-", "the .jsonl file to write (- = stdout)")
	grid := flag.Bool("grid", false, "write the rates x RTTs grid matrix instead of the default one")
	flag.Parse()
	if err := write(*out, *grid); err != nil {
		fmt.Fprintln(os.Stderr, "gensynth:", err)
		os.Exit(1)
	}
}

// write writes synth.Default() (or synth.Grid()) records to name.
func write(name string, grid bool) error {
	o := synth.Default()
	if grid {
		o = synth.Grid()
	}
	var w io.Writer = os.Stdout
	if name != "-" {
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	rw := result.NewWriter(w)
	for _, r := range synth.Records(o) {
		if err := rw.Write(r); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}
