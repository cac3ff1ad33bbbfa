//go:build unix

package pages

import (
	"errors"
	"syscall"
)

// processGone reports whether no process pid exists.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
