package shaping

import (
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pltlab/pltlab/shaping/capture"
	"github.com/pltlab/pltlab/shaping/emu"
	"github.com/pltlab/pltlab/shaping/internal/rtwait"
	"golang.org/x/sys/unix"
)

// fwdPair is a link's two forwarders (down: host device to client device, up: the other way)
// with what hangs on them: the capture slot and per-flow counting. It runs in whichever process
// holds them: pltlab's own (EmuLink without an emulator process) or the emulator process.
type fwdPair struct {
	down, up *forwarder
	stop     atomic.Bool
	wg       sync.WaitGroup
	started  bool
	tap      atomic.Pointer[capture.Tap]
	capMu    sync.Mutex
	cap      *capture.Session
	counter  *capture.FlowCounter // per-flow counting (countFlows), nil when off
}

// newPair builds the forwarders of a link whose host-side device is host and client-side
// device client, with the direction configs down and up, sharing one NAT when nat is not nil.
func newPair(down, up emu.Config, host, client *tunDev, mtu int, base time.Time, rt bool, nat *emu.NAT) (*fwdPair, error) {
	p := &fwdPair{}
	var err error
	if p.down, err = newForwarder(down, host, client, mtu, base, &p.stop, rt); err != nil {
		return nil, err
	}
	if p.up, err = newForwarder(up, client, host, mtu, base, &p.stop, rt); err != nil {
		unix.Close(p.down.wake)
		return nil, err
	}
	p.down.capTap, p.down.dir = &p.tap, capture.TapDown
	p.up.capTap, p.up.dir = &p.tap, capture.TapUp
	if nat != nil {
		p.up.natOutbound, p.down.natInbound = nat, nat
	}
	return p, nil
}

// start runs both forwarders, each on a goroutine locked to its own thread; log (nil: none)
// warns when GOMAXPROCS leaves them no P of their own.
func (p *fwdPair) start(log *slog.Logger) {
	p.started = true
	for _, f := range []*forwarder{p.down, p.up} {
		p.wg.Add(1)
		f.running.Store(true) // before run: a take from now on is the forwarder's to answer
		f.raw = rtwait.Acquire()
		go func() { defer p.wg.Done(); f.run() }()
	}
	if (!p.down.raw || !p.up.raw) && log != nil {
		log.Warn("GOMAXPROCS leaves the link's forwarders no P of their own: they wait through the Go scheduler and may stall (raise GOMAXPROCS by shaping.ProcsPerLink per open link)",
			"gomaxprocs", runtime.GOMAXPROCS(0), "cpus", runtime.NumCPU())
	}
}

// fast reports whether both directions run the fast path.
func (p *fwdPair) fast() bool { return p.down.fast && p.up.fast }

// take returns both directions' model counters since the previous take.
func (p *fwdPair) take() (down, up emu.Counters) { return p.down.take(), p.up.take() }

// packetsPerWrite is the down direction's packets per write since the link opened.
func (p *fwdPair) packetsPerWrite() float64 { return p.down.packetsPerWrite() }

// cpu is the CPU time both forwarder threads have used.
func (p *fwdPair) cpu() time.Duration { return p.down.cpu() + p.up.cpu() }

// startCapture starts recording both directions into the pcapng file path.
func (p *fwdPair) startCapture(path string) error {
	p.capMu.Lock()
	defer p.capMu.Unlock()
	if p.cap != nil {
		return capture.ErrRunning
	}
	c, err := capture.Start(path)
	if err != nil {
		return err
	}
	p.cap = c
	t := capture.Tap(c.Tap)
	p.tap.Store(&t)
	return nil
}

// stopCapture stops the running capture and completes its file with secrets.
func (p *fwdPair) stopCapture(secrets []byte) (capture.Stats, error) {
	p.capMu.Lock()
	defer p.capMu.Unlock()
	c := p.cap
	if c == nil {
		return capture.Stats{}, capture.ErrNotRunning
	}
	p.tap.Store(nil)
	p.cap = nil
	return c.Stop(secrets)
}

// countFlows attaches c to both forwarders (nil detaches).
func (p *fwdPair) countFlows(c *capture.FlowCounter) {
	p.counter = c
	for _, d := range []struct {
		f    *forwarder
		down bool
	}{{p.down, true}, {p.up, false}} {
		if c == nil {
			d.f.tap.Store(nil)
			continue
		}
		down := d.down
		tap := func(pkt []byte, dropped bool) { c.Observe(pkt, down, dropped) }
		d.f.tap.Store(&tap)
	}
}

// halt stops the forwarders, waits for them, completes a capture left running and closes the
// wake-up descriptors. It is called once.
func (p *fwdPair) halt() {
	p.stop.Store(true)
	p.down.interrupt()
	p.up.interrupt()
	p.wg.Wait()
	if p.cap != nil {
		p.stopCapture(nil) // a capture left running: complete its file
	}
	unix.Close(p.down.wake)
	unix.Close(p.up.wake)
}
