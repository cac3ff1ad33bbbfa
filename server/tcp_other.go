//go:build !linux

package server

import (
	"errors"
	"net"
	"syscall"
)

// setTCPCC is Linux only: other platforms get errors.ErrUnsupported.
func setTCPCC(c syscall.RawConn, name string) error { return errors.ErrUnsupported }

// ProbeTCPCC is Linux only: other platforms get errors.ErrUnsupported.
func ProbeTCPCC(name string) error { return errors.ErrUnsupported }

// getTCPCC is Linux only: other platforms get errors.ErrUnsupported.
func getTCPCC(c syscall.RawConn) (string, error) { return "", errors.ErrUnsupported }

// setUDPBuffers is Linux only: other platforms get errors.ErrUnsupported and keep their buffers.
func setUDPBuffers(conn *net.UDPConn, want int) (rcv, snd int, err error) {
	return 0, 0, errors.ErrUnsupported
}

// readUDPBuffers is Linux only: other platforms get 0, 0.
func readUDPBuffers(conn *net.UDPConn) (rcv, snd int) { return 0, 0 }
