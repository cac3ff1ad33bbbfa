//go:build linux

package server

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// setTCPCC sets the congestion control of the socket behind c (TCP_CONGESTION, tcp(7)).
// Sockets accepted from a listener inherit the listener's algorithm.
func setTCPCC(c syscall.RawConn, name string) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, name)
	}); err != nil {
		return err
	}
	if errors.Is(serr, unix.EPERM) {
		allowed, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
		return fmt.Errorf("setsockopt TCP_CONGESTION %s: %w (without root only net.ipv4.tcp_allowed_congestion_control = %q may be set: run as root or choose one of those)",
			name, serr, strings.TrimSpace(string(allowed)))
	}
	if serr != nil {
		return fmt.Errorf("setsockopt TCP_CONGESTION %s: %w", name, serr)
	}
	return nil
}

// ProbeTCPCC reports whether this process, in its network namespace and with its credentials,
// may set the TCP congestion control name on the server's sockets: it tries setsockopt
// TCP_CONGESTION on a throwaway TCP socket, the call the listeners make, so that a run refuses
// a controller up front instead of losing every load to the harness. A user without
// CAP_NET_ADMIN over the namespace may set only net.ipv4.tcp_allowed_congestion_control (a
// rootless run, root in its own user namespace, may set any loaded one). The error is one line
// naming the value and what is accepted.
func ProbeTCPCC(name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("probe tcp_cc %s: socket: %w", name, err)
	}
	defer unix.Close(fd)
	return tcpCCError(name, unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, name))
}

// tcpCCError turns the errno of setsockopt TCP_CONGESTION name into one line naming what
// is accepted (nil stays nil).
func tcpCCError(name string, errno error) error {
	sysctl := func(n string) string {
		b, _ := os.ReadFile("/proc/sys/net/ipv4/" + n)
		return strings.TrimSpace(string(b))
	}
	switch {
	case errno == nil:
		return nil
	case errors.Is(errno, unix.EPERM):
		return fmt.Errorf("tcp_cc %s: this user may not set it (setsockopt TCP_CONGESTION: %v): accepted without root net.ipv4.tcp_allowed_congestion_control = %q; choose one of those (--tcp-cc, or tcp_cc in the matrix), or run as root",
			name, errno, sysctl("tcp_allowed_congestion_control"))
	case errors.Is(errno, unix.ENOENT):
		return fmt.Errorf("tcp_cc %s: this kernel has no such congestion control (setsockopt TCP_CONGESTION: %v): accepted net.ipv4.tcp_available_congestion_control = %q, or load its module as root (modprobe tcp_%s)",
			name, errno, sysctl("tcp_available_congestion_control"), name)
	}
	return fmt.Errorf("tcp_cc %s: setsockopt TCP_CONGESTION: %w", name, errno)
}

// getTCPCC reads the congestion control of the socket behind c back (getsockopt TCP_CONGESTION).
func getTCPCC(c syscall.RawConn) (string, error) {
	var name string
	var serr error
	if err := c.Control(func(fd uintptr) {
		name, serr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	}); err != nil {
		return "", err
	}
	if serr != nil {
		return "", fmt.Errorf("getsockopt TCP_CONGESTION: %w", serr)
	}
	return name, nil
}

// setUDPBuffers asks for want bytes of receive and send buffer on conn: SO_RCVBUFFORCE and
// SO_SNDBUFFORCE (which pass net.core.rmem_max/wmem_max, root only), else SO_RCVBUF and SO_SNDBUF
// (capped at those limits). It returns the sizes getsockopt reports afterwards; Linux reports
// twice the requested value because it counts its bookkeeping overhead (socket(7)).
func setUDPBuffers(conn *net.UDPConn, want int) (rcv, snd int, err error) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return 0, 0, fmt.Errorf("udp raw conn: %w", err)
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		rcv, serr = setSockBuf(int(fd), unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, want)
		if serr != nil {
			return
		}
		snd, serr = setSockBuf(int(fd), unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, want)
	})
	if err == nil {
		err = serr
	}
	return rcv, snd, err
}

// readUDPBuffers returns conn's receive and send buffer sizes as getsockopt reports them (0 when
// unreadable).
func readUDPBuffers(conn *net.UDPConn) (rcv, snd int) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return 0, 0
	}
	_ = rc.Control(func(fd uintptr) {
		rcv, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		snd, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
	})
	return rcv, snd
}

func setSockBuf(fd, force, plain, want int) (int, error) {
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, force, want) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, plain, want) // capped by the sysctl; read back below
	}
	got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, plain)
	if err != nil {
		return 0, fmt.Errorf("getsockopt socket buffer: %w", err)
	}
	return got, nil
}
