package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/spf13/cobra"
)

// newLinkTraceCmd builds 'pltlab link trace': write a Mahimahi trace for down=trace:FILE.
func newLinkTraceCmd() *cobra.Command {
	var out string
	var force bool
	c := &cobra.Command{
		Use:   "trace SHAPE [--out FILE] [--force]",
		Short: "Write a Mahimahi-format trace (constant rate, steps, on/off) for down=trace:FILE",
		Long: `trace writes a trace of delivery opportunities, one time stamp in ms per line, each line
letting the link send 1504 bytes (Mahimahi's format; the trace repeats after its last time stamp).
SHAPE is RATE (constant over 1 s), steps:RATE/DUR,RATE/DUR,... or onoff:RATE/ON/OFF.
A rate's resolution is one 1504-byte opportunity per period: 3mbit gives 2.996 Mbit/s.`,
		Example: `  ./bin/pltlab link trace 12mbit --out /tmp/12mbit.trace
  ./bin/pltlab link trace steps:10mbit/5s,2mbit/5s --out /tmp/steps.trace
  ./bin/pltlab link trace onoff:10mbit/1s/500ms --out /tmp/onoff.trace --force
  sudo ./bin/pltlab link check --link down=trace:/tmp/steps.trace,up=trace:/tmp/12mbit.trace,rtt=40ms,aqm=codel`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ms, err := linkspec.GenerateTrace(args[0])
			if err != nil {
				return usagef("%v", err)
			}
			var b bytes.Buffer
			if err := linkspec.WriteTrace(&b, ms); err != nil {
				return err
			}
			if out == "" || out == "-" {
				_, err = cmd.OutOrStdout().Write(b.Bytes())
				return err
			}
			if _, err := os.Stat(out); err == nil && !force {
				return usagef("--out %s exists: accepted a new file, or --force to replace it", out)
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("trace output: %w", err)
			}
			return os.WriteFile(out, b.Bytes(), 0o644)
		},
	}
	c.Flags().StringVar(&out, "out", "-", "output file ('-' = stdout)")
	c.Flags().BoolVar(&force, "force", false, "replace an existing --out file")
	return c
}
