//go:build !linux

package server

import (
	"errors"
	"syscall"
	"time"
)

// tcpInfo is Linux only: other platforms get errors.ErrUnsupported.
func tcpInfo(c syscall.RawConn) (segsOut, retrans int64, srtt time.Duration, err error) {
	return 0, 0, 0, errors.ErrUnsupported
}
