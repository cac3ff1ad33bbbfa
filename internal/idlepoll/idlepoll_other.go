//go:build !linux

package idlepoll

import "errors"

// Keeper holds the spinners of one Start (none outside Linux).
type Keeper struct {
	// CPUs are the CPUs kept awake.
	CPUs []int
}

// Child returns ok false: there are no spinners outside Linux.
func Child() (code int, ok bool) { return 0, false }

// Start returns errors.ErrUnsupported outside Linux.
func Start() (*Keeper, error) { return nil, errors.ErrUnsupported }

// Stop does nothing.
func (k *Keeper) Stop() error { return nil }

// Virtual reports false outside Linux.
func Virtual() bool { return false }

// Ticks is 0 outside Linux.
func Ticks() uint64 { return 0 }
