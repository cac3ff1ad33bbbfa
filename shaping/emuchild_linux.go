package shaping

import (
	"encoding/gob"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/pltlab/pltlab/internal/idlepoll"
	"github.com/pltlab/pltlab/shaping/capture"
	"golang.org/x/sys/unix"
	wgtun "golang.zx2c4.com/wireguard/tun"
)

// Child runs this process as what pltlab started it as, and returns its exit status with ok
// true once that is done; the caller exits with it. That is a link's emulator process (emu links
// opened by a program that called Child run their forwarders in one, unless EnvEmuProcess is
// "shared" when Child is called), or an idle-poll spinner or watcher (idlepoll.Child).
// Otherwise it returns at once, ok false. A program that opens emu links calls it first in main
// (a test binary in TestMain); the package runs nothing at its import.
func Child() (code int, ok bool) {
	if v, ok := os.LookupEnv(emuChildEnv); ok {
		return runEmuChild(v), true
	}
	markAsked(os.Getenv(EnvEmuProcess) != ProcessShared)
	return idlepoll.Child()
}

// runEmuChild is the emulator process: it makes every thread of its own real-time, reads its
// configuration from the socket, starts the forwarders, says it is ready and answers requests
// until the parent asks it to stop or goes away. 0 when it stopped as asked, 1 on an error.
func runEmuChild(parent string) int {
	runtime.LockOSThread()
	if pid, _ := strconv.Atoi(parent); pid != os.Getppid() {
		return 1 // the parent died before this process could watch it (Pdeathsig)
	}
	runtime.GOMAXPROCS(runtime.NumCPU() + ProcsPerLink)
	sock := os.NewFile(childSockFD, "emu-sock")
	enc, dec := gob.NewEncoder(sock), gob.NewDecoder(sock)
	var cfg emuChildConfig
	if err := dec.Decode(&cfg); err != nil {
		fmt.Fprintln(os.Stderr, "pltlab emulator process: read the configuration:", err)
		return 1
	}
	// Every thread real-time, now and later: a thread the runtime starts inherits the policy
	// of the one that creates it (clone(2)), and all of them are real-time from here on. A
	// user who may not use SCHED_FIFO (rootless) gets ordinary threads, as the forwarders do
	// then (TuneThread), and the parent says so.
	var ready emuResp
	if cfg.Realtime {
		if err := allThreadsFIFO(childPriority); err != nil {
			ready.Warn = err.Error()
		}
	}
	p, err := childPair(cfg)
	if err != nil {
		enc.Encode(emuResp{Err: err.Error()})
		return 1
	}
	p.start(nil)
	// Its pages resident and locked, now (the program's text, the pipes' buffers) and as they
	// are touched later: under memory pressure the kernel would otherwise reclaim the text of
	// an idle forwarder and make its next wake-up a major fault (docs/design.md).
	if err := unix.Mlockall(unix.MCL_CURRENT); err == nil {
		unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT)
	} else {
		ready.Warn = strings.TrimPrefix(ready.Warn+"; ", "; ") + "mlockall: " + err.Error()
	}
	ready.Fast = p.fast()
	if err := enc.Encode(ready); err != nil {
		p.halt()
		return 1
	}
	return serveEmu(p, enc, dec)
}

// childPair builds the forwarders from cfg and the descriptors the parent passed.
func childPair(cfg emuChildConfig) (*fwdPair, error) {
	host, err := childDev(childHostFD, cfg.HostFast, cfg.HostUSO)
	if err != nil {
		return nil, err
	}
	client, err := childDev(childClientFD, cfg.ClientFast, cfg.ClientUSO)
	if err != nil {
		return nil, err
	}
	// The parent's base, on this process's clock: time.Now's monotonic reading counts from
	// this process's start, CLOCK_MONOTONIC from the machine's.
	base := time.Now().Add(-time.Duration(monoNow() - cfg.BaseMono))
	p, err := newPair(cfg.Down, cfg.Up, host, client, cfg.MTU, base, cfg.Realtime, newNAT(cfg.Rebind, cfg.Client, cfg.Alt, cfg.Seed))
	if err != nil {
		return nil, fmt.Errorf("forwarder: %w", err)
	}
	if cfg.ShieldCPU >= 0 {
		p.down.pinCPU, p.up.pinCPU = cfg.ShieldCPU, cfg.ShieldCPU
	}
	return p, nil
}

// childDev is the device at descriptor fd, as the parent opened it: with the virtio-net header
// (fast) or not, with the UDP segmentation offloads (uso) or not.
func childDev(fd int, fast, uso bool) (*tunDev, error) {
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, fmt.Errorf("device %d: %w", fd, err)
	}
	if !fast {
		return &tunDev{fd: fd}, nil
	}
	nt, _, err := wgtun.CreateUnmonitoredTUNFromFD(fd)
	if err != nil {
		return nil, fmt.Errorf("device %d with offloads: %w", fd, err)
	}
	return &tunDev{fd: fd, nt: nt, uso: uso}, nil
}

// serveEmu answers the parent's requests until opStop or the socket's end (the parent gone).
func serveEmu(p *fwdPair, enc *gob.Encoder, dec *gob.Decoder) int {
	for {
		var req emuReq
		if err := dec.Decode(&req); err != nil {
			p.halt()
			return 0
		}
		r := answerEmu(p, req)
		if req.Op == opStop {
			p.halt()
			enc.Encode(r)
			return 0
		}
		if err := enc.Encode(r); err != nil {
			p.halt()
			return 0
		}
	}
}

// answerEmu carries out one request other than opStop.
func answerEmu(p *fwdPair, req emuReq) (r emuResp) {
	var err error
	switch req.Op {
	case opTake:
		r.Down, r.Up = p.take()
	case opStats:
		r.PerWrite, r.CPU = p.packetsPerWrite(), p.cpu()
	case opCaptureStart:
		err = p.startCapture(req.Path)
	case opCaptureStop:
		r.Capture, err = p.stopCapture(req.Secrets)
	case opFlowsOn:
		p.countFlows(capture.NewFlowCounter())
	case opFlowsOff:
		if c := p.counter; c != nil {
			p.countFlows(nil)
			r.FlowsDown, r.FlowsUp = c.All()
		}
	case opFlowCounts:
		if c := p.counter; c != nil {
			r.FlowDown, r.FlowUp = c.Counts(req.Key)
		}
	case opStop:
	default:
		err = fmt.Errorf("unknown request %d", req.Op)
	}
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// allThreadsFIFO puts every thread of this process in SCHED_FIFO at prio (sched_setscheduler(2)
// per task of /proc/self/task), twice, so that a thread started during the first pass is not
// missed.
func allThreadsFIFO(prio int) error {
	for range 2 {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("emulator process: list threads: %w", err)
		}
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			param := struct{ priority int32 }{int32(prio)}
			if _, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(tid), unix.SCHED_FIFO, uintptr(unsafe.Pointer(&param))); e != 0 && e != unix.ESRCH {
				return fmt.Errorf("emulator process: SCHED_FIFO %d for thread %d: %w", prio, tid, e)
			}
		}
	}
	return nil
}
