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

	"github.com/pltlab/pltlab/internal/cpushield"
	"github.com/pltlab/pltlab/shaping"
	"github.com/pltlab/pltlab/shaping/internal/rtwait"
	"golang.org/x/sys/unix"
)

// The RTT probes run on locked real-time threads with plain system calls, and take the reply's
// arrival time from the kernel (SO_TIMESTAMPNS), so the Go scheduler's delays under CPU load do
// not inflate the measured RTT: what is measured is the link, not this process. They block in
// raw system calls (rtwait) where GOMAXPROCS leaves them a P (ProbeProcs), as the emulator's
// forwarders do, so that an echo is never held up in Go's exitsyscall.

// rawWait reserves a P for the calling thread's raw waits (rtwait.Acquire) and returns whether
// it got one and the function that returns it.
func rawWait() (raw bool, release func()) {
	if rtwait.Acquire() {
		return true, rtwait.Release
	}
	return false, func() {}
}

// rtEcho is a UDP echo server on its own real-time thread.
type rtEcho struct {
	fd   int
	port int
	stop atomic.Bool
	done chan struct{}
}

// startEcho binds a UDP echo server to addr:0 in this namespace.
func startEcho(addr netip.Addr) (*rtEcho, error) {
	fd, port, err := bindUDP(addr)
	if err != nil {
		return nil, err
	}
	e := &rtEcho{fd: fd, port: port, done: make(chan struct{})}
	go e.serve()
	return e, nil
}

// bindUDP opens a UDP socket bound to addr:0 and returns it and its port.
func bindUDP(addr netip.Addr) (fd, port int, err error) {
	fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("udp socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: addr.As4()}); err != nil {
		unix.Close(fd)
		return 0, 0, fmt.Errorf("bind udp %s: %w", addr, err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		unix.Close(fd)
		return 0, 0, fmt.Errorf("udp getsockname: %w", err)
	}
	return fd, sa.(*unix.SockaddrInet4).Port, nil
}

// rtEchoPair is the echo server of paired probes: one real-time thread, pinned to one CPU,
// answering the link's and the reference's socket. Of two probes of one pair that it finds
// waiting together it answers both back to back, in the order their client sent them (the
// link's first for odd sequence numbers, see rtProbePair), so no thread switch or stall can
// fall between the two answers' sends but one system call's time.
type rtEchoPair struct {
	fds   [2]int
	ports [2]int
	cpu   int
	stop  atomic.Bool
	done  chan struct{}
}

// startEchoPair binds the pair's echo sockets to link:0 and ref:0, its thread on cpu (-1: any).
func startEchoPair(link, ref netip.Addr, cpu int) (*rtEchoPair, error) {
	e := &rtEchoPair{cpu: cpu, done: make(chan struct{})}
	for i, a := range []netip.Addr{link, ref} {
		fd, port, err := bindUDP(a)
		if err != nil {
			if i == 1 {
				unix.Close(e.fds[0])
			}
			return nil, err
		}
		e.fds[i], e.ports[i] = fd, port
	}
	go e.serve()
	return e, nil
}

func (e *rtEchoPair) serve() {
	defer close(e.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if e.cpu >= 0 {
		restore := pinThread(e.cpu)
		defer restore()
	}
	shaping.TuneThread(true)
	defer untuneThread()
	raw, release := rawWait()
	defer release()
	var bufs [2][2048]byte
	var n [2]int
	var from [2]unix.Sockaddr
	pfds := []unix.PollFd{{Fd: int32(e.fds[0]), Events: unix.POLLIN}, {Fd: int32(e.fds[1]), Events: unix.POLLIN}}
	for !e.stop.Load() {
		if rtwait.PollFor(pfds, 50*time.Millisecond, raw) <= 0 {
			continue
		}
		first := 0
		for i := range e.fds {
			n[i] = 0
			if pfds[i].Revents&unix.POLLIN == 0 {
				continue
			}
			m, sa, err := unix.Recvfrom(e.fds[i], bufs[i][:], unix.MSG_DONTWAIT)
			if err == nil && m >= 5 && bufs[i][0] == 'E' {
				n[i], from[i] = m, sa
				if binary.BigEndian.Uint32(bufs[i][1:])%2 == 0 {
					first = 1 // an even sequence number: the reference's probe went first
				}
			}
		}
		for _, i := range []int{first, 1 - first} {
			if n[i] > 0 {
				unix.Sendto(e.fds[i], bufs[i][:n[i]], 0, from[i])
			}
		}
	}
}

func (e *rtEchoPair) close() {
	e.stop.Store(true)
	<-e.done
	unix.Close(e.fds[0])
	unix.Close(e.fds[1])
}

func (e *rtEcho) serve() {
	defer close(e.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	shaping.TuneThread(true)
	defer untuneThread()
	raw, release := rawWait()
	defer release()
	buf := make([]byte, 2048)
	fds := []unix.PollFd{{Fd: int32(e.fd), Events: unix.POLLIN}}
	for !e.stop.Load() {
		if rtwait.PollFor(fds, 50*time.Millisecond, raw) <= 0 {
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
func rtProbe(server netip.AddrPort, n int, gap, timeout time.Duration, stop *atomic.Bool) ([]timedRTT, error) {
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
	raw, release := rawWait()
	defer release()
	var rtts []timedRTT
	out, in, oob := make([]byte, probePayload), make([]byte, 2048), make([]byte, 128)
	out[0] = 'E'
	for seq := uint32(1); !stop.Load() && (n == 0 || int(seq) <= n); seq++ {
		binary.BigEndian.PutUint32(out[1:], seq)
		if at, d, ok := rtEchoOnce(fd, out, in, oob, seq, timeout, stop, raw); ok {
			rtts = append(rtts, timedRTT{At: at, RTT: d})
		}
		rtwait.Sleep(gap, raw)
	}
	return rtts, nil
}

// rtEchoOnce sends one probe and waits for its echo; the RTT ends at the kernel's receive
// timestamp of the echo; start is when it was sent.
// It gives up when halt is set, checking at least every 100 ms.
func rtEchoOnce(fd int, out, in, oob []byte, seq uint32, timeout time.Duration, halt *atomic.Bool, raw bool) (start time.Time, rtt time.Duration, ok bool) {
	start = time.Now()
	if _, err := unix.Write(fd, out); err != nil {
		return start, 0, false
	}
	deadline := start.Add(timeout)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		left := time.Until(deadline)
		if left <= 0 || halt.Load() {
			return start, 0, false
		}
		if rtwait.PollFor(fds, left, raw) <= 0 {
			continue
		}
		n, oobn, _, _, err := unix.Recvmsg(fd, in, oob, unix.MSG_DONTWAIT)
		if err != nil || n < 5 || binary.BigEndian.Uint32(in[1:]) != seq {
			continue
		}
		if at, ok := rxTimestamp(oob[:oobn]); ok {
			return start, at.Sub(start), true
		}
		return start, time.Since(start), true
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

// pinThread pins the calling (locked) thread to cpu and returns the function that restores its
// previous affinity; when the affinity cannot be read or set, it changes nothing.
func pinThread(cpu int) (restore func()) {
	var old, set unix.CPUSet
	if unix.SchedGetaffinity(0, &old) != nil {
		return func() {}
	}
	set.Set(cpu)
	if unix.SchedSetaffinity(0, &set) != nil {
		return func() {}
	}
	return func() { unix.SchedSetaffinity(0, &old) }
}

// probeCPU is the CPU the paired probes run on: the CPU kept for the emulator under
// --shield-cpu (package cpushield), else the lowest this process may use.
func probeCPU() int {
	if cpu, ok := cpushield.Current(); ok {
		return cpu
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return -1
	}
	for c := 0; c < 1024; c++ {
		if set.IsSet(c) {
			return c
		}
	}
	return -1
}

// rtProbePair sends warm+n pairs of probes from the calling (locked) thread, pinned to cpu
// (-1: not pinned): one to link and one to ref, back to back (the link's first in even pairs,
// the reference's first in odd ones), then waits for both echoes, each RTT from its own send
// to the kernel's receive timestamp of its echo. The first warm pairs are not returned. It
// returns the RTTs of the pairs both of whose probes were answered (linkRTT[i] and refRTT[i]
// are one pair, linkFirst[i] whether the link's was sent first) and how many link and
// reference probes went unanswered.
func rtProbePair(link, ref netip.AddrPort, warm, n, cpu int, timeout time.Duration, halt *atomic.Bool) (p pairedRTTs, linkLost, refLost int, err error) {
	var fds [2]int
	for i, server := range []netip.AddrPort{link, ref} {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return p, 0, 0, fmt.Errorf("udp socket: %w", err)
		}
		defer unix.Close(fd)
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			return p, 0, 0, fmt.Errorf("SO_TIMESTAMPNS: %w", err)
		}
		if err := unix.Connect(fd, &unix.SockaddrInet4{Addr: server.Addr().As4(), Port: int(server.Port())}); err != nil {
			return p, 0, 0, fmt.Errorf("connect udp %s: %w", server, err)
		}
		fds[i] = fd
	}
	if cpu >= 0 {
		restore := pinThread(cpu)
		defer restore()
	}
	shaping.TuneThread(true)
	defer untuneThread()
	raw, release := rawWait()
	defer release()
	out, in, oob := make([]byte, probePayload), make([]byte, 2048), make([]byte, 128)
	out[0] = 'E'
	for i := 0; i < warm+n && !halt.Load(); i++ {
		seq := uint32(i + 1)
		binary.BigEndian.PutUint32(out[1:], seq)
		rtt, ok := rtPairOnce(fds, i%2, out, in, oob, seq, timeout, halt, raw)
		if i < warm {
			if !ok[0] {
				p.warmLinkLost++
			}
			continue
		}
		if !ok[0] {
			linkLost++
		}
		if !ok[1] {
			refLost++
		}
		if ok[0] && ok[1] {
			p.link, p.ref, p.linkFirst = append(p.link, rtt[0]), append(p.ref, rtt[1]), append(p.linkFirst, i%2 == 0)
		}
	}
	return p, linkLost, refLost, nil
}

// rtPairOnce sends one probe on each of fds (fds[first] first) and waits until both echoes
// came back, timeout passed or halt was set (checked at least every 100 ms).
func rtPairOnce(fds [2]int, first int, out, in, oob []byte, seq uint32, timeout time.Duration, halt *atomic.Bool, raw bool) (rtt [2]time.Duration, ok [2]bool) {
	var start [2]time.Time
	for _, i := range []int{first, 1 - first} {
		start[i] = time.Now()
		unix.Write(fds[i], out) // a failed send is an unanswered probe
	}
	deadline := start[first].Add(timeout)
	pfds := []unix.PollFd{{Fd: int32(fds[0]), Events: unix.POLLIN}, {Fd: int32(fds[1]), Events: unix.POLLIN}}
	for !(ok[0] && ok[1]) {
		left := time.Until(deadline)
		if left <= 0 || halt.Load() {
			return rtt, ok
		}
		if rtwait.PollFor(pfds, left, raw) <= 0 {
			continue
		}
		for i := range fds {
			if ok[i] || pfds[i].Revents&unix.POLLIN == 0 {
				continue
			}
			n, oobn, _, _, err := unix.Recvmsg(fds[i], in, oob, unix.MSG_DONTWAIT)
			if err != nil || n < 5 || binary.BigEndian.Uint32(in[1:]) != seq {
				continue
			}
			at, stamped := rxTimestamp(oob[:oobn])
			if !stamped {
				at = time.Now()
			}
			rtt[i], ok[i] = at.Sub(start[i]), true
		}
	}
	return rtt, ok
}
