package main

import (
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/internal/cpushield"
	"github.com/pltlab/pltlab/internal/idlepoll"
)

// version is set at build time with -ldflags "-X main.version=..." (make setup does it).
var version = ""

// pltlabVersion returns the build's version: the -ldflags value, else the module version.
func pltlabVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// newRootCmd builds the pltlab command tree. Each subcommand lives in its own file.
func newRootCmd() *cobra.Command { return newRootCmdWith(*newMeasureSetup()) }

// newRootCmdWith builds the pltlab command tree whose measuring commands make setup once their
// input is validated: they start the idle-poll spinners with setup.start (startIdlePoll; tests
// give one that records the call) and ask setup.probe whether a link's shaper can open here
// (shaping.Available; tests give a kernel with or without sch_netem).
func newRootCmdWith(s measureSetup) *cobra.Command {
	var verbose bool
	var idleMode, shieldCPU string
	setup := &s
	root := &cobra.Command{
		Use:   "pltlab",
		Short: "Measure browser page-load time (PLT) per HTTP protocol over an emulated link",
		Long: `pltlab measures browser page-load time (PLT) per HTTP protocol (HTTP/1.1, HTTP/2,
HTTP/3) with real headless Chromium behind an emulated bottleneck link, verifies every
load (protocol used, bytes received) and compares the protocols with honest statistics.`,
		Example: `  sudo ./bin/pltlab reproduce carlucci2015
  ./bin/pltlab pages --spec 10x30KB,1x1MB --out /tmp/page
  ./bin/pltlab report results.jsonl`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown command %q for pltlab; accepted: %s (see 'pltlab --help')", args[0], subcommandNames(cmd))
			}
			return nil
		},
		RunE:          func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		Version:       pltlabVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if submitsJobs(cmd) {
				setup.shieldNodes = shieldCPU // a CPU of each shard's node (sweepFlags.sweep)
				shieldCPU = "off"
			}
			cpu, on, err := cpushield.ParseFlag(shieldCPU, cpushield.Allowed())
			if err != nil {
				return usagef("%v", err)
			}
			if on && os.Geteuid() != 0 {
				return usagef("--shield-cpu %d: needs root (it moves every task of the machine off CPU %d)", cpu, cpu)
			}
			setup.shield = cpu
			if needsRootless(cmd) {
				return errRootless // main runs the command again inside user namespaces
			}
			mode, err := idlepoll.ParseMode(idleMode)
			if err != nil {
				return usagef("%v", err)
			}
			setup.mode = mode // started by the command, once its input is validated
			level := slog.LevelInfo
			if verbose {
				level = slog.LevelDebug
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level})))
			return nil
		},
	}
	root.SetVersionTemplate("pltlab {{.Version}}\n")
	root.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "log debug messages to stderr")
	root.PersistentFlags().StringVar(&idleMode, "idle-poll", string(idlepoll.Auto), idlePollFlag)
	root.PersistentFlags().StringVar(&shieldCPU, "shield-cpu", "off", shieldFlag)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usagef("%v (see '%s --help')", err, c.CommandPath())
	})
	root.AddCommand(
		newVersionCmd(),
		newPagesCmd(),
		newServeCmd(),
		newLoadCmd(),
		newShellCmd(setup),
		newLinkCmd(setup),
		newRunCmd(setup),
		newReportCmd(),
		newFlowsCmd(setup),
		newReproduceCmd(setup),
		newMergeCmd(),
		newSlurmCmd(setup),
		newK8sCmd(setup),
		newViewCmd(),
		newInteropCmd(),
	)
	for _, c := range root.Commands() {
		wrapArgs(c)
	}
	return root
}

// subcommandNames lists the visible subcommands of c, comma-separated.
func subcommandNames(c *cobra.Command) string {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
		}
	}
	return strings.Join(names, ", ")
}

// wrapArgs makes cobra's positional-argument errors usage errors (exit code 2), recursively.
func wrapArgs(c *cobra.Command) {
	if c.Args != nil {
		orig := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error { return asUsage(orig(cmd, args)) }
	}
	for _, sub := range c.Commands() {
		wrapArgs(sub)
	}
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print the pltlab version",
		Example: `  ./bin/pltlab version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := cmd.OutOrStdout().Write([]byte("pltlab " + pltlabVersion() + "\n"))
			return err
		},
	}
}

// submitsJobs reports whether cmd writes cluster jobs (slurm, k8s) rather than measuring here:
// their --shield-cpu is for the shards' nodes.
func submitsJobs(cmd *cobra.Command) bool { return cmd.Name() == "slurm" || cmd.Name() == "k8s" }
