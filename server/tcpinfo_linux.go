//go:build linux

package server

import (
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tcpInfo reads TCP_INFO (tcp(7)) of the socket behind c: data segments sent
// (tcpi_data_segs_out), segments retransmitted (tcpi_total_retrans), the smoothed RTT
// (tcpi_rtt, microseconds) and how long the sender was busy and limited by the receive window
// or the send buffer (tcpi_busy_time, tcpi_rwnd_limited, tcpi_sndbuf_limited, microseconds,
// Linux 4.10 "tcp: sender chronograph").
func tcpInfo(c syscall.RawConn) (st tcpStats, err error) {
	var info *unix.TCPInfo
	var serr error
	if err := c.Control(func(fd uintptr) {
		info, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil {
		return st, err
	}
	if serr != nil {
		return st, fmt.Errorf("getsockopt TCP_INFO: %w", serr)
	}
	us := func(v uint64) time.Duration { return time.Duration(v) * time.Microsecond }
	return tcpStats{segsOut: int64(info.Data_segs_out), retrans: int64(info.Total_retrans),
		srtt: us(uint64(info.Rtt)), busy: us(info.Busy_time), rwndLimited: us(info.Rwnd_limited),
		sndbufLimited: us(info.Sndbuf_limited)}, nil
}
