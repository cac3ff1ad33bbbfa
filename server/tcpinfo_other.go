//go:build !linux

package server

import (
	"errors"
	"syscall"
)

// tcpInfo is Linux only: other platforms get errors.ErrUnsupported.
func tcpInfo(c syscall.RawConn) (tcpStats, error) {
	return tcpStats{}, errors.ErrUnsupported
}
