//go:build !linux

package server

import (
	"errors"
	"time"
)

// ngtcp2Stack is Linux only (child processes with Pdeathsig, /proc).
type ngtcp2Stack struct{}

// startNgtcp2 is Linux only: other platforms get errors.ErrUnsupported.
func (s *Server) startNgtcp2() error { return errors.ErrUnsupported }

func (st *ngtcp2Stack) closeConnections() error { return nil }

func (st *ngtcp2Stack) pageConn(since time.Time) (ConnInfo, bool, error) {
	return ConnInfo{}, false, nil
}

func (st *ngtcp2Stack) allConns() []ConnInfo { return nil }

func (st *ngtcp2Stack) flowStats(string) (ConnStats, error) {
	return ConnStats{}, errors.ErrUnsupported
}

func (st *ngtcp2Stack) close() error { return nil }

func (st *ngtcp2Stack) cpu() time.Duration { return 0 }
