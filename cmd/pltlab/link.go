package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/pltlab/pltlab/result"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
	"github.com/pltlab/pltlab/shaping/selfcheck"
	"github.com/spf13/cobra"
)

// newLinkCmd builds 'pltlab link' with its subcommands 'check' and 'presets'.
func newLinkCmd(setup *measureSetup) *cobra.Command {
	c := &cobra.Command{
		Use:   "link",
		Short: "Check emulated links and list link presets",
		Example: `  sudo ./bin/pltlab link check --link carlucci2015
  ./bin/pltlab link presets`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	c.AddCommand(newLinkCheckCmd(setup), newLinkPresetsCmd(), newLinkTraceCmd())
	return c
}

// parseLink parses a --link value as a usage error on failure, and refuses a link this machine
// cannot open (setup.available: shaper=netem without sch_netem) the same way.
func parseLink(setup *measureSetup, s string) (linkspec.Spec, error) {
	if s == "" {
		return linkspec.Spec{}, usagef("--link is required: accepted a preset (see 'pltlab link presets') or key=value items such as rate=3mbit,rtt=50ms")
	}
	spec, err := linkspec.Parse(s)
	if err != nil {
		return spec, usagef("bad --link: %v", err)
	}
	if err := setup.available(spec); err != nil {
		return spec, usagef("bad --link: %v", err) // refused before anything is set up
	}
	return spec, nil
}

// openLink parses spec (a usage error before anything is set up), begins the measuring set-up
// (setup.begin) and brings the link up.
func openLink(cmd *cobra.Command, setup *measureSetup, spec string) (shaping.Link, error) {
	sp, err := parseLink(setup, spec)
	if err != nil {
		return nil, err
	}
	if err := setup.begin(cmd); err != nil {
		return nil, err
	}
	// PLTLAB_EMU_OFFLOAD=off selects the emulator's plain TUN path (side-by-side benchmarks).
	return shaping.Open(cmd.Context(), sp, shaping.WithOffload(os.Getenv(shaping.EnvOffload) != "off"))
}

func newLinkCheckCmd(setup *measureSetup) *cobra.Command {
	var linkSpec string
	var asJSON, quick bool
	c := &cobra.Command{
		Use:   "check --link LINK [--json] [--quick]",
		Short: "Measure an emulated link: idle RTT, TCP goodput per direction, RTT under load, loss",
		Long: `check opens the link, measures it with in-process probes (server side on the host
address, client side inside the link's namespace) and prints configured vs measured values with
PASS/FAIL per line and the tolerance used. Exit status 1 when any line fails.`,
		Example: `  sudo ./bin/pltlab link check --link carlucci2015
  sudo ./bin/pltlab link check --link rate=10mbit,rtt=20ms,loss=1% --quick --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := openLink(cmd, setup, linkSpec)
			if err != nil {
				return err
			}
			res, err := selfcheck.Run(cmd.Context(), l, selfcheck.Options{Quick: quick})
			err = errors.Join(err, l.Close())
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetEscapeHTML(false)
				err = enc.Encode(res)
			} else {
				err = printCheck(cmd.OutOrStdout(), l, res)
			}
			if err == nil && !res.Pass {
				return &exitError{code: 1, err: fmt.Errorf("link check failed: %d of %d lines FAIL", failed(res), len(res.Lines))}
			}
			return err
		},
	}
	c.Flags().StringVar(&linkSpec, "link", "", "LINK spec: a preset or key=value items (required)")
	c.Flags().BoolVar(&asJSON, "json", false, "print one JSON object instead of the table")
	c.Flags().BoolVar(&quick, "quick", false, "short probes (~3 s), as run before experiments")
	return c
}

func failed(res result.LinkCheck) int {
	n := 0
	for _, l := range res.Lines {
		if !l.Pass {
			n++
		}
	}
	return n
}

// printCheck writes the configured-vs-measured table.
func printCheck(w io.Writer, l shaping.Link, res result.LinkCheck) error {
	fmt.Fprintf(w, "link %s (%s), namespace %s, host %s, client %s\n", l.Spec().Input, l.Spec(), l.Namespace(), l.HostAddr(), l.ClientAddr())
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tCONFIGURED\tMEASURED\tTOLERANCE\tRESULT")
	for _, line := range res.Lines {
		verdict := "PASS"
		if !line.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", line.Name, line.Configured, line.Measured, line.Tolerance, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if res.HostBusyPct > 0 || res.HostStealPct > 0 {
		fmt.Fprintf(w, "machine during the check: CPU %.0f %% busy (all CPUs, this check's own work included), %.1f %% stolen by the hypervisor\n", res.HostBusyPct, res.HostStealPct)
	}
	if res.Pass {
		_, err := fmt.Fprintln(w, "all PASS")
		return err
	}
	_, err := fmt.Fprintf(w, "%d FAIL\n", failed(res))
	return err
}

func newLinkPresetsCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "presets",
		Short:   "List the LINK presets with their numbers and sources",
		Example: `  ./bin/pltlab link presets`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSPEC\tSOURCE")
			for _, p := range linkspec.Presets() {
				spec := p.Spec
				spec = cmp.Or(spec, "(no shaping)")
				fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, spec, p.Doc)
			}
			return tw.Flush()
		},
	}
}
