package shaping

import (
	"encoding/gob"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/pltlab/pltlab/internal/cpushield"
	"github.com/pltlab/pltlab/shaping/capture"
	"github.com/pltlab/pltlab/shaping/emu"
	"golang.org/x/sys/unix"
)

// The emulator's own process (docs/design.md, "What still stalls the emulator"): an emu link's
// two forwarders run in a child process, this program's own executable started again with
// emuChildEnv set, whose every thread is SCHED_FIFO. In pltlab's process the runtime's monitor
// preempts a raw-waiting forwarder about 40 times a second, and the locked thread then waits
// until an ordinary thread hands its P back (stoplockedm, handoffp): 0.6 ms at p90, up to 49 ms
// behind a compiler, measured. In the child every thread that can take the P is real-time.
// The parent keeps the namespace, the devices and the routes; the child gets the two TUN
// descriptors and a socket, and answers the parent's requests (emuReq) on it: the counters,
// captures (the child writes the file), per-flow counts, its CPU time and stop.

// emuChildEnv names the environment variable that makes Child run the emulator process; its
// value is the parent's PID.
const emuChildEnv = "PLTLAB_EMU_CHILD"

// childPriority is the SCHED_FIFO priority of the emulator process's threads other than the
// forwarders (the runtime's monitor, the thread that takes a preempted forwarder's P, the
// request loop, a capture's writer): above every ordinary thread, below the idle-poll watchers
// (idlepoll.WatcherPriority, 88) and the forwarders (rtPriority, 89).
const childPriority = 1

// Descriptors of the emulator process (os/exec's ExtraFiles start at 3).
const (
	childHostFD   = 3
	childClientFD = 4
	childSockFD   = 5
)

// emuChildConfig is what the parent sends first: everything the forwarders are built from.
type emuChildConfig struct {
	Down, Up emu.Config
	MTU      int
	// BaseMono is the link's time base, CLOCK_MONOTONIC in ns, so that both processes put a
	// packet's times on one timeline (the parent judges lateness against host freezes on it).
	BaseMono int64
	Realtime bool
	// HostFast, ClientFast: the device was opened with the virtio-net header; HostUSO,
	// ClientUSO: it took the UDP segmentation offloads.
	HostFast, ClientFast, HostUSO, ClientUSO bool
	// ShieldCPU is the CPU the forwarders are pinned to (--shield-cpu), -1 for none.
	ShieldCPU int
	// Rebind, Client, Alt and Seed build the link's NAT (rebind=), when Rebind is enabled.
	Rebind emu.Rebind
	Client netip.Addr
	Alt    [2]netip.Addr
	Seed   int64
}

// emuOp is one request to the emulator process.
type emuOp uint8

// The requests.
const (
	opTake         emuOp = iota + 1 // both directions' counters since the last take
	opStats                         // packets per write and the forwarders' CPU time
	opCaptureStart                  // start a capture into Path
	opCaptureStop                   // stop it, completing the file with Secrets
	opFlowsOn                       // count packets per flow from now on
	opFlowsOff                      // stop counting; the answer lists every flow's counts
	opFlowCounts                    // one flow's counts (Key)
	opStop                          // stop the forwarders and exit
)

// emuReq is one request to the emulator process.
type emuReq struct {
	Op      emuOp
	Path    string
	Secrets []byte
	Key     capture.FlowKey
}

// emuResp is the emulator process's answer to one request (and, first of all, its "ready").
type emuResp struct {
	Err                string
	Down, Up           emu.Counters
	Capture            capture.Stats
	PerWrite           float64
	CPU                time.Duration
	FlowDown, FlowUp   capture.FlowCounts
	FlowsDown, FlowsUp []capture.FlowCount
	// Fast and Warn are the ready answer's: both directions run the fast path; what the
	// process could not get (real-time threads, locked memory), "" for nothing.
	Fast bool
	Warn string
}

// emuProc is the parent's handle on a link's emulator process.
type emuProc struct {
	cmd  *exec.Cmd
	sock *os.File
	mu   sync.Mutex // one request at a time
	enc  *gob.Encoder
	dec  *gob.Decoder
	fast bool
	warn string        // what the process could not get (emuResp.Warn)
	done chan struct{} // closed when the process has exited (waited for)
	err  error         // its exit, once done
}

// startEmuProc starts the emulator process for the link's two devices and waits until its
// forwarders run. Errors: the executable cannot be started, or the process fails to set up
// (its error), or says nothing within 10 s; then nothing of it is left.
func startEmuProc(cfg emuChildConfig, host, client *tunDev) (*emuProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("emulator process: find this program: %w", err)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("emulator process: socket pair: %w", err)
	}
	mine, theirs := os.NewFile(uintptr(pair[0]), "emu-parent"), os.NewFile(uintptr(pair[1]), "emu-child")
	defer theirs.Close()
	files, err := dupFiles(host.fd, client.fd)
	if err != nil {
		mine.Close()
		return nil, err
	}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", emuChildEnv, os.Getpid()), "GOGC=off", "GOMEMLIMIT=1GiB")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.ExtraFiles = append(files, theirs)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		mine.Close()
		return nil, fmt.Errorf("emulator process: start: %w", err)
	}
	p := &emuProc{cmd: cmd, sock: mine, enc: gob.NewEncoder(mine), dec: gob.NewDecoder(mine), done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	ready := make(chan error, 1)
	go func() {
		if err := p.enc.Encode(cfg); err != nil {
			ready <- err
			return
		}
		var r emuResp
		if err := p.dec.Decode(&r); err != nil {
			ready <- err
			return
		}
		p.fast, p.warn = r.Fast, r.Warn
		ready <- respErr(r)
	}()
	select {
	case err = <-ready:
	case <-time.After(10 * time.Second):
		err = errors.New("no answer in 10 s")
	}
	if err != nil {
		p.kill()
		return nil, fmt.Errorf("emulator process: %w", err)
	}
	return p, nil
}

// dupFiles duplicates the devices' descriptors for the child (os/exec's ExtraFiles puts a file
// in blocking mode; the child makes its copies non-blocking again).
func dupFiles(fds ...int) ([]*os.File, error) {
	var files []*os.File
	for _, fd := range fds {
		d, err := unix.Dup(fd)
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, fmt.Errorf("emulator process: duplicate a device: %w", err)
		}
		files = append(files, os.NewFile(uintptr(d), "tun"))
	}
	return files, nil
}

// respErr is the error an answer carries, nil for none.
func respErr(r emuResp) error {
	if r.Err == "" {
		return nil
	}
	return errors.New(r.Err)
}

// call sends req and returns the answer. Errors: the process is gone or the answer's own.
func (p *emuProc) call(req emuReq) (emuResp, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var r emuResp
	if err := p.enc.Encode(req); err != nil {
		return r, fmt.Errorf("emulator process: %w", err)
	}
	if err := p.dec.Decode(&r); err != nil {
		return r, fmt.Errorf("emulator process: %w", err)
	}
	return r, respErr(r)
}

// stop asks the process to stop its forwarders and exit, and waits for it (killed after 5 s).
func (p *emuProc) stop() error {
	select {
	case <-p.done: // ended already (its parent's socket closed, or killed): its exit says how
		p.sock.Close()
		return p.err
	default:
	}
	_, err := p.call(emuReq{Op: opStop})
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.kill()
		return errors.New("emulator process: did not exit in 5 s after stop: killed")
	}
	p.sock.Close()
	if err != nil {
		return err
	}
	return p.err
}

// kill ends the process at once and waits for it.
func (p *emuProc) kill() {
	p.cmd.Process.Kill()
	<-p.done
	p.sock.Close()
}

// childConfig is the emulator process's configuration for l's forwarders.
func (l *EmuLink) childConfig(down, up emu.Config, base int64, o options) emuChildConfig {
	cfg := emuChildConfig{Down: down, Up: up, MTU: l.spec.MTU, BaseMono: base, Realtime: o.realtime,
		HostFast: l.hostDev.offload(), ClientFast: l.clientDev.offload(), HostUSO: l.hostDev.uso, ClientUSO: l.clientDev.uso,
		ShieldCPU: -1, Rebind: l.spec.Rebind, Client: l.client, Alt: natAddrs(l.client), Seed: natSeed(l.spec.Seed)}
	if cpu, ok := cpushield.Current(); ok {
		cfg.ShieldCPU = cpu
	}
	return cfg
}

// monoNow is CLOCK_MONOTONIC in ns, the clock both processes share (Go's own monotonic
// readings count from each process's start).
func monoNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
