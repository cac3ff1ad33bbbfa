package shaping

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/pltlab/pltlab/internal/cpushield"
	"github.com/pltlab/pltlab/shaping/capture"
	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/internal/rtwait"
	"golang.org/x/sys/unix"
)

// Forwarder tuning.
const (
	// readBatch bounds the packets read per wake-up before due packets are released again.
	readBatch = 64
	// maxPoll bounds one wait, so a stop request is seen even if a wake-up were lost.
	maxPoll = 100 * time.Millisecond
	// rtPriority is the SCHED_FIFO priority of forwarder threads (WithRealtime(false) skips it):
	// with it, wake-ups were 20-80 us late at p99 under full CPU load here, without it 0.1-11 ms.
	// A busy forwarder leaves SCHED_FIFO (see governor). 89: above the idle-poll watchers
	// (idlepoll.WatcherPriority, 88), which wake every millisecond on every CPU and must never
	// delay a release (until 2026-12-06 the forwarders ran at 10, below them, against what
	// the watchers' design says).
	rtPriority = 89
	// spinLead is how long before a release the forwarder stops sleeping and spins; spinEvery
	// bounds how often it may spin, so spinning costs at most spinLead/spinEvery of a core (4%).
	spinLead  = 80 * time.Microsecond
	spinEvery = 2 * time.Millisecond
)

// forwarder moves one direction of a link: it reads packets from src, passes them through its
// emu.Pipe and writes them to dst when due. It runs on its own locked OS thread, waiting in
// ppoll(2) with a nanosecond timeout until the next delivery or the next arriving packet.
//
// On the fast path (both devices with the virtio-net header) one read returns a TSO or UDP GSO
// super-packet already split into its MTU-sized packets (wireguard-go's gsoSplit, which also
// completes the checksums), and each packet is offered to the pipe on its own: the link model
// queues, serializes, loses, marks and captures wire packets, never super-packets. The packets
// due at one wake-up are grouped by flow (GRO, gro.go) and each group is written straight from
// the pipe's buffers with one writev(2), so the receiving stack gets one large segment per flow
// and batch, and a packet is copied once in user space (by the split) on its way through.
//
// The forwarder never waits through the Go scheduler while its link is open, when GOMAXPROCS
// leaves it a P of its own (rtwait.Acquire): it blocks in a raw ppoll(2) (rtwait.Ppoll), so its
// goroutine stays running in Go's view and keeps its P, and it shares no lock with other
// goroutines: TakeCounters asks for the counters through takeReq and the wake eventfd, and the
// forwarder answers at its next wake-up (answerTake). See docs/design.md, "The emulator's
// stalls", for the 36-62 ms stalls this removes.
type forwarder struct {
	pipe *emu.Pipe
	src  *tunDev // device packets come from
	dst  *tunDev // device due packets go to
	wake int     // eventfd that interrupts the wait (stop)
	// waitCPU is the CPU the forwarder last went to sleep on (wait), -1 before its first wait.
	waitCPU int
	fast    bool          // both devices on the fast path
	lag     time.Duration // fast path: how late a packet with others behind it may leave (releaseLag)

	rbufs  [][]byte // fast path: pipe buffers a read splits into (tunBatch)
	rsizes []int
	gro    coalescer    // fast path: groups the due packets per flow (gro.go)
	due    [][]byte     // fast path: the packets of the batch being written, recycled after it
	iov    []unix.Iovec // fast path: one coalesced write's iovecs
	poll1  []unix.PollFd
	mtu    int
	base   time.Time
	stop   *atomic.Bool
	tid    atomic.Int32
	rt     bool // SCHED_FIFO allowed (WithRealtime), fixed when the link opens
	// pinCPU is the CPU the thread is pinned to in an emulator process under a shield (the
	// parent's --shield-cpu), -1 to ask cpushield in this process.
	pinCPU int
	raw    bool // waits raw (rtwait.Acquire, set before run starts)

	// takeMu serializes takers (TakeCounters' goroutines, never the forwarder); takeReq is the
	// number of the latest request, takeAck that of the latest answer, whose counters are in
	// snap (written by the forwarder before takeAck). running is set while run may touch pipe.
	takeMu           sync.Mutex
	takeReq, takeAck atomic.Uint64
	snap             emu.Counters
	running          atomic.Bool

	writes, written atomic.Uint64 // fast path: writes made and packets they carried

	tap    atomic.Pointer[func(pkt []byte, dropped bool)] // per-flow counting (CountFlows), nil = off
	capTap *atomic.Pointer[capture.Tap]                   // pcapng capture hook (nil or unset: none); see tap_linux.go
	dir    capture.TapDir

	// natOutbound and natInbound are the link's NAT (rebind=), nil without one: the up
	// forwarder (natOutbound) rewrites each packet it reads (Outbound) before the pipe sees it,
	// the down forwarder (natInbound) restores each packet it releases (Inbound, Restore) after
	// the capture saw it, so the capture shows the server's view both ways (rebind_linux.go).
	natOutbound, natInbound *emu.NAT
}

// writeBatch bounds the due packets coalesced and written together (fast path); a longer run
// of due packets (after a stall) is written in several batches, in order.
const writeBatch = tunBatch

func newForwarder(cfg emu.Config, src, dst *tunDev, mtu int, base time.Time, stop *atomic.Bool, rt bool) (*forwarder, error) {
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	cfg.BufSize = mtu + 1
	f := &forwarder{pipe: emu.NewPipe(cfg), src: src, dst: dst, wake: wake, mtu: mtu, base: base, stop: stop, rt: rt, waitCPU: -1, pinCPU: -1}
	f.fast = src.offload() && dst.offload()
	f.lag = releaseLag(cfg.Rate, mtu)
	if f.fast {
		f.rbufs, f.rsizes = make([][]byte, tunBatch), make([]int, tunBatch)
		for i := range f.rbufs {
			f.rbufs[i] = f.pipe.Buffer()
		}
		f.gro.udp = dst.uso
		f.due = make([][]byte, 0, writeBatch)
		f.iov = make([]unix.Iovec, 0, groMaxSegs+1)
		f.poll1 = []unix.PollFd{{Fd: int32(src.fd), Events: unix.POLLIN}}
	}
	return f, nil
}

func (f *forwarder) now() time.Duration { return time.Since(f.base) }

// run is the forwarding loop; it returns when stop is set and wake is signalled.
func (f *forwarder) run() {
	runtime.LockOSThread() // never unlocked: the tuned thread exits with the goroutine
	f.pin()                // onto the CPU kept for the emulator, under --shield-cpu
	f.tid.Store(int32(unix.Gettid()))
	nameThread()
	TuneThread(f.rt)
	defer func() {
		f.answerTake() // a request made while the loop ended
		f.running.Store(false)
		if f.raw {
			rtwait.Release()
		}
	}()
	fds := []unix.PollFd{{Fd: int32(f.src.fd), Events: unix.POLLIN}, {Fd: int32(f.wake), Events: unix.POLLIN}}
	var lastSpin time.Duration
	gov := newGovernor(f.rt, f.now(), threadCPU, setRT)
	for !f.stop.Load() {
		f.answerTake()
		f.release()
		wait, ok := f.untilNext()
		spin := ok && f.now()-lastSpin >= spinEvery
		if spin && wait > 0 && wait <= spinLead {
			f.spinUntil(fds, f.now()+wait)
			lastSpin = f.now()
			continue
		}
		if spin {
			wait -= spinLead
		}
		ready := f.wait(fds, wait, ok, &gov)
		f.read(ready)
	}
}

// pin pins the forwarder's thread to the shielded CPU, if there is one.
func (f *forwarder) pin() {
	if f.pinCPU < 0 {
		cpushield.PinThread()
		return
	}
	var set unix.CPUSet
	set.Set(f.pinCPU)
	unix.SchedSetaffinity(0, &set)
}

// A raw-waiting forwarder's goroutine never blocks in Go's view, so the runtime's monitor
// (sysmon) preempts it once it has run 10 ms on one scheduling tick (forcePreemptNS in
// runtime/proc.go): its raw ppoll returns EINTR, the goroutine yields at its next function call
// and resumes on the P the runtime hands back (tens of microseconds with a spare P). Yielding
// by itself every 2 or 5 ms at a moment with no packet due changed neither the largest nor the
// 99th-percentile lateness measurably (BenchmarkReleaseStall, BENCHMARKS.md), so it does not.

// answerTake answers a pending TakeCounters request: the counters since the last take go to
// snap, then takeAck says so. Only the forwarder's goroutine calls it while running is set.
func (f *forwarder) answerTake() {
	if r := f.takeReq.Load(); r != f.takeAck.Load() {
		f.snap = f.pipe.Take()
		f.takeAck.Store(r)
	}
}

// wait blocks in ppoll(2) for up to wait (maxPoll when the pipe is empty) or until a packet
// arrives, and accounts the time for the governor. ready is true when ppoll reported a packet
// waiting on src (false when it was not asked or timed out).
func (f *forwarder) wait(fds []unix.PollFd, wait time.Duration, ok bool, gov *governor) (ready bool) {
	gov.sleep(f.now())
	if !ok || wait > 0 {
		if !ok {
			wait = maxPoll
		}
		ts := unix.NsecToTimespec(int64(min(wait, maxPoll)))
		f.waitCPU = thisCPU()
		if rtwait.Ppoll(fds, &ts, f.raw) > 0 {
			ready = fds[0].Revents&unix.POLLIN != 0
			if fds[1].Revents&unix.POLLIN != 0 {
				rtwait.DrainEventfd(f.wake)
			}
		}
	}
	return ready
}

// pending polls fds without waiting and reports whether the first has a packet waiting (a raw
// system call when the forwarder waits raw: rtwait).
func (f *forwarder) pending(fds []unix.PollFd) bool {
	var zero unix.Timespec
	return rtwait.Ppoll(fds, &zero, f.raw) > 0 && fds[0].Revents&unix.POLLIN != 0
}

// spinUntil busy-waits until due, still reading arriving packets, so the release is not late
// by the wake-up latency of ppoll (tens of microseconds on a VM whose vCPU was halted).
func (f *forwarder) spinUntil(fds []unix.PollFd, due time.Duration) {
	for f.now() < due && !f.stop.Load() {
		if f.pending(fds[:1]) {
			f.read(true)
		}
	}
}

// untilNext is the time until the next delivery; ok is false when the pipe is empty. On the
// fast path, when more packets wait behind the next one, it is the time until f.lag past that
// delivery, so that one wake-up releases several packets in one coalesced write (each ppoll
// wake-up costs a context switch: at 1 Gbit/s a 1500-byte packet leaves every 12 us); a lone
// packet (an idle link's probe) still leaves at its time. The lag shows in the emulator's
// release lateness.
func (f *forwarder) untilNext() (time.Duration, bool) {
	due, ok := f.pipe.Next()
	if !ok {
		return 0, false
	}
	if f.fast && f.pipe.Len() > 1 {
		due += f.lag
	}
	return max(due-f.now(), 0), true
}

// Release batching of the fast path: a packet with others behind it may leave up to the lag
// late, so that one wake-up writes a batch. On a direction where lagPackets MTU-sized packets
// take at most maxLag (960 Mbit/s and faster with 1500-byte packets), the lag is the link time
// of one full GRO group (groMaxLen bytes), at most maxLag: 200 us at 1 Gbit/s, 52 us at
// 10 Gbit/s, so the batches at 10 Gbit/s fill 64 KiB groups instead of 16 packets. Slower
// directions batch nothing (the lag would add delay for little: packets leave on time); an
// unlimited direction batches over unlimitedLag. Measured at 1 Gbit/s (load average 20):
// 0.92 forwarder CPU-s per Gbit with a 50 us lag, 0.48 with 192 us.
const (
	lagPackets   = 16
	maxLag       = 200 * time.Microsecond
	unlimitedLag = 50 * time.Microsecond
)

// releaseLag is the fast path's batching lag for a direction of rate bit/s and mtu bytes.
func releaseLag(rate int64, mtu int) time.Duration {
	if rate <= 0 {
		return unlimitedLag
	}
	linkTime := func(bytes int) time.Duration { return time.Duration(float64(bytes*8) / float64(rate) * 1e9) }
	if linkTime(lagPackets*mtu) > maxLag {
		return 0
	}
	return min(linkTime(groMaxLen), maxLag)
}

// release writes every packet that is due. On the fast path, while more packets wait behind
// the next due one, it writes nothing until that one is f.lag late (untilNext's wake-up time),
// so a wake-up for an arriving packet does not cut a batch short: every wake-up that writes
// releases all packets due within the lag at once, and none leaves later than the lag (plus the
// wake-up's own latency, which the release lateness records).
func (f *forwarder) release() {
	if f.fast {
		if due, ok := f.pipe.Next(); ok && f.lag > 0 && f.pipe.Len() > 1 && f.now() < due+f.lag {
			return
		}
		f.releaseBatch()
		return
	}
	now := f.now()
	for pkt, ok := f.pipe.Pop(now); ok; pkt, ok = f.pipe.Pop(now) {
		if !f.natIn(now, pkt) {
			continue
		}
		if _, err := unix.Write(f.dst.fd, pkt); err != nil {
			f.pipe.DropOther()
		}
		f.pipe.Recycle(pkt)
	}
	f.tagLate()
}

// tagLate names the CPU this round of releases ran on, and the one the forwarder slept on
// before it (waitCPU), for the late ones among them (the pipe lists those; package idlepoll
// then knows whether the host held either CPU meanwhile). getcpu(2) runs here only after a
// late release.
func (f *forwarder) tagLate() {
	if !f.pipe.UntaggedLate() {
		return
	}
	if cpu := thisCPU(); cpu >= 0 {
		f.pipe.TagLate(cpu, f.waitCPU)
	}
}

// thisCPU is the CPU the calling thread runs on (getcpu(2), a raw system call), -1 when unknown.
func thisCPU() int {
	var cpu uint32
	if _, _, e := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); e != 0 {
		return -1
	}
	return int(cpu)
}

// releaseBatch (fast path) groups every due packet per flow (coalescer) and writes each group
// straight from the pipe's buffers with one writev(2), writeBatch packets at a time; the
// capture sees each wire packet before its group's first packet is rewritten.
func (f *forwarder) releaseBatch() {
	now := f.now()
	for pkt, ok := f.pipe.Pop(now); ok; pkt, ok = f.pipe.Pop(now) {
		if !f.natIn(now, pkt) {
			continue
		}
		f.gro.add(pkt, csumOf(pkt))
		f.due = append(f.due, pkt)
		if len(f.due) == writeBatch {
			f.flush()
		}
	}
	if len(f.due) > 0 {
		f.flush()
	}
	f.tagLate()
}

// flush writes the batch's groups, each a [virtio-net header][first packet][payloads of the
// others] writev(2), and recycles its packets; each failed write (of one packet, or of several
// coalesced ones) counts as one drop outside the model.
func (f *forwarder) flush() {
	groups, hdrs := f.gro.finish()
	for i := range groups {
		g := &groups[i]
		iov := append(f.iov[:0], iovec(hdrs[i][:]), iovec(g.pkts[0]))
		hl := g.iphLen + g.l4Len
		for _, p := range g.pkts[1:] {
			iov = append(iov, iovec(p[hl:]))
		}
		if writev(f.dst.fd, iov) != nil {
			f.pipe.DropOther()
		}
	}
	f.writes.Add(uint64(len(groups)))
	f.written.Add(uint64(len(f.due)))
	for _, p := range f.due {
		f.pipe.Recycle(p)
	}
	f.due = f.due[:0]
	f.gro.reset()
}

// iovec describes b for writev(2).
func iovec(b []byte) unix.Iovec {
	v := unix.Iovec{Base: unsafe.SliceData(b)}
	v.SetLen(len(b))
	return v
}

// writev writes iov to fd in one writev(2) (a TUN device takes each call as one packet),
// retrying when interrupted. It allocates nothing, unlike unix.Writev for more than 8 buffers.
func writev(fd int, iov []unix.Iovec) error {
	for {
		_, _, e := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(iov))), uintptr(len(iov)))
		if e != unix.EINTR {
			if e != 0 {
				return e
			}
			return nil
		}
	}
}

// csumOf is the checksum state the read side stored in the byte past pkt in its pipe buffer.
func csumOf(pkt []byte) csumState { return csumState(pkt[:len(pkt)+1][len(pkt)]) }

// setCsum stores st in the byte past pkt in its pipe buffer (one byte longer than the MTU).
func setCsum(pkt []byte, st csumState) { pkt[:len(pkt)+1][len(pkt)] = byte(st) }

// read takes up to readBatch waiting packets (fast path: super-packets) from src into the pipe;
// ready says poll(2) has just reported one waiting.
func (f *forwarder) read(ready bool) {
	if f.fast {
		f.readBatch(ready)
		return
	}
	for i := 0; i < readBatch; i++ {
		buf := f.pipe.Buffer()
		n, err := unix.Read(f.src.fd, buf)
		if err != nil || n <= 0 || n > f.mtu {
			f.pipe.Recycle(buf)
			if err == nil || (err != unix.EAGAIN && err != unix.EINTR) {
				f.pipe.DropOther()
			}
			if err != nil {
				return
			}
			continue
		}
		at := f.now()
		f.natOut(at, buf[:n])
		v := f.pipe.Offer(at, buf[:n])
		if tap := f.tap.Load(); tap != nil { // a dropped buffer is recycled but not yet reused
			(*tap)(buf[:n], v != emu.Queued)
		}
		f.tapped(at, buf[:n], tapEvent(v))
	}
}

// readBatch (fast path) reads up to readBatch super-packets, each split into its MTU-sized
// packets, and offers every packet to the pipe with the arrival time of its super-packet. It
// reads only while poll(2) says a packet waits: wireguard-go's read would park the locked
// thread in the Go poller on an empty device. When ready, the caller's poll already said so for
// the first read (one poll(2) less per wake-up: an ACK stream wakes a forwarder per packet).
func (f *forwarder) readBatch(ready bool) {
	for i := 0; i < readBatch; i++ {
		if (i > 0 || !ready) && !f.pending(f.poll1) {
			return
		}
		n, err := f.src.nt.Read(f.rbufs, f.rsizes, 0)
		if err != nil {
			f.pipe.DropOther() // a super-packet the kernel handed over that could not be split
			continue
		}
		at := f.now()
		for j := range n {
			pkt := f.rbufs[j][:f.rsizes[j]]
			f.rbufs[j] = f.pipe.Buffer()
			if len(pkt) > f.mtu || len(pkt) == 0 {
				f.pipe.Recycle(pkt)
				f.pipe.DropOther()
				continue
			}
			// A packet split from a super-packet has the checksum the split computed; one read
			// alone may carry its sender's, so it is verified before it may coalesce.
			f.natOut(at, pkt)
			st := csumValid
			if n == 1 {
				st = readCsumState(pkt, f.gro.udp)
			}
			setCsum(pkt, st)
			v := f.pipe.Offer(at, pkt)
			if tap := f.tap.Load(); tap != nil {
				(*tap)(pkt, v != emu.Queued)
			}
			f.tapped(at, pkt, tapEvent(v))
		}
	}
}

// take returns the pipe's counters since the previous take. While the forwarder runs it asks
// the forwarder for them (takeReq, answered by answerTake at its next wake-up, which the wake
// eventfd brings at once) and polls for the answer, so the forwarder never waits for a lock
// that a goroutine of ordinary priority holds; otherwise it reads the pipe itself.
func (f *forwarder) take() emu.Counters {
	f.takeMu.Lock()
	defer f.takeMu.Unlock()
	seq := f.takeReq.Add(1)
	if f.running.Load() {
		f.interrupt()
	}
	for f.takeAck.Load() < seq {
		if !f.running.Load() { // not started, or ended: the pipe is no one else's
			if f.takeAck.Load() < seq {
				f.snap = f.pipe.Take()
				f.takeAck.Store(seq)
			}
			break
		}
		time.Sleep(takePoll)
	}
	return f.snap
}

// takePoll is how often take looks for the forwarder's answer.
const takePoll = 20 * time.Microsecond

// packetsPerWrite is the fast path's packets per write since the link opened (0 before any).
func (f *forwarder) packetsPerWrite() float64 {
	w := f.writes.Load()
	if w == 0 {
		return 0
	}
	return float64(f.written.Load()) / float64(w)
}

// cpu is the CPU time the forwarder thread has used (from /proc/self/task/TID/schedstat).
func (f *forwarder) cpu() time.Duration {
	tid := f.tid.Load()
	if tid == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(int(tid)) + "/schedstat")
	if err != nil {
		return 0
	}
	ns, _ := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
	return time.Duration(ns)
}

// interrupt makes run return soon after stop is set.
func (f *forwarder) interrupt() {
	one := [8]byte{1}
	unix.Write(f.wake, one[:])
}

// forwarderThreadName is the name (comm, /proc/PID/task/TID/comm) of every forwarder thread,
// so tools outside the process (top -H, perf, scripts/iperf-link.sh) can tell the emulator's
// CPU time from the rest of the process's.
const forwarderThreadName = "pltlab-emu"

// nameThread names the calling thread forwarderThreadName (PR_SET_NAME; an error is ignored).
func nameThread() {
	name := [16]byte{}
	copy(name[:15], forwarderThreadName)
	unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&name[0])), 0, 0, 0)
}

// TuneThread sets 1 ns timer slack and, when rt, SCHED_FIFO on the calling thread (errors
// ignored: it then runs as a normal thread, with later wake-ups). The caller holds the thread
// (runtime.LockOSThread); the forwarders and the link check's RTT probes (shaping/selfcheck) run
// on such threads.
func TuneThread(rt bool) {
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if rt {
		setRT(true)
	}
}

// setRT puts the calling thread in SCHED_FIFO (on) or back in SCHED_OTHER at nice -10 (off).
func setRT(on bool) {
	policy, param := 0, struct{ priority int32 }{0}
	if on {
		policy, param.priority = unix.SCHED_FIFO, rtPriority
	}
	unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, uintptr(policy), uintptr(unsafe.Pointer(&param)))
	if !on {
		unix.Setpriority(unix.PRIO_PROCESS, 0, -10)
	}
}

// Governor thresholds: a forwarder busy more than busyHigh of a window leaves SCHED_FIFO, one
// busy less than busyLow returns to it. The kernel throttles real-time threads that use more
// than sched_rt_runtime_us per sched_rt_period_us (950 of 1000 ms by default) for the rest of
// the period: measured here as 50-75 ms stalls of the other direction at 1 Gbit/s.
const (
	govWindow         = 100 * time.Millisecond
	busyHigh, busyLow = 0.5, 0.25
)

// governor tracks how busy a forwarder thread is and switches its scheduling class. Busy is the
// thread's own CPU time over a window (CLOCK_THREAD_CPUTIME_ID), what the kernel's real-time
// throttling counts. Until 2026-12-06 it was the wall time from each wake-up to the next wait,
// which also counts the time the host stopped the virtual CPU under a running forwarder: beside
// a memory-heavy process (a stop of 50-100 ms, docs/design.md "Host stalls: judged on their
// own") the governor took the stop for work and put the forwarder in SCHED_OTHER, where it then
// waited behind ordinary threads for whole scheduler slices (carlucci2015 links refused with
// 55-107 stalls per minute, none of them a stop the watchers saw).
type governor struct {
	allowed bool // SCHED_FIFO allowed at all (WithRealtime)
	rt      bool
	// start is the window's start on the forwarder's clock, cpuStart the thread's CPU time then.
	start, cpuStart time.Duration
	// cpu reads the thread's CPU time (threadCPU) and set switches the thread's class (setRT):
	// seams for the tests.
	cpu func() time.Duration
	set func(rt bool)
}

// newGovernor starts a governor's first window at now.
func newGovernor(rt bool, now time.Duration, cpu func() time.Duration, set func(bool)) governor {
	return governor{allowed: rt, rt: rt, start: now, cpuStart: cpu(), cpu: cpu, set: set}
}

// sleep is called before ppoll: at the end of a window it compares the thread's CPU time in it
// with the thresholds and switches the class.
func (g *governor) sleep(now time.Duration) {
	if span := now - g.start; span >= govWindow && g.allowed {
		c := g.cpu()
		frac := float64(c-g.cpuStart) / float64(span)
		if g.rt && frac > busyHigh || !g.rt && frac < busyLow {
			g.rt = !g.rt
			g.set(g.rt)
		}
		g.start, g.cpuStart = now, c
	}
}

// threadCPU is the calling thread's CPU time (clock_gettime(CLOCK_THREAD_CPUTIME_ID), a raw
// system call: the forwarder never enters Go's syscall state); 0 when it cannot be read.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if _, _, e := unix.RawSyscall(unix.SYS_CLOCK_GETTIME, unix.CLOCK_THREAD_CPUTIME_ID, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}
