//go:build !linux

package selfcheck

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"time"
)

type rtEcho struct{ port int }

func startEcho(addr netip.Addr) (*rtEcho, error) { return nil, errors.ErrUnsupported }

func (e *rtEcho) close() {}

func rtProbe(server netip.AddrPort, n int, gap, timeout time.Duration, stop *atomic.Bool) ([]timedRTT, error) {
	return nil, errors.ErrUnsupported
}

func tuneSender(conn *net.TCPConn, buf int) {}

func goodput(ctx context.Context, conn *net.TCPConn, dur, skip time.Duration) float64 { return 0 }

// stampedReader reads datagrams of c with the time the read returned (no kernel timestamps
// off Linux).
func stampedReader(c *net.UDPConn) func(buf []byte) (int, time.Time, error) {
	return func(buf []byte) (int, time.Time, error) {
		n, _, err := c.ReadFromUDP(buf)
		return n, time.Now(), err
	}
}

type rtEchoPair struct{ ports [2]int }

func startEchoPair(link, ref netip.Addr, cpu int) (*rtEchoPair, error) {
	return nil, errors.ErrUnsupported
}

func (e *rtEchoPair) close() {}

func probeCPU() int { return -1 }

func rtProbePair(link, ref netip.AddrPort, warm, n, cpu int, timeout time.Duration, halt *atomic.Bool) (p pairedRTTs, linkLost, refLost int, err error) {
	return p, 0, 0, errors.ErrUnsupported
}

func markECT(conn *net.UDPConn) error { return errors.ErrUnsupported }

func ecnOf(oob []byte) int { return -1 }
