package shaping

import (
	"net"

	"golang.org/x/sys/unix"
)

// tuneSender sets CUBIC (RFC 9438) as the sender's congestion control, so the check does not
// depend on the system default, and forces a send buffer of at least buf bytes when that is
// more than the autotuning maximum allows (SO_SNDBUFFORCE needs CAP_NET_ADMIN).
func tuneSender(conn *net.TCPConn, buf int) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return
	}
	raw.Control(func(fd uintptr) {
		unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, "cubic")
		if buf > 4<<20 {
			unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, buf)
		}
	})
}
