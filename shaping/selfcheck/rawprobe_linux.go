package selfcheck

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pltlab/pltlab/shaping"
	"golang.org/x/sys/unix"
)

// The RTT probes run on locked real-time threads with plain system calls, and take the reply's
// arrival time from the kernel (SO_TIMESTAMPNS), so the Go scheduler's delays under CPU load do
// not inflate the measured RTT: what is measured is the link, not this process.

// rtEcho is a UDP echo server on its own real-time thread.
type rtEcho struct {
	fd   int
	port int
	stop atomic.Bool
	done chan struct{}
}

// startEcho binds a UDP echo server to addr:0 in this namespace.
func startEcho(addr netip.Addr) (*rtEcho, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("udp socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: addr.As4()}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind udp %s: %w", addr, err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("udp getsockname: %w", err)
	}
	e := &rtEcho{fd: fd, port: sa.(*unix.SockaddrInet4).Port, done: make(chan struct{})}
	go e.serve()
	return e, nil
}

func (e *rtEcho) serve() {
	defer close(e.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	shaping.TuneThread(true)
	defer untuneThread()
	buf := make([]byte, 2048)
	fds := []unix.PollFd{{Fd: int32(e.fd), Events: unix.POLLIN}}
	for !e.stop.Load() {
		if n, _ := unix.Poll(fds, 50); n <= 0 {
			continue
		}
		n, from, err := unix.Recvfrom(e.fd, buf, unix.MSG_DONTWAIT)
		if err == nil && n > 0 && buf[0] == 'E' {
			unix.Sendto(e.fd, buf[:n], 0, from)
		}
	}
}

func (e *rtEcho) close() {
	e.stop.Store(true)
	<-e.done
	unix.Close(e.fd)
}

// rtProbe sends probes from the calling (locked) thread: n probes gap apart, or until stop is
// set when n is 0. It returns the RTTs of the answered probes.
func rtProbe(server netip.AddrPort, n int, gap, timeout time.Duration, stop *atomic.Bool) ([]time.Duration, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("udp socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return nil, fmt.Errorf("SO_TIMESTAMPNS: %w", err)
	}
	if err := unix.Connect(fd, &unix.SockaddrInet4{Addr: server.Addr().As4(), Port: int(server.Port())}); err != nil {
		return nil, fmt.Errorf("connect udp %s: %w", server, err)
	}
	shaping.TuneThread(true)
	defer untuneThread()
	var rtts []time.Duration
	out, in, oob := make([]byte, probePayload), make([]byte, 2048), make([]byte, 128)
	out[0] = 'E'
	for seq := uint32(1); !stop.Load() && (n == 0 || int(seq) <= n); seq++ {
		binary.BigEndian.PutUint32(out[1:], seq)
		if d, ok := rtEchoOnce(fd, out, in, oob, seq, timeout, stop); ok {
			rtts = append(rtts, d)
		}
		time.Sleep(gap)
	}
	return rtts, nil
}

// rtEchoOnce sends one probe and waits for its echo; the RTT ends at the kernel's receive
// timestamp of the echo.
// It gives up when halt is set, checking at least every 100 ms.
func rtEchoOnce(fd int, out, in, oob []byte, seq uint32, timeout time.Duration, halt *atomic.Bool) (time.Duration, bool) {
	start := time.Now()
	if _, err := unix.Write(fd, out); err != nil {
		return 0, false
	}
	deadline := start.Add(timeout)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		left := time.Until(deadline)
		if left <= 0 || halt.Load() {
			return 0, false
		}
		ts := unix.NsecToTimespec(int64(min(left, 100*time.Millisecond)))
		if k, _ := unix.Ppoll(fds, &ts, nil); k <= 0 {
			continue
		}
		n, oobn, _, _, err := unix.Recvmsg(fd, in, oob, unix.MSG_DONTWAIT)
		if err != nil || n < 5 || binary.BigEndian.Uint32(in[1:]) != seq {
			continue
		}
		if at, ok := rxTimestamp(oob[:oobn]); ok {
			return at.Sub(start), true
		}
		return time.Since(start), true
	}
}

// rxTimestamp extracts the SO_TIMESTAMPNS receive time from control messages.
func rxTimestamp(oob []byte) (time.Time, bool) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := *(*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(ts.Unix()), true
		}
	}
	return time.Time{}, false
}

// untuneThread returns the calling thread to normal scheduling (before it is unlocked).
func untuneThread() {
	param := struct{ priority int32 }{0}
	unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, 0 /* SCHED_OTHER */, uintptr(unsafe.Pointer(&param)))
	unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0)
}

// stampedReader reads datagrams of c with their kernel receive times (SO_TIMESTAMPNS), so that
// a stream's one-way delays do not include the reader goroutine's scheduling delay on a busy
// machine; without the option it falls back to the time the read returned.
func stampedReader(c *net.UDPConn) func(buf []byte) (int, time.Time, error) {
	ok := false
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			ok = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil
		})
	}
	oob := make([]byte, 128)
	return func(buf []byte) (int, time.Time, error) {
		n, oobn, _, _, err := c.ReadMsgUDP(buf, oob)
		now := time.Now()
		if err != nil {
			return n, now, err
		}
		if ok {
			if t, got := rxTimestamp(oob[:oobn]); got {
				return n, t, nil
			}
		}
		return n, now, nil
	}
}
