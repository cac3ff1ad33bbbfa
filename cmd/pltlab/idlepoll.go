package main

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/spf13/cobra"

	"github.com/pltlab/pltlab/experiment"
	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/linkspec"
)

// idleKeeper holds the spinners that keep the machine's CPUs awake while a command measures
// (startIdlePoll); nil when none run.
var (
	idleMu     sync.Mutex
	idleKeeper *idlepoll.Keeper
)

// startIdlePoll starts the spinners and watchers of package idlepoll for a command that measures (one that
// opens emulated links, unless it only lists or plans), as mode asks: auto starts them under a
// hypervisor, where an idle virtual CPU takes the hypervisor 1-8 ms to wake (docs/design.md,
// "The emulator's stalls"). A failure to start them is an error with --idle-poll on and a
// warning with auto (the records then say idle_poll_cpus 0). The process-wide setting is made
// here, once, and every record states it (env.idle_poll_cpus).
func startIdlePoll(cmd *cobra.Command, mode idlepoll.Mode) error {
	if !mode.Wanted() || onlyPlans(cmd) {
		return nil
	}
	k, err := idlepoll.Start()
	if err != nil {
		if mode == idlepoll.On {
			return err
		}
		slog.Warn("the machine's CPUs may halt while measuring (wake-ups then take the hypervisor's time)", "err", err)
		return nil
	}
	idleMu.Lock()
	idleKeeper = k
	idleMu.Unlock()
	slog.Debug("idle poll", "cpus", k.CPUs)
	return nil
}

// stopIdlePoll ends the spinners startIdlePoll started (quick: it runs as a forced-exit hook too).
func stopIdlePoll() {
	idleMu.Lock()
	defer idleMu.Unlock()
	idleKeeper.Stop()
	idleKeeper = nil
}

// measureSetup is the process-wide set-up of a command that measures over emulated links: Ps
// of their own for the links' forwarders (raiseProcsForLink) and the idle-poll spinners and
// watchers. A command calls begin once its input is validated and before it sets anything
// up, so that bad input is refused with nothing started.
type measureSetup struct {
	mode idlepoll.Mode // --idle-poll, set by the root command
	// shield is the CPU --shield-cpu keeps for the emulator, -1 for none (set by the root
	// command once the value is validated).
	shield int
	// shieldNodes is --shield-cpu as given to slurm and k8s, which validate it against the
	// shards' cores and pass it to every shard instead of keeping a CPU of this machine.
	shieldNodes string
	start       func(*cobra.Command, idlepoll.Mode) error // startIdlePoll; tests record the call
	// probe says whether this machine can open a link of a spec's shaper before anything is
	// set up (shaping.Available: sch_netem for shaper=netem); tests give a kernel of their
	// choice. A nil setup or probe asks the kernel (shaping.Available).
	probe func(linkspec.Spec) error
	// derive derives a study part's schedule (studies.RunOptions.Schedule; nil:
	// experiment.NewSchedule); tests count the derivations of one command through it.
	derive func(experiment.Config) (*experiment.Schedule, error)
}

// newMeasureSetup returns the set-up main uses: startIdlePoll and the kernel's own answer
// (shaping.Available).
func newMeasureSetup() *measureSetup {
	return &measureSetup{start: startIdlePoll, probe: shaping.Available, shield: -1}
}

// available reports whether this machine can open a link of spec's shaper (probe).
func (s *measureSetup) available(spec linkspec.Spec) error {
	if s == nil || s.probe == nil {
		return shaping.Available(spec)
	}
	return s.probe(spec)
}

// begin makes the set-up for cmd, whose input has been validated.
func (s *measureSetup) begin(cmd *cobra.Command) error {
	raiseProcsForLink() // the forwarders need Ps of their own next to server and browser driver
	if !onlyPlans(cmd) {
		recoverShield()
		if s.shield >= 0 {
			if err := startShield(s.shield); err != nil {
				return err
			}
		}
	}
	return s.start(cmd, s.mode)
}

// onlyPlans reports whether cmd, as parsed, only lists, plans or checks its input (--list,
// --dry-run): it measures nothing, so it needs no spinner.
func onlyPlans(cmd *cobra.Command) bool {
	return slices.ContainsFunc([]string{"list", "dry-run"}, func(name string) bool {
		f := cmd.Flags().Lookup(name)
		return f != nil && f.Value.String() == "true"
	})
}

// idlePollFlag is the --idle-poll flag's help.
var idlePollFlag = fmt.Sprintf("keep the machine's CPUs from halting while measuring, with one idle-priority spinner per CPU (and a real-time watcher beside it that sees the host freeze a CPU): %s (under a hypervisor, where waking an idle CPU takes it 1-8 ms), %s or %s", idlepoll.Auto, idlepoll.On, idlepoll.Off)
