package main

import (
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/pltlab/pltlab/internal/cpushield"
)

// shieldMu guards shield, the CPU shield this process holds while it measures (startShield);
// nil when none.
var (
	shieldMu    sync.Mutex
	shield      *cpushield.Shield
	shieldSweep chan struct{} // closed to end the sweeper
)

// startShield keeps cpu for this process (pltlab --shield-cpu; package cpushield): its threads
// run there alone and every other task of the machine is moved off it, and a sweeper moves the
// browser and the other children it starts off it every cpushield.SweepEvery. It runs before
// the idle-poll spinners start (they pin themselves, one per CPU). Every record states it
// (env.shield_cpu).
func startShield(cpu int) error {
	s, err := cpushield.Start(cpushield.Kernel{}, cpushield.StatePath, os.Getpid(), cpu)
	if err != nil {
		return fmt.Errorf("--shield-cpu %d: %w", cpu, err)
	}
	done := make(chan struct{})
	shieldMu.Lock()
	shield, shieldSweep = s, done
	shieldMu.Unlock()
	go func() {
		t := time.NewTicker(cpushield.SweepEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				shieldMu.Lock()
				if shield != nil {
					shield.Sweep()
				}
				shieldMu.Unlock()
			}
		}
	}()
	slog.Info("CPU kept for pltlab alone", "cpu", cpu, "tasks_moved", s.Moved, "tasks_left_pinned", s.Pinned)
	return nil
}

// stopShield gives the shielded CPU back (quick: it runs as a forced-exit hook too). It runs
// after stopIdlePoll, so that the spinners, pinned to their CPUs, are gone.
func stopShield() {
	shieldMu.Lock()
	defer shieldMu.Unlock()
	if shield == nil {
		return
	}
	close(shieldSweep)
	n, err := shield.Stop()
	if err != nil {
		slog.Warn("CPU shield", "err", err)
	}
	slog.Debug("CPU shield ended", "cpu", shield.CPU, "tasks_restored", n, "descendants_swept", shield.Swept)
	shield = nil
}

// recoverShield undoes the shield of a pltlab that was killed before it gave its CPU back.
func recoverShield() {
	pid, n, err := cpushield.Recover(cpushield.Kernel{}, cpushield.StatePath)
	if err != nil {
		slog.Warn("CPU shield left by a killed pltlab", "err", err)
	} else if pid != 0 {
		slog.Info("gave back the CPU shield a killed pltlab held", "pid", pid, "tasks_restored", n)
	}
}

// shieldFlag is the --shield-cpu flag's help.
const shieldFlag = "keep one CPU for pltlab's own process (link emulator, server, probes) while measuring: every other task on the machine, the browser included, is moved off it for the command's span, since the host stops the virtual CPU a memory-heavy process runs on (docs/design.md, \"A shielded CPU\"); off or a CPU number. Needs root; records state it (env.shield_cpu). Before slurm or k8s it is passed to every shard, for a CPU of the shard's node (a node of its own each)"
