//go:build !linux

package device

import (
	"errors"
	"os/exec"
	"time"
)

// Group is a cgroup with a CPU budget; cgroups exist on Linux only.
type Group struct {
	Dir, Acct string
	Version   int
}

// Throttling is the group's CFS bandwidth counters.
type Throttling struct {
	Periods, Throttled int64
	ThrottledMs        float64
}

var errNoCgroups = errors.New("CPU budgets need Linux cgroups")

// NewGroup fails: cgroups exist on Linux only.
func NewGroup() (*Group, error) { return nil, errNoCgroups }

func (g *Group) ProcsFile() string                   { return "" }
func (g *Group) JoinFiles() []string                 { return nil }
func (g *Group) UsageMs() (float64, error)           { return 0, errNoCgroups }
func (g *Group) SetBudget(float64) (int, int, error) { return 0, 0, errNoCgroups }
func (g *Group) Mechanism() string                   { return "" }
func (g *Group) Throttling() (Throttling, error)     { return Throttling{}, errNoCgroups }
func (g *Group) Has(int) bool                        { return false }
func (g *Group) Close() error                        { return nil }
func CleanStale() []string                           { return nil }
func Tree(int) map[int]Proc                          { return nil }
func Self() float64                                  { return 0 }

// MainThreadCPU fails: /proc/PID/schedstat exists on Linux only.
func MainThreadCPU(int) (time.Duration, error) { return 0, errNoCgroups }

// JoinCommand leaves cmd as it is: cgroups exist on Linux only.
func JoinCommand(cmd *exec.Cmd, files []string) {}

// Wrap leaves cmd as it is.
func (g *Group) Wrap(cmd *exec.Cmd) {}
