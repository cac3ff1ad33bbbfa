package selfcheck

import (
	"context"
	"net"
	"time"

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

// goodput measures the sender's goodput in bit/s between skip and dur from now: the data
// segments the receiver got (tcpi_delivered: acknowledged or selectively acknowledged) times
// the MSS, over the time between two TCP_INFO samples. Counting what the application reads
// instead is biased: after a loss, one retransmission releases all the data that arrived
// behind the hole (measured here: +7% over 1 s at 3 Mbit/s, 1007 "Mbit/s" through 1 Gbit/s).
// It returns early (0) when ctx ends.
func goodput(ctx context.Context, conn *net.TCPConn, dur, skip time.Duration) float64 {
	start := time.Now()
	if !sleepCtx(ctx, skip) {
		return 0
	}
	b0, t0, ok0 := delivered(conn)
	if !sleepCtx(ctx, time.Until(start.Add(dur))) {
		return 0
	}
	b1, t1, ok1 := delivered(conn)
	if !ok0 || !ok1 || !t1.After(t0) {
		return 0
	}
	return float64(b1-b0) * 8 / t1.Sub(t0).Seconds()
}

// delivered returns the payload bytes the peer has received (tcpi_delivered x MSS) and when.
func delivered(conn *net.TCPConn) (bytes int64, at time.Time, ok bool) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return 0, at, false
	}
	raw.Control(func(fd uintptr) {
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		at = time.Now()
		if err == nil {
			bytes, ok = int64(info.Delivered)*int64(info.Snd_mss), true
		}
	})
	return bytes, at, ok
}

// markECT sets the ECN field of every datagram conn sends to ECT(0) (IP_TOS 2; Linux keeps a
// UDP socket's ECN bits, RFC 3168 section 5) and asks for each received datagram's TOS byte
// (IP_RECVTOS), so that readECN can read its ECN field.
func markECT(conn *net.UDPConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_TOS, 2)
		if serr == nil {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1)
		}
	}); err != nil {
		return err
	}
	return serr
}

// ecnOf returns the ECN field (0..3) of the TOS byte in a received datagram's control
// messages oob (IP_RECVTOS), -1 when there is none.
func ecnOf(oob []byte) int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return -1
	}
	for _, m := range msgs {
		if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TOS && len(m.Data) >= 1 {
			return int(m.Data[0] & 3)
		}
	}
	return -1
}
