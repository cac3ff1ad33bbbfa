//go:build linux

package server

import (
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// tcpInfo reads TCP_INFO (tcp(7)) of the socket behind c: data segments sent
// (tcpi_data_segs_out), segments retransmitted (tcpi_total_retrans) and the smoothed RTT
// (tcpi_rtt, microseconds).
func tcpInfo(c syscall.RawConn) (segsOut, retrans int64, srtt time.Duration, err error) {
	var info *unix.TCPInfo
	var serr error
	if err := c.Control(func(fd uintptr) {
		info, serr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil {
		return 0, 0, 0, err
	}
	if serr != nil {
		return 0, 0, 0, fmt.Errorf("getsockopt TCP_INFO: %w", serr)
	}
	return int64(info.Data_segs_out), int64(info.Total_retrans), time.Duration(info.Rtt) * time.Microsecond, nil
}
