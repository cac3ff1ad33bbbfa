//go:build !linux

package shaping

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os/exec"
	"sync/atomic"
	"time"
)

func openEmu(ctx context.Context, spec Spec, o options) (Link, error) {
	return nil, errors.ErrUnsupported
}

func openNetem(ctx context.Context, spec Spec, o options) (Link, error) {
	return nil, errors.ErrUnsupported
}

func inNamespace(name string, fn func() error) error { return errors.ErrUnsupported }

type rtEcho struct{ port int }

func startEcho(addr netip.Addr) (*rtEcho, error) { return nil, errors.ErrUnsupported }

func (e *rtEcho) close() {}

func rtProbe(server netip.AddrPort, n int, gap, timeout time.Duration, stop *atomic.Bool) ([]time.Duration, error) {
	return nil, errors.ErrUnsupported
}

func tuneSender(conn *net.TCPConn, buf int) {}

func goodput(ctx context.Context, conn *net.TCPConn, dur, skip time.Duration) float64 { return 0 }

// Teardown does nothing on this platform: no link can be opened.
func Teardown() {}

// RootlessCommand is only available on Linux; elsewhere it returns a command that fails.
func RootlessCommand(path string, args []string) *exec.Cmd { return exec.Command(path, args...) }

// PrepareRootless is only available on Linux.
func PrepareRootless() error { return errors.ErrUnsupported }

// stampedReader reads datagrams of c with the time the read returned (no kernel timestamps
// off Linux).
func stampedReader(c *net.UDPConn) func(buf []byte) (int, time.Time, error) {
	return func(buf []byte) (int, time.Time, error) {
		n, _, err := c.ReadFromUDP(buf)
		return n, time.Now(), err
	}
}

func startEchoOn(addr netip.Addr, cpu int) (*rtEcho, error) { return nil, errors.ErrUnsupported }

func probeCPU() int { return -1 }

func rtProbePair(link, ref netip.AddrPort, warm, n, cpu int, timeout time.Duration, halt *atomic.Bool) (p pairedRTTs, linkLost, refLost int, err error) {
	return p, 0, 0, errors.ErrUnsupported
}
